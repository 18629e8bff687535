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

from sim2real.params.space import JointPrior, Param, ParamSpace, Prior
from sim2real.sim.model import SimModel
from sim2real.sysid.gain import record_kp


def fitted_mjcf(
    sim: SimModel,
    space: ParamSpace,
    values: np.ndarray,
    ctrl_abs_max: np.ndarray | None = None,
    *,
    kp: float | None = None,
) -> tuple[str, dict, list[str]]:
    """(MJCF text, sidecar dict, notes on approximations). ``ctrl_abs_max`` (nu,): largest
    logged |ctrl| per actuator; control ranges are widened to 1.25 x that, never narrowed.
    ``kp``: the controller gain of the fitted logs, recorded in the MJCF (see :mod:`gain`)."""
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
                # a joint torque: the actuator's force reaches the joint times its gear
                model.actuator_biasprm[act, 0] += extras.offset_Nm[k] / model.actuator_gear[act, 0]
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
    for a, actuator in enumerate(spec.actuators):  # copy_back leaves the bias type out: an
        actuator.biastype = model.actuator_biastype[a]  # affine bias in a <motor> was lost
    if kp is not None:
        record_kp(spec, kp)
    text = spec.to_xml()
    sidecar = {
        "about": "exact terms MuJoCo lacks; sim2real's loader applies them to the MJCF beside",
        "native": native,
        "extras": extras.to_dict(dofs),
    }
    return text, sidecar, notes


def is_torque_actuator(model: mujoco.MjModel, a: int) -> bool:
    """A fixed gain on a joint, no position term in its bias (not a servo): ctrl x gain x gear
    is a torque on the joint."""
    return bool(
        model.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT
        and model.actuator_gaintype[a] == mujoco.mjtGain.mjGAIN_FIXED
        and np.isclose(model.actuator_biasprm[a, 1], 0.0)
    )


def _torque_actuator(model: mujoco.MjModel, joint: int) -> int | None:
    for a in range(model.nu):
        if is_torque_actuator(model, a) and model.actuator_trnid[a, 0] == joint:
            return a
    return None


def dr_space(
    space: ParamSpace,
    values: np.ndarray,
    cov_unit: np.ndarray | None,
    unidentified: np.ndarray | None = None,
    *,
    n_sigma: float = 4.0,
    min_rel_width: float = 0.02,
    prior_std_unit: float = 0.25,
) -> ParamSpace:
    """Randomization from the fit: the free parameters drawn together from a normal with the
    fit's covariance (``joint``, in scale coordinates: the log of log-scale parameters), so
    combinations the logs pin stay pinned and the rest varies as much as the logs allow.

    ``cov_unit`` (F, F): covariance of the free parameters' unit coordinates;
    ``unidentified`` (F, K): directions the logs do not pin, drawn with the spec's breadth
    (``prior_std_unit`` of the whole range, 1-sigma) instead. A parameter fitted at a bound
    is left out of the joint draw (drawn alone from its marginal). Per parameter: nominal = fitted
    value, bounds = value +- ``n_sigma`` std (at least +- ``min_rel_width`` of the value, or
    of the spec's range for values near 0), clipped to the spec's bounds, and the marginal as
    its prior (normal; log_normal for log-scale parameters). Fixed parameters stay fixed."""
    free = np.flatnonzero(space.free_mask())
    F = len(free)
    cov = np.zeros((F, F)) if cov_unit is None else np.array(cov_unit, dtype=float)
    if unidentified is not None and unidentified.size:
        cov = cov + prior_std_unit**2 * unidentified @ unidentified.T
    log = np.array([space.params[j].scale == "log" for j in free], dtype=bool)
    lo, hi = space.lower()[free], space.upper()[free]
    span = np.where(log, np.log(np.where(log, hi, 2.0) / np.where(log, lo, 1.0)), hi - lo)
    cov_scale = cov * np.outer(span, span)
    std_scale = np.sqrt(np.clip(np.diag(cov_scale), 0.0, None))
    params = [p.model_copy(update={"nominal": float(v)}) for p, v in zip(space.params, values, strict=True)]  # fmt: skip
    for k, j in enumerate(free):
        p, v, s = space.params[j], float(values[j]), float(std_scale[k])
        floor = min_rel_width * max(abs(v), 0.05 * (hi[k] - lo[k]))
        if log[k]:
            b = (v * np.exp(-n_sigma * s), v * np.exp(n_sigma * s))
            b = (min(b[0], v - floor), max(b[1], v + floor))
        else:
            half = max(n_sigma * s, floor)
            b = (v - half, v + half)
        b = (float(max(lo[k], b[0])), float(min(hi[k], b[1])))
        prior = (
            Prior(kind="log_normal", mean=v, std=max(s, floor / max(v, 1e-300) / n_sigma))
            if log[k]
            else Prior(kind="normal", mean=v, std=max(s, floor / n_sigma))
        )
        params[j] = Param(
            name=p.name, target=p.target, nominal=v, bounds=b, scale=p.scale, prior=prior,
            description=f"fitted, 1-sigma {s:.3g} in {'ln ' if log[k] else ''}{p.name}",
        )  # fmt: skip
    # a parameter fitted at a bound is drawn alone (its marginal, truncated there): in the joint
    # draw the rejections at its bound would narrow every parameter correlated with it
    u = space.to_unit(values)[free]
    inside = (u > 1e-6) & (u < 1.0 - 1e-6)
    keep = np.flatnonzero((std_scale > 0) & inside)
    joint = None
    if keep.size:
        v = np.asarray(values, dtype=float)[free]
        mean = np.where(log, np.log(np.where(log, np.maximum(v, 1e-300), 1.0)), v)
        joint = JointPrior(
            names=[space.params[free[k]].name for k in keep],
            mean=[float(mean[k]) for k in keep],
            cov=cov_scale[np.ix_(keep, keep)].tolist(),
        )
    return ParamSpace(params=params, joint=joint)


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
