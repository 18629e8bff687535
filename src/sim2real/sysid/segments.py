"""Cut resampled logs into equal-length segments for multiple shooting: each starts from the
measured state and is driven by the logged controls (with some earlier controls kept for the
action delay)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from sim2real.core.errors import InputError
from sim2real.sim.logs import RobotLog
from sim2real.sim.model import SimModel


@dataclass
class Segments:
    """S segments of T steps. ``qpos0`` (S, nq), ``qvel0`` (S, nv): initial states (joints not in
    the log at the model's ``qpos0`` and at rest); ``ctrl`` (S, hist + T + hist, nu): the
    segment's controls with ``hist`` earlier and later ones (for the action delay); ``meas_q`` /
    ``meas_v`` (S, T + 1, J) measured positions / velocities of the logged joints, whose
    qpos / dof addresses are ``q_adr`` / ``v_adr`` (J,); ``log_index`` (S,) and ``t0_s`` (S,)
    say where each segment comes from."""

    qpos0: np.ndarray
    qvel0: np.ndarray
    ctrl: np.ndarray
    meas_q: np.ndarray
    meas_v: np.ndarray
    q_adr: np.ndarray
    v_adr: np.ndarray
    log_index: np.ndarray
    t0_s: np.ndarray
    steps: int
    hist: int
    dt_s: float

    def __len__(self) -> int:
        return int(self.qpos0.shape[0])

    def subset(self, rows: np.ndarray) -> Segments:
        return Segments(
            self.qpos0[rows],
            self.qvel0[rows],
            self.ctrl[rows],
            self.meas_q[rows],
            self.meas_v[rows],
            self.q_adr,
            self.v_adr,
            self.log_index[rows],
            self.t0_s[rows],
            self.steps,
            self.hist,
            self.dt_s,
        )


def make_segments(
    sim: SimModel,
    logs: list[RobotLog],
    segment_s: float,
    *,
    stride_s: float | None = None,
    hist_s: float = 0.05,
    state_filter_s: float = 0.05,
) -> Segments:
    """Segments of ``segment_s`` every ``stride_s`` (default: ``segment_s``, no overlap) from
    logs already resampled to the model timestep; none crosses a gap.

    Initial states come from a centred Savitzky-Golay fit (quadratic, ``state_filter_s`` wide)
    of the measured positions: position and its derivative at the segment start. Logged
    velocities of real robots are often noisy differences of encoder counts, and an error in
    the initial velocity grows linearly through the whole segment. 0 uses the raw samples."""
    if not logs:
        raise InputError("--log", None, "no logs given")
    dt = float(sim.model.opt.timestep)
    for log in logs:
        if log.dt_s is None or abs(log.dt_s - dt) > 1e-12:
            raise ValueError("logs must be resampled to the model timestep first")
    joints = logs[0].joints
    addr = [sim.joint_index(j, logs[0].source) for j in joints]
    q_adr = np.array([a[0] for a in addr])
    v_adr = np.array([a[1] for a in addr])
    act_idx = [sim.actuator_index(a, logs[0].source) for a in logs[0].actuators]
    T = max(1, round(segment_s / dt))
    stride = max(1, round((stride_s or segment_s) / dt))
    H = max(0, round(hist_s / dt))
    m = sim.model
    rows: dict[str, list] = {k: [] for k in ("q0", "v0", "u", "mq", "mv", "li", "t0")}
    for li, log in enumerate(logs):
        if log.joints != joints or log.actuators != logs[0].actuators:
            raise InputError(log.source, None, "all logs need the same joints and actuators")
        n = log.time_s.size
        q_init, v_init = _initial_states(log, state_filter_s, dt)
        invalid = np.concatenate([[0], np.cumsum(~log.valid)])
        for s in range(0, n - T, stride):
            if invalid[s + T + 1] - invalid[s] > 0:
                continue
            q0 = m.qpos0.copy()
            q0[q_adr] = q_init[s]
            v0 = np.zeros(m.nv)
            v0[v_adr] = v_init[s]
            u = np.zeros((H + T + H, m.nu))
            idx = np.clip(np.arange(s - H, s + T + H), 0, n - 1)
            u[:, act_idx] = log.ctrl[idx]
            rows["q0"].append(q0)
            rows["v0"].append(v0)
            rows["u"].append(u)
            rows["mq"].append(log.qpos[s : s + T + 1])
            rows["mv"].append(log.qvel[s : s + T + 1])
            rows["li"].append(li)
            rows["t0"].append(log.time_s[s])
    if not rows["q0"]:
        raise InputError(
            logs[0].source, None, f"no segment of {segment_s} s fits in the logs (too short?)"
        )
    return Segments(
        np.array(rows["q0"]),
        np.array(rows["v0"]),
        np.array(rows["u"]),
        np.array(rows["mq"]),
        np.array(rows["mv"]),
        q_adr,
        v_adr,
        np.array(rows["li"]),
        np.array(rows["t0"]),
        T,
        H,
        dt,
    )


def smoothed_states(
    log: RobotLog, width_s: float, dt: float
) -> tuple[np.ndarray, np.ndarray] | None:
    """(N, J) positions and velocities of a log resampled to ``dt`` from a centred
    Savitzky-Golay fit (quadratic, ``width_s`` wide) of its positions alone: the velocity of a
    log without (or with a noisy) velocity. None when the window holds fewer than 5 samples or
    the log is not longer than it."""
    win = round(width_s / dt) | 1
    if width_s <= 0 or win < 5 or log.time_s.size <= win:
        return None
    from scipy.signal import savgol_filter

    q = savgol_filter(log.qpos, win, 2, axis=0, mode="interp")
    v = savgol_filter(log.qpos, win, 2, deriv=1, delta=dt, axis=0, mode="interp")
    return q, v


def _initial_states(log: RobotLog, width_s: float, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """(N, J) smoothed positions and velocities (raw samples when the window is too short)."""
    states = smoothed_states(log, width_s, dt)
    return (log.qpos, log.qvel) if states is None else states


_PER_SEGMENT = ("qpos0", "qvel0", "ctrl", "meas_q", "meas_v", "t0_s")


def concat_segments(parts: list[Segments], log_rows: list[np.ndarray]) -> Segments:
    """Segments of groups of logs as one (``log_rows[g]``: the indices, in the full list, of
    the logs ``parts[g]`` was cut from), so ``log_index`` points into the full list."""
    joined = {k: np.concatenate([getattr(p, k) for p in parts]) for k in _PER_SEGMENT}
    log_index = [rows[p.log_index] for p, rows in zip(parts, log_rows, strict=True)]
    return replace(parts[0], **joined, log_index=np.concatenate(log_index))
