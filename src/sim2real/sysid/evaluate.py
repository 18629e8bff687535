"""Prediction error of a model on logs, the way the issue measures it: cut each log into
non-overlapping segments of a horizon (0.5 s, 2 s), start each from the measured state, drive
it with the logged controls, and take the RMSE of the simulated positions over all samples
and joints."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim2real.params.space import ParamSpace
from sim2real.sim.logs import RobotLog
from sim2real.sim.model import SimModel
from sim2real.sysid.objective import MultipleShooting, ObjectiveConfig
from sim2real.sysid.segments import Segments, make_segments

HORIZONS_S = (0.5, 2.0)


@dataclass
class HorizonError:
    """``rmse_rad``: pooled over segments, samples and joints; ``per_joint_rad`` (J,);
    ``segments``: how many; ``unstable``: how many diverged (counted with their error);
    ``qpos_sim`` (S, T + 1, J) and ``segs`` kept for plots."""

    horizon_s: float
    rmse_rad: float
    per_joint_rad: np.ndarray
    segments: int
    unstable: int
    qpos_sim: np.ndarray
    segs: Segments

    def rmse_per_log(self) -> dict[int, tuple[float, int]]:
        """Log index -> (RMSE over its segments [rad], its segments): a bad log among good
        ones shows here, not in the pooled figure."""
        err = position_error(self.qpos_sim, self.segs)
        out = {}
        for i in np.unique(self.segs.log_index):
            rows = self.segs.log_index == i
            out[int(i)] = (float(np.sqrt(np.mean(err[rows] ** 2))), int(rows.sum()))
        return out


def hold_still_rmse(segs: Segments) -> float:
    """RMSE [rad] of predicting that every segment stays where it started: what a model must
    beat to say anything of the motion."""
    return float(np.sqrt(np.mean((segs.meas_q[:, 1:] - segs.meas_q[:, :1]) ** 2)))


def worse_than_still(errors: dict[float, HorizonError], what: str) -> list[str]:
    """A warning when the model predicts ``what`` worse than holding still over the shortest
    horizon (a gear, a unit or a column mapped wrong: the fit still 'converges'); longer
    horizons of a swinging robot may diverge from a right model too."""
    if not errors:
        return []
    h = min(errors)
    e, still = errors[h], hold_still_rmse(errors[h].segs)
    if e.rmse_rad <= still:
        return []
    return [f"the model predicts the {what} worse than holding still at {h:g} s "
            f"({e.rmse_rad:.4f} rad against {still:.4f}): a gear, a unit or the mapping?"]  # fmt: skip


def position_error(qpos_sim: np.ndarray, segs: Segments) -> np.ndarray:
    """(S, T, J) simulated minus measured position after each segment's start (pi where the
    simulation diverged)."""
    return np.where(np.isfinite(qpos_sim), qpos_sim - segs.meas_q, np.pi)[:, 1:]


def prediction_errors(
    sim: SimModel,
    space: ParamSpace,
    values: np.ndarray,
    logs: list[RobotLog],
    horizons_s: tuple[float, ...] = HORIZONS_S,
    *,
    nthread: int | None = None,
    state_filter_s: float = 0.05,
) -> dict[float, HorizonError]:
    """RMSE per horizon for one parameter set (logs resampled to the model timestep); a
    horizon longer than every log is skipped."""
    out: dict[float, HorizonError] = {}
    values = np.atleast_1d(np.asarray(values, dtype=float))
    delays = [sim.extras.delay_s] + [v for p, v in zip(space.params, values, strict=True)
                                     if p.target == "extra.delay_s"]  # fmt: skip
    hist_s = max(0.05, max(delays) + 2 * float(sim.model.opt.timestep))
    for h in horizons_s:
        try:
            segs = make_segments(sim, logs, h, stride_s=h, state_filter_s=state_filter_s,
                                 hist_s=hist_s)  # fmt: skip
        except Exception:  # no segment of this length fits
            continue
        obj = MultipleShooting(sim, space, segs, ObjectiveConfig(segment_s=h), nthread=nthread)
        ev = obj.evaluate(np.atleast_2d(values))
        out[h] = horizon_error(h, ev.qpos[0], segs, int(ev.unstable[0].sum()))
    return out


def horizon_error(h: float, qpos_sim: np.ndarray, segs: Segments, unstable: int) -> HorizonError:
    """The errors of simulated positions ``qpos_sim`` (S, T + 1, nq-logged) on ``segs``."""
    err = position_error(qpos_sim, segs)
    return HorizonError(
        h,
        float(np.sqrt(np.mean(err**2))),
        np.sqrt(np.mean(err**2, axis=(0, 1))),
        len(segs),
        unstable,
        qpos_sim,
        segs,
    )
