"""Fit a parameter space to logs: least-squares initializer, then CMA-ES (``cma`` package)
with restarts (population doubled at each, IPOP style) on the multiple-shooting cost in the
unit cube of the free parameters, each generation simulated in one batched rollout. Ends
with the uncertainty (:mod:`sim2real.sysid.uncertainty`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import cma
import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from sim2real.params.space import ParamSpace
from sim2real.sim.logs import RobotLog
from sim2real.sim.model import SimModel
from sim2real.sysid.init_ls import LinearInit, linear_init
from sim2real.sysid.objective import MultipleShooting, ObjectiveConfig
from sim2real.sysid.segments import make_segments
from sim2real.sysid.uncertainty import Uncertainty, segment_bootstrap


class FitConfig(BaseModel):
    """How to fit. Times in seconds."""

    model_config = ConfigDict(extra="forbid")
    objective: ObjectiveConfig = Field(default_factory=ObjectiveConfig)
    ls_init: bool = Field(True, description="start from the linear least-squares solution")
    sigma0: float = Field(0.15, gt=0, le=0.5, description="initial CMA-ES step (unit cube)")
    popsize: int | None = Field(None, ge=4, description="first population (default: CMA's)")
    restarts: int = Field(2, ge=0, description="CMA-ES restarts, population doubled each")
    max_evals: int = Field(2500, ge=10, description="parameter sets evaluated at most")
    time_budget_s: float = Field(40.0, gt=0, description="stop starting generations after this")
    tol_cost: float = Field(1e-4, gt=0, description="relative cost change that stops a run")
    bootstrap: int = Field(500, ge=0, description="linearized bootstrap resamples (0: none)")
    seed: int = 0
    nthread: int | None = Field(None, ge=1, description="rollout threads (default: all cores)")


@dataclass
class FitResult:
    """``values`` (P,) best parameters; ``cost`` its multiple-shooting cost (``cost_nominal``
    and ``cost_init`` for the nominal and the least-squares start); ``uncertainty`` may be
    None (no bootstrap); ``history``: best cost after each generation."""

    space: ParamSpace
    values: np.ndarray
    cost: float
    cost_nominal: float
    cost_init: float
    init: LinearInit | None
    uncertainty: Uncertainty | None
    evaluations: int
    unstable_evaluations: int
    mujoco_warnings: int
    seconds: float
    segments: int
    history: list[float] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def fitted_space(self) -> ParamSpace:
        """The space with the fitted values as nominal."""
        return self.space.replace(dict(zip(self.space.names, self.values, strict=True)))


def fit_params(
    sim: SimModel,
    space: ParamSpace,
    logs: list[RobotLog],
    cfg: FitConfig | None = None,
    *,
    progress: Callable[[int, float], None] | None = None,
) -> FitResult:
    """Identify ``space`` on logs resampled to the model timestep."""
    cfg = cfg or FitConfig()
    start = time.perf_counter()
    oc = cfg.objective
    segs = make_segments(
        sim,
        logs,
        oc.segment_s,
        stride_s=oc.stride_s or oc.segment_s / 2,
        state_filter_s=oc.state_filter_s,
    )
    if len(segs) > oc.max_segments:
        segs = segs.subset(np.linspace(0, len(segs) - 1, oc.max_segments).round().astype(int))
    obj = MultipleShooting(sim, space, segs, oc, nthread=cfg.nthread)
    free = space.free_mask()
    notes = [f"{len(segs)} segments of {oc.segment_s} s from {len(logs)} logs (evenly chosen)"]
    nominal = space.nominal()
    init = linear_init(sim, space, logs) if cfg.ls_init else None
    starts = [nominal] if init is None else [nominal, init.values]
    costs = obj(np.array(starts))
    cost_nominal = float(costs[0])
    cost_init = float(costs[-1])
    if init is not None:
        notes.append(
            f"least squares on {init.samples} samples: cost {cost_init:.4g} "
            f"(nominal {cost_nominal:.4g}), rms torque residual {init.rms_residual_Nm:.3g} N m"
        )
    best_x = starts[int(np.argmin(costs))].copy()
    best_f = float(costs.min())
    history = [best_f]
    if free.sum() == 0:
        return FitResult(space, best_x, best_f, cost_nominal, cost_init, init, None,
                         obj.evaluations, obj.unstable_count, obj.warnings,
                         time.perf_counter() - start, len(segs), history, notes)  # fmt: skip

    def to_values(u_free: np.ndarray) -> np.ndarray:
        u = np.tile(space.to_unit(best_x), (len(u_free), 1))
        u[:, free] = u_free
        return space.from_unit(u)

    x0 = np.clip(space.to_unit(best_x)[free], 0.02, 0.98)
    popsize = cfg.popsize or 4 + int(3 * np.log(free.sum()))
    stop_reason = "evaluations"
    for restart in range(cfg.restarts + 1):
        if obj.evaluations >= cfg.max_evals or time.perf_counter() - start > cfg.time_budget_s:
            break
        opts = {
            "bounds": [0.0, 1.0],
            "popsize": popsize * 2**restart,
            "seed": cfg.seed + 1 + restart,
            "verbose": -9,
            "tolfun": cfg.tol_cost * max(best_f, 1e-9),
            "tolx": 1e-4,
            "maxfevals": cfg.max_evals - obj.evaluations,
        }
        sigma = cfg.sigma0 if restart == 0 else 2 * cfg.sigma0
        es = cma.CMAEvolutionStrategy(x0 if free.sum() > 1 else [x0[0], 0.5], sigma, opts)
        while not es.stop():
            if time.perf_counter() - start > cfg.time_budget_s:
                stop_reason = "time budget"
                break
            X = np.array(es.ask())
            f = obj(to_values(X[:, : free.sum()]))
            es.tell(list(X), f.tolist())
            k = int(np.argmin(f))
            if f[k] < best_f:
                best_f, best_x = float(f[k]), to_values(X[k : k + 1, : free.sum()])[0]
            history.append(best_f)
            if progress:
                progress(obj.evaluations, best_f)
        else:
            stop_reason = ", ".join(es.stop())
        x0 = np.clip(space.to_unit(best_x)[free], 0.02, 0.98)
        notes.append(f"CMA-ES run {restart + 1}: population {opts['popsize']}, "
                     f"best cost {best_f:.5g}, stopped on {stop_reason}")  # fmt: skip
    unc = segment_bootstrap(obj, best_x, cfg.bootstrap, cfg.seed) if cfg.bootstrap else None
    return FitResult(space, best_x, best_f, cost_nominal, cost_init, init, unc, obj.evaluations,
                     obj.unstable_count, obj.warnings, time.perf_counter() - start, len(segs),
                     history, notes)  # fmt: skip
