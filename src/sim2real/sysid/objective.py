"""Multiple-shooting residuals: simulate every segment from its measured initial state with the
logged controls and compare positions and velocities with the measurements, for many candidate
parameter sets in one batched rollout.

The residual vector of a parameter set stacks, for every segment, step (after the initial
state) and logged joint, the position error divided by ``pos_scale_rad`` and the velocity
error divided by ``vel_scale_rad_s`` times ``sqrt(vel_weight)``. The cost is the mean Huber
loss of those residuals, huber(e_q, delta) + vel_weight huber(e_v, delta) per sample (scaled
errors e, quadratic up to ``huber_delta``, linear beyond; the weighted velocity residual's
threshold is therefore sqrt(vel_weight) delta): what the least-squares fit
(:mod:`sim2real.sysid.fit`) minimizes. A segment that diverged gets the constant residual
``unstable_residual`` everywhere (a fixed high cost)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pydantic import Field

from sim2real.core.strict import StrictModel
from sim2real.params.space import ParamSpace
from sim2real.sim.batch import BatchSimulator
from sim2real.sim.model import SimModel
from sim2real.sysid.segments import Segments


class ObjectiveConfig(StrictModel):
    """Segments, weights and scales of the multiple-shooting residuals."""

    segment_s: float = Field(0.5, gt=0, description="length of a shooting segment [s]")
    stride_s: float | None = Field(
        None, gt=0, description="start-to-start distance of segments [s] (default: half a segment)"
    )
    state_filter_s: float = Field(
        0.05, ge=0, description="width of the smoothing of segment initial states [s] (0: raw)"
    )
    max_segments: int = Field(
        64, ge=1, description="segments simulated per evaluation at most (evenly chosen)"
    )
    pos_scale_rad: float = Field(0.05, gt=0, description="position error of unit residual [rad]")
    vel_scale_rad_s: float = Field(0.5, gt=0, description="velocity error of unit residual [rad/s]")
    vel_weight: float = Field(0.25, ge=0, description="weight of velocity vs position errors")
    huber_delta: float = Field(2.0, gt=0, description="scaled error where the loss turns linear")
    unstable_residual: float = Field(
        30.0, gt=0, description="residual of every sample of a segment that diverged [-]"
    )


def huber(r: np.ndarray, delta: float | np.ndarray) -> np.ndarray:
    a = np.abs(r)
    return np.where(a <= delta, 0.5 * r * r, delta * (a - 0.5 * delta))


@dataclass
class Evaluation:
    """``residuals`` (C, S, T, 2 J): scaled errors after the initial state (positions, then
    sqrt(weight) velocities); ``seg_cost`` (C, S) mean Huber loss per segment; ``cost`` (C,)
    their mean; ``unstable`` (C, S) bool; ``qpos`` (C, S, T + 1, J) simulated positions of the
    logged joints (index 0: the initial state)."""

    cost: np.ndarray
    seg_cost: np.ndarray
    unstable: np.ndarray
    residuals: np.ndarray
    qpos: np.ndarray
    warnings: int

    def vectors(self) -> np.ndarray:
        """(C, N) the residual vector of each parameter set."""
        return self.residuals.reshape(len(self.residuals), -1)


class MultipleShooting:
    """Residuals and cost of (C, P) parameter sets over fixed segments."""

    def __init__(
        self,
        sim: SimModel,
        space: ParamSpace,
        segments: Segments,
        cfg: ObjectiveConfig,
        *,
        nthread: int | None = None,
    ) -> None:
        self.space = space
        self.segments = segments
        self.cfg = cfg
        self.batch = BatchSimulator(sim, space, nthread=nthread)
        self.evaluations = 0
        self.unstable_count = 0
        self.warnings = 0

    @property
    def n_residuals(self) -> int:
        seg = self.segments
        return len(seg) * seg.steps * 2 * len(seg.q_adr)

    def column_deltas(self) -> np.ndarray:
        """(2 J,) Huber threshold of each residual column: positions, then velocities."""
        J = len(self.segments.q_adr)
        d = self.cfg.huber_delta
        return np.array([d] * J + [np.sqrt(self.cfg.vel_weight) * d] * J)

    def deltas(self) -> np.ndarray:
        """(N,) Huber threshold of each entry of a residual vector."""
        return np.tile(self.column_deltas(), len(self.segments) * self.segments.steps)

    def evaluate(self, values: np.ndarray) -> Evaluation:
        values = np.atleast_2d(values)
        seg = self.segments
        C, S = len(values), len(seg)
        res = self.batch.run(
            values,
            np.tile(seg.qpos0, (C, 1)),
            np.tile(seg.qvel0, (C, 1)),
            np.tile(seg.ctrl, (C, 1, 1)),
            owner=np.repeat(np.arange(C), S),
            hist=seg.hist,
            steps=seg.steps,
        )
        q = res.qpos[:, :, seg.q_adr].reshape(C, S, seg.steps + 1, -1)
        v = res.qvel[:, :, seg.v_adr].reshape(C, S, seg.steps + 1, -1)
        cfg = self.cfg
        eq = (q[:, :, 1:] - seg.meas_q[None, :, 1:]) / cfg.pos_scale_rad
        ev = (v[:, :, 1:] - seg.meas_v[None, :, 1:]) * (
            np.sqrt(cfg.vel_weight) / cfg.vel_scale_rad_s
        )
        resid = np.concatenate([eq, ev], axis=3)
        unstable = res.unstable.reshape(C, S) | ~np.isfinite(resid).all(axis=(2, 3))
        resid[unstable] = cfg.unstable_residual
        seg_cost = huber(resid, self.column_deltas()).mean(axis=(2, 3))
        self.evaluations += C
        self.unstable_count += int(unstable.any(axis=1).sum())
        self.warnings += res.warnings
        return Evaluation(seg_cost.mean(axis=1), seg_cost, unstable, resid, q, res.warnings)

    def __call__(self, values: np.ndarray) -> np.ndarray:
        return self.evaluate(values).cost
