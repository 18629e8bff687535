"""Fit a parameter space to logs: bounded least squares on the multiple-shooting residuals
(:mod:`sim2real.sysid.lsq`) from the better of the nominal and the linear least-squares
start (plus optional random starts), run to convergence; then the identifiability of the
result (:mod:`sim2real.sysid.identifiability`): directions the logs cannot see are held at
the value nearest the nominal and the fit is finished in the others; last, the uncertainty
(:mod:`sim2real.sysid.uncertainty`) and the parameters left at a bound."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from pydantic import Field

from sim2real.core.strict import StrictModel
from sim2real.params.space import ParamSpace
from sim2real.sim.logs import RobotLog
from sim2real.sim.model import SimModel
from sim2real.sysid.identifiability import (
    Identifiability,
    Sensitivity,
    analyse,
    sensitivity,
)
from sim2real.sysid.init_ls import LinearInit, linear_init
from sim2real.sysid.lsq import LsqRun, Pin, Problem, solve
from sim2real.sysid.objective import MultipleShooting, ObjectiveConfig
from sim2real.sysid.segments import make_segments
from sim2real.sysid.uncertainty import Uncertainty, segment_bootstrap

HOLD_COST_REL = 1e-3
"""An unidentified direction is held at the nominal's value when that raises the cost by at
most this fraction."""
BOUND_TOL = 1e-6
"""A free parameter within this fraction of its range from a bound is reported at the bound."""


class FitConfig(StrictModel):
    """How to fit. The fit stops on convergence; ``max_iter`` only guards against a run that
    does not converge (reported)."""

    objective: ObjectiveConfig = Field(
        default_factory=ObjectiveConfig,
        description="the multiple-shooting cost (segments, weights, state filter)",
    )
    ls_init: bool = Field(True, description="also consider the linear least-squares start")
    starts: int = Field(
        0, ge=0, description="extra starting points drawn uniformly in the bounds (with the seed)"
    )
    max_iter: int = Field(100, ge=1, description="optimizer iterations per start at most")
    tol: float = Field(1e-8, gt=0, description="relative step and gradient tolerance")
    bootstrap: int = Field(500, ge=0, description="linearized bootstrap resamples (0: none)")
    seed: int = Field(0, description="seed of the extra starts and the bootstrap")
    nthread: int | None = Field(None, ge=1, description="rollout threads (default: all cores)")


@dataclass
class FitResult:
    """``values`` (P,) fitted parameters; ``cost`` their multiple-shooting cost (``cost_nominal``
    and ``cost_init`` of the nominal and the least-squares start); ``uncertainty`` None without
    bootstrap; ``identifiability`` of the free parameters; ``at_bound`` (P,) bool free
    parameters left at a bound; ``history`` the objective after each iteration of the kept
    run; ``converged`` False when a run stopped on ``max_iter``."""

    space: ParamSpace
    values: np.ndarray
    cost: float
    cost_nominal: float
    cost_init: float
    init: LinearInit | None
    uncertainty: Uncertainty | None
    identifiability: Identifiability | None
    at_bound: np.ndarray
    converged: bool
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

    @property
    def unidentified(self) -> list[str]:
        """Names of the free parameters whose value alone the logs do not pin."""
        if self.identifiability is None:
            return []
        free = np.flatnonzero(self.space.free_mask())
        mask = self.identifiability.param_unidentified()
        return [self.space.names[free[k]] for k in np.flatnonzero(mask)]

    def bound_notes(self) -> list[str]:
        lo, hi = self.space.lower(), self.space.upper()
        return [
            f"{p.name} = {v:.4g} is at its {'lower' if abs(v - lo[j]) <= abs(v - hi[j]) else 'upper'}"
            f" bound [{lo[j]:g}, {hi[j]:g}]"
            for j, (p, v) in enumerate(zip(self.space.params, self.values, strict=True))
            if self.at_bound[j]
        ]


def build_objective(
    sim: SimModel, space: ParamSpace, logs: list[RobotLog], cfg: FitConfig
) -> MultipleShooting:
    """The fit's residuals: segments of ``cfg.objective`` (at most ``max_segments``, evenly
    chosen), with enough earlier controls for the spec's largest action delay."""
    oc = cfg.objective
    dt = float(sim.model.opt.timestep)
    delay_max = max([p.bounds[1] for p in space.params if p.target == "extra.delay_s"] or [0.0])
    segs = make_segments(sim, logs, oc.segment_s, stride_s=oc.stride_s or oc.segment_s / 2,
                         state_filter_s=oc.state_filter_s, hist_s=max(0.05, delay_max + 2 * dt))  # fmt: skip
    if len(segs) > oc.max_segments:
        segs = segs.subset(np.linspace(0, len(segs) - 1, oc.max_segments).round().astype(int))
    return MultipleShooting(sim, space, segs, oc, nthread=cfg.nthread)


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
    obj = build_objective(sim, space, logs, cfg)
    oc, segs = cfg.objective, obj.segments
    notes = [f"{len(segs)} segments of {oc.segment_s} s from {len(logs)} logs (evenly chosen)"]
    nominal = space.nominal()
    init = linear_init(sim, space, logs) if cfg.ls_init else None
    candidates = [nominal] if init is None else [nominal, init.values]
    costs = obj(np.array(candidates))
    cost_nominal, cost_init = float(costs[0]), float(costs[-1])
    if init is not None:
        notes.append(
            f"least squares on {init.samples} samples: cost {cost_init:.4g} "
            f"(nominal {cost_nominal:.4g}), rms torque residual {init.rms_residual_Nm:.3g} N m"
        )
    free = space.free_mask()
    problem = Problem(obj, nominal)
    best_start = candidates[int(np.argmin(costs))]
    if not free.any():
        return FitResult(space, best_start, float(costs.min()), cost_nominal, cost_init, init,
                         None, None, np.zeros(len(space), bool), True, obj.evaluations,
                         obj.unstable_count, obj.warnings, time.perf_counter() - start, len(segs),
                         [float(costs.min())], notes)  # fmt: skip
    rng = np.random.default_rng(cfg.seed)
    starts = [
        ("nominal" if costs.argmin() == 0 else "least squares", space.to_unit(best_start)[free])
    ]
    starts += [(f"random {k + 1}", rng.uniform(0.05, 0.95, free.sum())) for k in range(cfg.starts)]

    def report(cost: float) -> None:
        if progress:
            progress(obj.evaluations, cost)

    runs: list[LsqRun] = []
    for label, x0 in starts:
        run = solve(problem, x0, max_iter=cfg.max_iter, tol=cfg.tol, progress=report)
        runs.append(run)
        notes.append(f"least squares from the {label} start: cost {run.cost:.6g} after "
                     f"{run.iterations} iterations ({run.message})")  # fmt: skip
    best = min(runs, key=lambda r: r.cost)
    names = [space.names[j] for j in np.flatnonzero(free)]
    sens = sensitivity(problem, best.x)
    ident = analyse(sens, names)
    if ident.unidentified.any():
        notes += ident.describe()
        best, sens, ident, held_notes = _hold_unidentified(problem, best, sens, ident, cfg, report)
        notes += held_notes
    values = problem.values(best.x)[0]
    unc = (
        segment_bootstrap(space, nominal, sens, ident, cfg.bootstrap, cfg.seed)
        if cfg.bootstrap
        else None
    )
    u = space.to_unit(values)
    at_bound = free & ((u <= BOUND_TOL) | (u >= 1.0 - BOUND_TOL))
    converged = all(r.converged for r in runs) and best.converged
    if not converged:
        notes.append(f"a run stopped after max_iter = {cfg.max_iter} iterations (not converged)")
    report(best.cost)  # the final count: the sensitivity's evaluations after the last step too
    result = FitResult(space, values, best.cost, cost_nominal, cost_init, init, unc, ident,
                       at_bound, converged, obj.evaluations, obj.unstable_count, obj.warnings,
                       time.perf_counter() - start, len(segs), best.history, notes)  # fmt: skip
    result.notes += result.bound_notes()
    return result


def _hold_unidentified(
    problem: Problem,
    run: LsqRun,
    sens: Sensitivity,
    ident: Identifiability,
    cfg: FitConfig,
    report: Callable[[float], None],
) -> tuple[LsqRun, Sensitivity, Identifiability, list[str]]:
    """Hold the unidentified directions V0 at the nominal's coordinates (pins
    V0^T x = V0^T x_nom, as stiff as the best-determined direction) and refit the others. A
    direction is held only when holding it costs at most ``HOLD_COST_REL`` of the cost (the
    logs cannot tell the nominal's value from the fitted one); one that is flat near the fit
    but not out to the nominal stays fitted (weakly identified)."""
    x_nom = problem.space.to_unit(problem.space.nominal())[problem.free]
    lam_max = max(float(np.linalg.eigvalsh(sens.hessian()).max()), 1e-12)
    limit = run.cost * (1.0 + HOLD_COST_REL) + 1e-12

    def refit(V0: np.ndarray) -> LsqRun:
        pin = Pin(V0.T, V0.T @ x_nom, float(np.sqrt(lam_max)))
        x0 = np.clip(run.x - V0 @ (V0.T @ (run.x - x_nom)), 0.0, 1.0)
        pinned = Problem(problem.obj, problem.space.nominal(), pin)
        return solve(pinned, x0, max_iter=cfg.max_iter, tol=cfg.tol, progress=report)

    V0 = ident.null_space
    held, notes = refit(V0), []
    if held.cost > limit and V0.shape[1] > 1:  # which of them can be held?
        alone = {k: refit(V0[:, [k]]) for k in range(V0.shape[1])}
        keep = [k for k, r in alone.items() if r.cost <= limit]
        V0 = V0[:, keep]
        held = run if not keep else alone[keep[0]] if len(keep) == 1 else refit(V0)
    elif held.cost > limit:
        V0, held = V0[:, :0], run
    if V0.shape[1] < ident.null_space.shape[1]:
        notes.append(f"{ident.null_space.shape[1] - V0.shape[1]} direction(s) flat near the fit "
                     f"but not out to the nominal (holding them costs more than "
                     f"{100 * HOLD_COST_REL:g} %): fitted, weakly identified")  # fmt: skip
    if V0.shape[1]:
        notes.append(f"held nearest the nominal, then refitted: cost {held.cost:.6g} after "
                     f"{held.iterations} iterations ({held.message})")  # fmt: skip
    sens = sensitivity(problem, held.x)
    return held, sens, analyse(sens, ident.names, held=V0), notes
