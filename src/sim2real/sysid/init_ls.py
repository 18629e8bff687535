"""Linear least-squares initializer from inverse dynamics.

Rigid-body dynamics are linear in masses (with fixed centres of mass), inertias, rotor
inertias, viscous and Coulomb friction and constant torques. For each logged sample the
residual of the equation of motion,

    r(theta) = tau_inverse(q, qd, qdd; theta) + frictionloss(theta) * s(qd)
               - extra_torque(qd; theta) - actuator_force(ctrl; theta),

(``tau_inverse`` from ``mj_inverse`` with MuJoCo's friction constraint disabled, s a smooth
sign) is evaluated at the nominal parameters and with each parameter moved by one step; the
parameters whose effect is linear (checked with a second step) form a regressor Y, and the
bounded problem min |Y theta - b| is solved with ``scipy.optimize.lsq_linear``, reweighted
twice with Huber weights. Accelerations come from a Savitzky-Golay derivative of the measured
velocity. Nonlinear parameters (delays, centre-of-mass offsets, ...) stay at their nominal.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np
from scipy.optimize import lsq_linear
from scipy.signal import savgol_filter

from sim2real.params.space import ParamSpace
from sim2real.sim.logs import RobotLog
from sim2real.sim.model import SimModel
from sim2real.sim.targets import NONLINEAR_FIELDS


@dataclass
class LinearInit:
    """``values`` (P,) initial values (nominal where not linear); ``linear`` (P,) bool which
    were solved; ``rms_residual_Nm``: rms torque residual of the solution."""

    values: np.ndarray
    linear: np.ndarray
    rms_residual_Nm: float
    samples: int


def _samples(sim: SimModel, logs: list[RobotLog], max_samples: int, window_s: float):
    qs, vs, as_, us = [], [], [], []
    for log in logs:
        dt = log.dt_s or float(np.median(np.diff(log.time_s)))
        win = max(5, round(window_s / dt) | 1)
        if log.time_s.size <= win:
            continue
        vel = savgol_filter(log.qvel, win, 2, axis=0)
        acc = savgol_filter(log.qvel, win, 2, deriv=1, delta=dt, axis=0)
        pos = savgol_filter(log.qpos, win, 2, axis=0)
        keep = log.valid.copy()
        keep[: win // 2] = keep[-(win // 2) :] = False
        idx = np.flatnonzero(keep)
        qs.append(pos[idx])
        vs.append(vel[idx])
        as_.append(acc[idx])
        us.append(log.ctrl[idx])
    if not qs:
        return None
    q, v, a, u = (np.concatenate(x) for x in (qs, vs, as_, us))
    if len(q) > max_samples:
        pick = np.linspace(0, len(q) - 1, max_samples).astype(int)
        q, v, a, u = q[pick], v[pick], a[pick], u[pick]
    return q, v, a, u


def _residual(
    sim: SimModel, space: ParamSpace, values: np.ndarray, data, joints, acts, smooth_v: float
) -> np.ndarray:
    q, v, a, u = data
    model, extras = sim.instantiate(space, values)
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_FRICTIONLOSS
    d = mujoco.MjData(model)
    q_adr = [sim.joint_index(j)[0] for j in joints]
    v_adr = [sim.joint_index(j)[1] for j in joints]
    a_idx = [sim.actuator_index(n) for n in acts]
    out = np.empty((len(q), len(joints)))
    for k in range(len(q)):
        d.qpos[:] = model.qpos0
        d.qpos[q_adr] = q[k]
        d.qvel[:] = 0.0
        d.qvel[v_adr] = v[k]
        d.qacc[:] = 0.0
        d.qacc[v_adr] = a[k]
        d.ctrl[:] = 0.0
        d.ctrl[a_idx] = u[k]
        mujoco.mj_inverse(model, d)
        mujoco.mj_fwdActuation(model, d)
        fric = model.dof_frictionloss * np.tanh(d.qvel / smooth_v)
        tau = d.qfrc_inverse + fric - extras.friction_torque(d.qvel) - extras.offset_Nm
        out[k] = (tau - d.qfrc_actuator)[v_adr]
    return out.ravel()


def linear_init(
    sim: SimModel,
    space: ParamSpace,
    logs: list[RobotLog],
    *,
    max_samples: int = 3000,
    window_s: float = 0.05,
    smooth_vel_rad_s: float = 0.05,
) -> LinearInit | None:
    """Least-squares values for the linear parameters of ``space`` (None when the logs are too
    short or no parameter is linear)."""
    data = _samples(sim, logs, max_samples, window_s)
    if data is None:
        return None
    joints, acts = logs[0].joints, logs[0].actuators
    theta0 = space.nominal()
    lo, hi = space.lower(), space.upper()
    span = np.where(hi > lo, hi - lo, 1.0)
    step = 0.1 * span
    r0 = _residual(sim, space, theta0, data, joints, acts, smooth_vel_rad_s)
    cols, linear = [], np.zeros(len(space), dtype=bool)
    for j, p in enumerate(space.params):
        if not p.free or p.target.split(":")[0] in NONLINEAR_FIELDS:
            continue
        t1, t2 = theta0.copy(), theta0.copy()
        t1[j] += step[j]
        t2[j] += 2 * step[j]
        r1 = _residual(sim, space, t1, data, joints, acts, smooth_vel_rad_s)
        r2 = _residual(sim, space, t2, data, joints, acts, smooth_vel_rad_s)
        d1, d2 = r1 - r0, r2 - r0
        scale = np.abs(d1).max()
        if scale < 1e-12 or np.abs(d2 - 2 * d1).max() > 1e-6 * max(scale, 1.0):
            continue
        cols.append(d1 / step[j])
        linear[j] = True
    if not cols:
        return None
    Y = np.stack(cols, 1)
    idx = np.flatnonzero(linear)
    b = -r0 + Y @ theta0[idx]  # Y theta - b = residual
    w = np.ones(len(b))
    sol = theta0[idx]
    for _ in range(3):
        fit = lsq_linear(Y * w[:, None], b * w, bounds=(lo[idx], hi[idx]))
        sol = fit.x
        r = Y @ sol - b
        s = 1.4826 * np.median(np.abs(r)) + 1e-9
        w = np.sqrt(np.minimum(1.0, 1.345 * s / np.maximum(np.abs(r), 1e-12)))
    values = theta0.copy()
    values[idx] = sol
    rms = float(np.sqrt(np.mean((Y @ sol - b) ** 2)))
    return LinearInit(values, linear, rms, len(data[0]))
