"""The 1-DoF pendulum bench (a mass on the servo horn, position 0 hanging down) simulated
with an actuator model in the loop, in numpy, vectorised over candidate parameter sets and
logs. Semi-implicit Euler at the log's step (the same scheme as MuJoCo's ``Euler``
integrator; a test cross-checks it against MuJoCo).

Inertia: ``mass * length^2 + armature``; gravity torque ``-mass g length sin(q)``.
"""

from __future__ import annotations

import numpy as np

from sim2real.actuators.models import ActuatorState
from sim2real.actuators.servo_log import ServoLog

G = 9.81
DIVERGED_RAD = 10.0


def _stack(logs: list[ServoLog], name: str) -> np.ndarray:
    """(L, T) array of a per-sample field, padded with each log's last value."""
    T = max(len(log.t_s) for log in logs)
    out = np.empty((len(logs), T))
    for i, log in enumerate(logs):
        a = getattr(log, name)
        out[i, : len(a)] = a
        out[i, len(a) :] = a[-1]
    return out


def simulate(cfg, logs: list[ServoLog], values: dict | None = None) -> np.ndarray:
    """Predicted positions (N, L, T) [rad]: logs padded to the longest (T samples).

    ``values`` maps parameter names to scalars or ``(N,)`` arrays (N candidates); default:
    the config's values. Each log starts at its measured position and speed and is driven by
    its goal positions (held between samples); torque is off where the log says so."""
    base = cfg.values()
    vals = dict(base, **(values or {}))
    n = max([np.size(v) for v in vals.values()] + [1])
    p = {
        k: np.broadcast_to(np.asarray(v, dtype=float).reshape(-1, 1), (n, 1))
        for k, v in vals.items()
    }
    act = cfg.build(p)
    goal, en = _stack(logs, "goal_rad"), _stack(logs, "enabled").astype(bool)
    dt = logs[0].dt_s
    m = np.array([log.mass_kg for log in logs])
    ln = np.array([log.length_m for log in logs])
    mgl = m * G * ln
    inertia = m * ln**2 + p["armature_kgm2"]  # (N, L)
    state = ActuatorState(
        dt_s=dt,
        kp_fw=np.array([log.kp_fw for log in logs]),
        vin_V=np.array([log.vin_V for log in logs]),
        inertia_kgm2=inertia,
    )
    q = np.broadcast_to(np.array([log.q_rad[0] for log in logs]), inertia.shape).copy()
    qd = np.broadcast_to(np.array([log.qd_rad_s[0] for log in logs]), inertia.shape).copy()
    T = goal.shape[1]
    out = np.empty((n, len(logs), T))
    with np.errstate(all="ignore"):  # unstable candidates diverge; mae() scores them
        _rollout(act, state, goal, en, q, qd, mgl, inertia, dt, out)
    return out


def _rollout(act, state, goal, en, q, qd, mgl, inertia, dt, out) -> None:
    for k in range(goal.shape[1]):
        out[:, :, k] = q
        state.tau_ext_Nm = -mgl * np.sin(q)
        state.enabled = en[:, k]
        tau = act.torque(goal[:, k], q, qd, state)
        qd = qd + dt * (tau + state.tau_ext_Nm) / inertia
        q = q + dt * qd


def mae(pred: np.ndarray, logs: list[ServoLog]) -> np.ndarray:
    """(N,) mean absolute position error [rad] over the torque-enabled samples of all logs;
    ``DIVERGED_RAD`` for a simulation that diverged (explicit Euler with too much back-EMF
    damping for the inertia)."""
    meas = _stack(logs, "q_rad")
    mask = _stack(logs, "enabled").astype(bool)
    for i, log in enumerate(logs):
        mask[i, len(log.t_s) :] = False
    with np.errstate(invalid="ignore", over="ignore"):
        # where, not a product: a short log's padded tail may run off to inf, and inf * 0 is
        # NaN, which would score a candidate as diverged for samples that are not its own
        err = np.where(mask[None], np.abs(pred - meas[None]), 0.0)
    cost = err.sum(axis=(1, 2)) / mask.sum()
    return np.where(np.isfinite(cost), cost, DIVERGED_RAD)
