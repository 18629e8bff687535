"""``SimModel``: a MuJoCo model (MJCF, or URDF through MuJoCo's compiler) whose physical
parameters are written by name through a :class:`~sim2real.params.ParamSpace`, plus the
per-step :class:`~sim2real.sim.extra.ExtraTerms`.

``instantiate(values)`` gives an independent ``MjModel`` copy with the values written in;
``apply(model, extras, values)`` writes into existing copies (the batched simulation keeps a
pool). Every handle writes absolute values, so re-applying to a used copy is exact.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path

import mujoco
import numpy as np

from sim2real.core.errors import InputError
from sim2real.core.yaml_io import read_yaml
from sim2real.params.space import ParamSpace
from sim2real.sim.extra import ExtraTerms
from sim2real.sim.names import NameMap, rename_elements
from sim2real.sim.targets import Handle, resolve_target
from sim2real.sim.urdf import read_urdf

SIDECAR_SUFFIX = ".sidecar.yaml"


@dataclass
class SimModel:
    """A compiled base model, its editable spec, and the base extra terms (all zero unless a
    sidecar said otherwise)."""

    spec: mujoco.MjSpec
    model: mujoco.MjModel
    source: str
    extras: ExtraTerms
    notes: list[str] = field(default_factory=list)

    @property
    def dof_names(self) -> list[str]:
        """(nv,) name of the joint that owns each dof."""
        return [
            mujoco.mj_id2name(self.model, mujoco.mjtObj.mjOBJ_JOINT, int(j)) or f"dof{k}"
            for k, j in enumerate(self.model.dof_jntid)
        ]

    def joint_index(self, name: str, source: str | None = None) -> tuple[int, int]:
        """(qpos address, dof address) of a hinge or slide joint."""
        j = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_JOINT, name)
        if j < 0 or self.model.jnt_type[j] not in (2, 3):
            import difflib

            names = [n for n in self.dof_names if n]
            close = difflib.get_close_matches(name, names, n=3, cutoff=0.4)
            hint = f"; close matches: {', '.join(close)}" if close else ""
            raise InputError(source, name, f"no hinge or slide joint {name!r} in the model{hint}")
        return int(self.model.jnt_qposadr[j]), int(self.model.jnt_dofadr[j])

    def actuator_index(self, name: str, source: str | None = None) -> int:
        a = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_ACTUATOR, name)
        if a < 0:
            import difflib

            names = [
                mujoco.mj_id2name(self.model, mujoco.mjtObj.mjOBJ_ACTUATOR, i) or ""
                for i in range(self.model.nu)
            ]
            close = difflib.get_close_matches(name, names, n=3, cutoff=0.4)
            hint = f"; close matches: {', '.join(close)}" if close else ""
            raise InputError(source, name, f"no actuator {name!r} in the model{hint}")
        return int(a)

    def resolve(self, space: ParamSpace, source: str | None = None) -> list[Handle]:
        """One handle per parameter; unknown names raise ``InputError`` with close matches."""
        return [resolve_target(self.model, p.target, source) for p in space.params]

    def new_copy(self) -> tuple[mujoco.MjModel, ExtraTerms]:
        return copy.copy(self.model), self.extras.copy()

    @staticmethod
    def apply(
        model: mujoco.MjModel, extras: ExtraTerms, handles: list[Handle], values: np.ndarray
    ) -> None:
        """Write (P,) values through the handles into ``model`` and ``extras`` in place."""
        for h, v in zip(handles, np.asarray(values, dtype=float), strict=True):
            h.apply(model, extras, v)
        refresh_simple_bodies(model)

    def instantiate(
        self, space: ParamSpace, values: np.ndarray | None = None
    ) -> tuple[mujoco.MjModel, ExtraTerms]:
        """A new model copy and extras with ``values`` (default: the nominal) written in."""
        model, extras = self.new_copy()
        handles = self.resolve(space)
        self.apply(model, extras, handles, space.nominal() if values is None else values)
        return model, extras

    def read(self, space: ParamSpace, model: mujoco.MjModel | None = None) -> np.ndarray:
        """(P,) the values the model currently holds for each parameter."""
        model = self.model if model is None else model
        return np.array([h.read(model, self.extras) for h in self.resolve(space)])


def refresh_simple_bodies(model: mujoco.MjModel) -> None:
    """Recompute the model's constants (``mj_setConst``) when it has "simple" dofs: MuJoCo
    takes their constant diagonal mass matrix from ``dof_M0``, computed when compiling, so a
    mass, inertia or armature written afterwards on such a body (a rotor turning about its
    centre of mass, a cart on a slider) would not act at all. Models without them (the
    built-in ones) are left untouched."""
    if model.dof_simplenum.any():
        mujoco.mj_setConst(model, mujoco.MjData(model))


def ensure_actuators(spec: mujoco.MjSpec, joint_names: list[str]) -> list[str]:
    """Add a torque actuator (``general``, gain 1, gear 1, affine bias 0, named as the joint)
    for each named joint no actuator drives yet; returns the names added."""
    driven = {a.target for a in spec.actuators}
    added = []
    for name in joint_names:
        if name in driven or spec.joint(name) is None:
            continue
        act = spec.add_actuator()
        act.name = name
        act.target = name
        act.trntype = mujoco.mjtTrn.mjTRN_JOINT
        act.gainprm[0] = 1.0
        act.biastype = mujoco.mjtBias.mjBIAS_AFFINE
        added.append(name)
    return added


def load_sim_model(
    path: str | Path, *, drive_joints: list[str] | None = None, names: NameMap | None = None
) -> SimModel:
    """Load MJCF or URDF at ``path``. ``names``: joints and bodies read under other names
    (:mod:`sim2real.sim.names`), renamed before anything else reads them. ``drive_joints``
    (by those names): joints that must have a torque actuator (added, named as the joint, when
    the file has none: a URDF has none). A ``<stem>.sidecar.yaml`` beside the file (written by
    ``sysid fit``) restores the exact extra terms."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, None, "model file not found")
    urdf = path.suffix.lower() == ".urdf"
    try:
        spec, notes = read_urdf(path) if urdf else (mujoco.MjSpec.from_file(str(path)), [])
    except Exception as err:  # mujoco raises ValueError with the compiler's message
        raise InputError(path, None, f"MuJoCo could not read the model: {err}") from None
    if names is not None:
        notes += rename_elements(spec, names)
    added = ensure_actuators(spec, drive_joints or [])
    if added:
        notes.append(f"added torque actuators for {', '.join(added)}")
    try:
        model = spec.compile()
    except Exception as err:
        raise InputError(path, None, f"MuJoCo could not compile the model: {err}") from None
    sim = SimModel(spec, model, str(path), ExtraTerms(model.nv), notes)
    sidecar = path.with_name(path.stem + SIDECAR_SUFFIX)
    if sidecar.is_file():
        apply_sidecar(sim, sidecar, names)
    return sim


def apply_sidecar(sim: SimModel, path: Path, names: NameMap | None = None) -> None:
    """Undo the MJCF approximations (``native`` targets back to their exact values) and set the
    exact extra terms recorded by ``sysid fit`` (in the file's own names: with ``names``, read
    as the model is)."""
    data = read_yaml(path, "sidecar") or {}
    if not isinstance(data, dict):
        raise InputError(path, None, "expected a mapping with native and extras")
    names = names or NameMap()
    for target, value in (data.get("native") or {}).items():
        handle = resolve_target(sim.model, names.target(target), str(path))
        handle.apply(sim.model, sim.extras, float(value))
    refresh_simple_bodies(sim.model)
    extras = {
        term: {names.joint(j): v for j, v in per.items()} if isinstance(per, dict) else per
        for term, per in (data.get("extras") or {}).items()
    }
    sim.extras = ExtraTerms.from_dict(extras, sim.dof_names)
    sim.notes.append(f"exact terms from {path.name}")


def sim_model_from_xml(text: str, source: str = "<xml>") -> SimModel:
    """A plain model from MJCF text (no sidecar): what a plain MuJoCo user gets."""
    spec = mujoco.MjSpec.from_string(text)
    model = spec.compile()
    return SimModel(spec, model, source, ExtraTerms(model.nv))
