"""Multiple-shooting objective: simulate every segment from its measured initial state with the
logged controls, compare positions and velocities with the measurements (scaled, weighted,
robust Huber loss), for many candidate parameter sets in one batched rollout."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from sim2real.params.space import ParamSpace
from sim2real.sim.batch import BatchSimulator
from sim2real.sim.model import SimModel
from sim2real.sysid.segments import Segments


class ObjectiveConfig(BaseModel):
    """Weights and scales of the multiple-shooting cost."""

    model_config = ConfigDict(extra="forbid")
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
    pos_scale_rad: float = Field(0.05, gt=0, description="position error of unit cost [rad]")
    vel_scale_rad_s: float = Field(0.5, gt=0, description="velocity error of unit cost [rad/s]")
    vel_weight: float = Field(0.25, ge=0, description="weight of velocity vs position errors")
    huber_delta: float = Field(2.0, gt=0, description="scaled error where the loss turns linear")
    unstable_cost: float = Field(1e3, gt=0, description="cost of a segment that diverged")


def huber(r: np.ndarray, delta: float) -> np.ndarray:
    a = np.abs(r)
    return np.where(a <= delta, 0.5 * r * r, delta * (a - 0.5 * delta))


@dataclass
class Evaluation:
    """``seg_cost`` (C, S); ``cost`` (C,) mean over segments; ``unstable`` (C, S) bool;
    ``residuals`` (C, S, T + 1, 2 J) scaled (position, sqrt(weight) velocity) errors;
    ``qpos`` (C, S, T + 1, J) simulated positions of the logged joints."""

    cost: np.ndarray
    seg_cost: np.ndarray
    unstable: np.ndarray
    residuals: np.ndarray
    qpos: np.ndarray
    warnings: int


class MultipleShooting:
    """Cost of (C, P) parameter sets over fixed segments."""

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

    def evaluate(self, values: np.ndarray) -> Evaluation:
        values = np.atleast_2d(values)
        seg = self.segments
        C, S = len(values), len(seg)
        owner = np.repeat(np.arange(C), S)
        res = self.batch.run(
            values,
            np.tile(seg.qpos0, (C, 1)),
            np.tile(seg.qvel0, (C, 1)),
            np.tile(seg.ctrl, (C, 1, 1)),
            owner=owner,
            hist=seg.hist,
            steps=seg.steps,
        )
        q = res.qpos[:, :, seg.q_adr].reshape(C, S, seg.steps + 1, -1)
        v = res.qvel[:, :, seg.v_adr].reshape(C, S, seg.steps + 1, -1)
        eq = (q - seg.meas_q[None]) / self.cfg.pos_scale_rad
        ev = (v - seg.meas_v[None]) / self.cfg.vel_scale_rad_s
        unstable = res.unstable.reshape(C, S)
        eq = np.where(np.isfinite(eq), eq, 0.0)
        ev = np.where(np.isfinite(ev), ev, 0.0)
        d = self.cfg.huber_delta
        per = huber(eq, d).mean(axis=(2, 3)) + self.cfg.vel_weight * huber(ev, d).mean(axis=(2, 3))
        per = np.where(unstable, self.cfg.unstable_cost, per)
        self.evaluations += C
        self.unstable_count += int(unstable.any(axis=1).sum())
        self.warnings += res.warnings
        resid = np.concatenate([eq, np.sqrt(self.cfg.vel_weight) * ev], axis=3)
        return Evaluation(per.mean(axis=1), per, unstable, resid, q, res.warnings)

    def __call__(self, values: np.ndarray) -> np.ndarray:
        return self.evaluate(values).cost
