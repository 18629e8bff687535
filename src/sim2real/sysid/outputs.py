"""Outputs of an identification: a standalone MJCF with the identified values written in
(loadable by plain ``mujoco.MjModel.from_xml_path``), a sidecar YAML with the terms MuJoCo
lacks, the parameters with their uncertainty, and randomization ranges (``dr.yaml``).

In the MJCF, terms with a MuJoCo equivalent are written as such: extra viscous friction is
added to ``damping`` and a constant torque offset to the bias of the joint's torque actuator
(exact); smooth Coulomb friction becomes ``frictionloss`` (approximate: MuJoCo's is a hard,
constraint-based Coulomb friction); Stribeck friction and the action delay have no equivalent
and are left out. The sidecar keeps them exactly and restores the native values the
approximations changed, for :func:`sim2real.sim.model.load_sim_model`.
"""

from __future__ import annotations

import copy

import mujoco
import numpy as np

from sim2real.params.space import Param, ParamSpace, Prior
from sim2real.sim.model import SimModel


def fitted_mjcf(
    sim: SimModel, space: ParamSpace, values: np.ndarray, ctrl_abs_max: np.ndarray | None = None
) -> tuple[str, dict, list[str]]:
    """(MJCF text, sidecar dict, notes on approximations). ``ctrl_abs_max`` (nu,): largest
    logged |ctrl| per actuator; control ranges are widened to 1.25 x that, never narrowed."""
    model, extras = sim.instantiate(space, values)
    dofs = sim.dof_names
    native: dict[str, float] = {}
    notes: list[str] = []
    for k, name in enumerate(dofs):
        if extras.viscous_Nm_s[k]:
            model.dof_damping[k] += extras.viscous_Nm_s[k]
            extras.viscous_Nm_s[k] = 0.0
        if extras.offset_Nm[k]:
            act = _torque_actuator(model, int(model.dof_jntid[k]))
            if act is not None:
                if model.actuator_biastype[act] == mujoco.mjtBias.mjBIAS_NONE:
                    model.actuator_biastype[act] = mujoco.mjtBias.mjBIAS_AFFINE
                    model.actuator_biasprm[act, :] = 0.0
                model.actuator_biasprm[act, 0] += extras.offset_Nm[k]
                extras.offset_Nm[k] = 0.0
            else:
                notes.append(f"torque offset of {name} left out of the MJCF (no torque actuator)")
        if extras.coulomb_Nm[k]:
            native[f"joint.frictionloss:{name}"] = float(model.dof_frictionloss[k])
            model.dof_frictionloss[k] += extras.coulomb_Nm[k]
            notes.append(f"smooth Coulomb friction of {name} written as frictionloss (approximate)")
        if extras.stribeck_Nm[k]:
            notes.append(f"Stribeck friction of {name} left out of the MJCF (sidecar only)")
    if extras.delay_s:
        notes.append(f"action delay {1e3 * extras.delay_s:.1f} ms left out of the MJCF (sidecar)")
    if ctrl_abs_max is not None:
        for a in range(model.nu):
            need = 1.25 * float(ctrl_abs_max[a])
            lo, hi = model.actuator_ctrlrange[a]
            if model.actuator_ctrllimited[a] and (lo > -need or hi < need):
                model.actuator_ctrlrange[a] = (min(lo, -need), max(hi, need))
    spec = sim.spec.copy()
    spec.copy_back(model)
    text = spec.to_xml()
    sidecar = {
        "about": "exact terms MuJoCo lacks; sim2real's loader applies them to the MJCF beside",
        "native": native,
        "extras": extras.to_dict(dofs),
    }
    return text, sidecar, notes


def _torque_actuator(model: mujoco.MjModel, joint: int) -> int | None:
    for a in range(model.nu):
        if (
            model.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT
            and model.actuator_trnid[a, 0] == joint
            and model.actuator_gaintype[a] == mujoco.mjtGain.mjGAIN_FIXED
            and np.isclose(model.actuator_biasprm[a, 1], 0.0)
        ):
            return a
    return None


def dr_space(
    space: ParamSpace,
    values: np.ndarray,
    std: np.ndarray | None,
    *,
    n_sigma: float = 2.0,
    min_rel_width: float = 0.02,
) -> ParamSpace:
    """Randomization ranges from the fit: nominal = fitted value, bounds = value +- n_sigma std
    (at least +- ``min_rel_width`` of the value, or of the spec's range for values near 0),
    clipped to the spec's bounds, with a normal prior (value, std). Fixed parameters stay
    fixed."""
    std = np.zeros(len(space)) if std is None else np.asarray(std)
    params = []
    for p, v, s in zip(space.params, values, std, strict=True):
        lo, hi = p.bounds
        if not p.free:
            params.append(p.model_copy(update={"nominal": float(v)}))
            continue
        floor = min_rel_width * max(abs(v), 0.05 * (hi - lo))
        half = max(n_sigma * float(s), floor)
        b = (float(max(lo, v - half)), float(min(hi, v + half)))
        prior = Prior(kind="normal", mean=float(v), std=float(max(s, half / n_sigma)))
        params.append(
            Param(
                name=p.name,
                target=p.target,
                nominal=float(v),
                bounds=b,
                scale=p.scale if b[0] > 0 or p.scale == "linear" else "linear",
                prior=prior,
                description=f"fitted +- {n_sigma:g} std (std {s:.3g})",
            )
        )
    return ParamSpace(params=params)


def derived_quantities(sim: SimModel, space: ParamSpace, values: np.ndarray) -> dict[str, float]:
    """For single-dof models: inertia about the axis J (with armature) [kg m^2] and first
    moment m cx = gravity torque at 90 deg / g [kg m], computed by MuJoCo (comparable with
    rigid-pendulum identifications)."""
    if sim.model.nv != 1:
        return {}
    model, _ = sim.instantiate(space, values)
    model = copy.copy(model)
    d = mujoco.MjData(model)
    d.qpos[:] = model.qpos0
    d.qpos[0] += np.pi / 2
    mujoco.mj_forward(model, d)
    g = float(np.linalg.norm(model.opt.gravity))
    res = np.zeros(1)
    mujoco.mj_mulM(model, d, res, np.ones(1))
    J = float(res[0])
    mcx = float(abs(d.qfrc_bias[0]) / g) if g > 0 else float("nan")
    return {"J_kg_m2": J, "m_cx_kg_m": mcx}
