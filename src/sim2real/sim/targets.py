"""Parameter handles: a target string ``"<field>:<name pattern>"`` resolved against a MuJoCo
model's element names (``fnmatch`` patterns, never indices) into a handle that writes one
scalar into the model's own arrays, or into the per-step :class:`ExtraTerms`.

Fields (SI units):

==========================  ==============================================================
``body.mass``               ``body_mass`` [kg]
``body.inertia``            all three principal moments ``body_inertia`` [kg m^2]
``body.inertia_x|y|z``      one principal moment [kg m^2]
``body.inertia_scale``      factor on the nominal ``body_inertia`` [-]
``body.com_x|y|z``          centre-of-mass offset ``body_ipos`` in the body frame [m]
``joint.damping``           viscous ``dof_damping`` [N m s/rad]
``joint.armature``          rotor inertia ``dof_armature`` [kg m^2]
``joint.frictionloss``      Coulomb ``dof_frictionloss`` [N m]
``joint.stiffness``         ``jnt_stiffness`` [N m/rad]
``geom.friction``           sliding ``geom_friction[:, 0]`` [-]
``actuator.gain``           ``actuator_gainprm[:, 0]`` (and ``-biasprm[:, 1]`` for position
                            servos, whose bias mirrors the gain)
``actuator.bias``           constant ``actuator_biasprm[:, 0]`` [N m] (bias made affine)
``actuator.bias_vel``       velocity term ``actuator_biasprm[:, 2]`` [N m s/rad]
``actuator.ctrl_limit``     symmetric ``actuator_ctrlrange`` [ctrl unit]
``actuator.force_limit``    symmetric ``actuator_forcerange`` [N m]
``option.gravity``          magnitude of ``opt.gravity`` along -z [m/s^2] (no pattern)
``option.timestep``         ``opt.timestep`` [s] (no pattern)
``extra.delay_s``           action delay [s] (no pattern)
``extra.coulomb``           smooth Coulomb torque (2/pi) atan(qd / v_s) [N m], per joint
``extra.viscous``           viscous torque [N m s/rad], per joint
``extra.stribeck``          Stribeck excess of static over Coulomb friction [N m]
``extra.stribeck_vel``      Stribeck velocity [rad/s]
``extra.offset``            constant torque added to the joint [N m]
``extra.pos_noise``         observation noise std on the position [rad]
``extra.vel_noise``         observation noise std on the velocity [rad/s]
==========================  ==============================================================
"""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Callable
from dataclasses import dataclass

import mujoco
import numpy as np

from sim2real.core.errors import InputError
from sim2real.sim.extra import ExtraTerms

_OBJ = {
    "body": mujoco.mjtObj.mjOBJ_BODY,
    "joint": mujoco.mjtObj.mjOBJ_JOINT,
    "geom": mujoco.mjtObj.mjOBJ_GEOM,
    "actuator": mujoco.mjtObj.mjOBJ_ACTUATOR,
    "extra": mujoco.mjtObj.mjOBJ_JOINT,
}
_COUNT = {"body": "nbody", "joint": "njnt", "geom": "ngeom", "actuator": "nu", "extra": "njnt"}

Setter = Callable[[mujoco.MjModel, ExtraTerms, int, float, np.ndarray], None]
"""(model, extras, element id, value, nominal array row) -> None."""


def _dof(m: mujoco.MjModel, j: int) -> int:
    return int(m.jnt_dofadr[j])


def _set_inertia(axis: int | None) -> Setter:
    def setter(m, e, i, v, nom):
        if axis is None:
            m.body_inertia[i, :] = v
        else:
            m.body_inertia[i, axis] = v

    return setter


def _set_com(axis: int) -> Setter:
    def setter(m, e, i, v, nom):
        m.body_ipos[i, axis] = v

    return setter


def _set_gain(m, e, i, v, nom):
    old = float(m.actuator_gainprm[i, 0])
    m.actuator_gainprm[i, 0] = v
    # position servos (and any actuator whose bias mirrors the gain) keep biasprm1 = -gain
    if m.actuator_biastype[i] == mujoco.mjtBias.mjBIAS_AFFINE and np.isclose(
        m.actuator_biasprm[i, 1], -old
    ):
        m.actuator_biasprm[i, 1] = -v


def _set_bias(m, e, i, v, nom):
    if m.actuator_biastype[i] == mujoco.mjtBias.mjBIAS_NONE:
        m.actuator_biastype[i] = mujoco.mjtBias.mjBIAS_AFFINE
        m.actuator_biasprm[i, :] = 0.0
    m.actuator_biasprm[i, 0] = v


def _set_bias_vel(m, e, i, v, nom):
    if m.actuator_biastype[i] == mujoco.mjtBias.mjBIAS_NONE:
        m.actuator_biastype[i] = mujoco.mjtBias.mjBIAS_AFFINE
        m.actuator_biasprm[i, :] = 0.0
    m.actuator_biasprm[i, 2] = v


def _set_ctrl_limit(m, e, i, v, nom):
    m.actuator_ctrlrange[i] = (-v, v)
    m.actuator_ctrllimited[i] = 1


def _set_force_limit(m, e, i, v, nom):
    m.actuator_forcerange[i] = (-v, v)
    m.actuator_forcelimited[i] = 1


def _extra(attr: str) -> Setter:
    def setter(m, e, i, v, nom):
        getattr(e, attr)[_dof(m, i)] = v

    return setter


def _gravity(m, e, i, v, nom):
    m.opt.gravity[:] = (0.0, 0.0, -v)


def _timestep(m, e, i, v, nom):
    m.opt.timestep = v


def _delay(m, e, i, v, nom):
    e.delay_s = v


FIELDS: dict[str, Setter] = {
    "body.mass": lambda m, e, i, v, nom: m.body_mass.__setitem__(i, v),
    "body.inertia": _set_inertia(None),
    "body.inertia_x": _set_inertia(0),
    "body.inertia_y": _set_inertia(1),
    "body.inertia_z": _set_inertia(2),
    "body.inertia_scale": lambda m, e, i, v, nom: m.body_inertia.__setitem__(i, v * nom),
    "body.com_x": _set_com(0),
    "body.com_y": _set_com(1),
    "body.com_z": _set_com(2),
    "joint.damping": lambda m, e, i, v, nom: m.dof_damping.__setitem__(_dof(m, i), v),
    "joint.armature": lambda m, e, i, v, nom: m.dof_armature.__setitem__(_dof(m, i), v),
    "joint.frictionloss": lambda m, e, i, v, nom: m.dof_frictionloss.__setitem__(_dof(m, i), v),
    "joint.stiffness": lambda m, e, i, v, nom: m.jnt_stiffness.__setitem__(i, v),
    "geom.friction": lambda m, e, i, v, nom: m.geom_friction.__setitem__((i, 0), v),
    "actuator.gain": _set_gain,
    "actuator.bias": _set_bias,
    "actuator.bias_vel": _set_bias_vel,
    "actuator.ctrl_limit": _set_ctrl_limit,
    "actuator.force_limit": _set_force_limit,
    "option.gravity": _gravity,
    "option.timestep": _timestep,
    "extra.delay_s": _delay,
    "extra.coulomb": _extra("coulomb_Nm"),
    "extra.viscous": _extra("viscous_Nm_s"),
    "extra.stribeck": _extra("stribeck_Nm"),
    "extra.stribeck_vel": _extra("stribeck_vel_rad_s"),
    "extra.offset": _extra("offset_Nm"),
    "extra.pos_noise": _extra("pos_noise_rad"),
    "extra.vel_noise": _extra("vel_noise_rad_s"),
}
GLOBAL_FIELDS = {"option.gravity", "option.timestep", "extra.delay_s"}
NONLINEAR_FIELDS = {
    "option.timestep",
    "extra.delay_s",
    "extra.stribeck_vel",
    "body.com_x",
    "body.com_y",
    "body.com_z",
}
"""Fields never treated as linear by the least-squares initializer (checked numerically too)."""


@dataclass(frozen=True)
class Handle:
    """A resolved target: ``field`` written for each element id in ``ids``."""

    target: str
    field: str
    ids: tuple[int, ...]
    names: tuple[str, ...]
    nominal: np.ndarray
    """(len(ids), 3) nominal inertia rows for ``body.inertia_scale``, else zeros."""

    def apply(self, model: mujoco.MjModel, extras: ExtraTerms, value: float) -> None:
        setter = FIELDS[self.field]
        for k, i in enumerate(self.ids):
            setter(model, extras, i, float(value), self.nominal[k])

    def read(self, model: mujoco.MjModel, extras: ExtraTerms) -> float:
        """The current value of the first element (for reporting and round trips)."""
        i = self.ids[0]
        f = self.field
        table: dict[str, Callable[[], float]] = {
            "body.mass": lambda: model.body_mass[i],
            "body.inertia": lambda: model.body_inertia[i, 0],
            "body.inertia_x": lambda: model.body_inertia[i, 0],
            "body.inertia_y": lambda: model.body_inertia[i, 1],
            "body.inertia_z": lambda: model.body_inertia[i, 2],
            "body.inertia_scale": lambda: model.body_inertia[i, 0] / self.nominal[0, 0],
            "body.com_x": lambda: model.body_ipos[i, 0],
            "body.com_y": lambda: model.body_ipos[i, 1],
            "body.com_z": lambda: model.body_ipos[i, 2],
            "joint.damping": lambda: model.dof_damping[_dof(model, i)],
            "joint.armature": lambda: model.dof_armature[_dof(model, i)],
            "joint.frictionloss": lambda: model.dof_frictionloss[_dof(model, i)],
            "joint.stiffness": lambda: model.jnt_stiffness[i],
            "geom.friction": lambda: model.geom_friction[i, 0],
            "actuator.gain": lambda: model.actuator_gainprm[i, 0],
            "actuator.bias": lambda: model.actuator_biasprm[i, 0],
            "actuator.bias_vel": lambda: model.actuator_biasprm[i, 2],
            "actuator.ctrl_limit": lambda: model.actuator_ctrlrange[i, 1],
            "actuator.force_limit": lambda: model.actuator_forcerange[i, 1],
            "option.gravity": lambda: -model.opt.gravity[2],
            "option.timestep": lambda: model.opt.timestep,
            "extra.delay_s": lambda: extras.delay_s,
        }
        if f in table:
            return float(table[f]())
        attr = {
            "extra.coulomb": "coulomb_Nm",
            "extra.viscous": "viscous_Nm_s",
            "extra.stribeck": "stribeck_Nm",
            "extra.stribeck_vel": "stribeck_vel_rad_s",
            "extra.offset": "offset_Nm",
            "extra.pos_noise": "pos_noise_rad",
            "extra.vel_noise": "vel_noise_rad_s",
        }[f]
        return float(getattr(extras, attr)[_dof(model, i)])


def element_names(model: mujoco.MjModel, kind: str) -> list[str]:
    obj, count = _OBJ[kind], getattr(model, _COUNT[kind])
    return [mujoco.mj_id2name(model, obj, i) or "" for i in range(count)]


def resolve_target(model: mujoco.MjModel, target: str, source: str | None = None) -> Handle:
    """Parse ``"<field>:<pattern>"`` and find the elements; raises ``InputError`` naming the
    unknown field or the unmatched pattern, with close matches."""
    field, _, pattern = target.partition(":")
    field, pattern = field.strip(), pattern.strip()
    if field not in FIELDS:
        close = difflib.get_close_matches(field, FIELDS, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise InputError(source, target, f"unknown target field {field!r}{hint}")
    if field in GLOBAL_FIELDS:
        return Handle(target, field, (0,), ("",), np.zeros((1, 3)))
    if not pattern:
        raise InputError(source, target, f"{field} needs a name pattern: '{field}:<name>'")
    kind = field.split(".")[0]
    names = element_names(model, kind)
    ids = [i for i, n in enumerate(names) if n and fnmatch.fnmatchcase(n, pattern)]
    if kind == "extra":
        ids = [i for i in ids if model.jnt_type[i] in (2, 3)]  # slide, hinge
    if not ids:
        label = "joint" if kind == "extra" else kind
        named = [n for n in names if n]
        close = difflib.get_close_matches(pattern, named, n=3, cutoff=0.4)
        hint = f"; close matches: {', '.join(close)}" if close else ""
        listed = ", ".join(named[:12]) or "none"
        raise InputError(
            source, target, f"no {label} named {pattern!r} in the model{hint} (names: {listed})"
        )
    nominal = np.zeros((len(ids), 3))
    if field == "body.inertia_scale":
        nominal = np.array([model.body_inertia[i] for i in ids], dtype=float)
    return Handle(target, field, tuple(ids), tuple(names[i] for i in ids), nominal)
