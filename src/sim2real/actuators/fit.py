"""Fitting an actuator model to servo bench logs by simulation error: CMA-ES (``cma``) over
the unit cube of the model's free parameters, each generation simulated in one vectorised
rollout (:func:`sim2real.actuators.bench.simulate`), cost = position MAE [rad] over the
torque-enabled samples.

(The dynamics fitter, :mod:`sim2real.sysid.fit`, works on MuJoCo ``SimModel`` rollouts with
multiple shooting; the servo bench needs the actuator in the loop and full-length rollouts
from the logged start, hence this small loop.)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import cma
import numpy as np

from sim2real.actuators.bench import mae, simulate
from sim2real.actuators.servo_log import ServoLog

BOUND_TOL = 1e-3
"""A fitted parameter within this fraction of its range from a bound is reported at it."""


@dataclass
class ActuatorFit:
    """``values``: fitted parameters by name; MAEs in rad; ``history``: best MAE per
    generation; ``at_bounds``: the free parameters that ended at a bound (``"name (lower
    0)"``): the data pushed them there, the fit may want a wider range or another model."""

    config: object
    values: dict[str, float]
    nominal_mae_rad: float
    train_mae_rad: float
    evals: int
    fit_time_s: float
    history: list[float] = field(default_factory=list)
    at_bounds: list[str] = field(default_factory=list)


def bound_notes(space, unit: np.ndarray, values: np.ndarray) -> list[str]:
    """``"name (lower 0)"`` for each free parameter whose unit coordinate is within
    ``BOUND_TOL`` of 0 or 1."""
    notes = []
    for j, p in enumerate(space.params):
        if not p.free:
            continue
        side = "lower" if unit[j] <= BOUND_TOL else "upper" if unit[j] >= 1 - BOUND_TOL else None
        if side is not None:
            bound = p.bounds[0] if side == "lower" else p.bounds[1]
            notes.append(f"{p.name} ({side} bound {bound:g}, value {values[j]:.4g})")
    return notes


def evaluate(cfg, logs: list[ServoLog], values: dict | None = None) -> float:
    """Position MAE [rad] of one parameter set (default: the config's) on ``logs``."""
    return float(mae(simulate(cfg, logs, values), logs)[0])


def cma_seed(seed: int, run: int, restarts: int) -> int:
    """CMA-ES seed of run ``run`` of a fit with seed ``seed``: seeds ``s`` and ``s + 1``
    share no run (``1 + s (restarts + 1) + run``)."""
    return 1 + seed * (restarts + 1) + run


def fit_actuator(
    cfg,
    logs: list[ServoLog],
    *,
    max_evals: int = 3000,
    time_budget_s: float = 100.0,
    popsize: int = 16,
    sigma0: float = 0.2,
    seed: int = 0,
    restarts: int = 0,
) -> ActuatorFit:
    """Fit ``cfg``'s free parameters to ``logs`` starting from its values; returns the
    fitted config (``config``) and figures. ``restarts + 1`` CMA-ES runs (:func:`cma_seed`;
    the friction parameters have several minima), each stopped after ``max_evals``
    parameter sets or its share of ``time_budget_s``; the lowest train MAE wins."""
    t0 = time.perf_counter()
    space = cfg.param_space()
    free = space.free_mask()
    x0 = space.nominal()
    names = space.names

    def cost(units: np.ndarray) -> np.ndarray:
        u = np.tile(space.to_unit(x0), (len(units), 1))
        u[:, free] = units
        vals = space.from_unit(u)
        vals[:, ~free] = x0[~free]
        pred = simulate(cfg, logs, {n: vals[:, j] for j, n in enumerate(names)})
        return mae(pred, logs)

    nominal = float(cost(space.to_unit(x0)[free][None])[0])
    best_u, best_c, evals, history = space.to_unit(x0)[free], nominal, 1, []
    for run in range(restarts + 1):  # independent runs from the nominal, best train MAE kept
        end = t0 + time_budget_s * (run + 1) / (restarts + 1)
        es = cma.CMAEvolutionStrategy(
            np.clip(space.to_unit(x0)[free], 0.02, 0.98),
            sigma0,
            {"bounds": [0.0, 1.0], "popsize": popsize, "seed": cma_seed(seed, run, restarts)}
            | {"verbose": -9},
        )
        run_evals = 0
        while run_evals < max_evals and time.perf_counter() < end and not es.stop():
            sols = np.array(es.ask())
            c = cost(sols)
            es.tell(list(sols), c.tolist())
            run_evals += len(sols)
            i = int(np.argmin(c))
            if c[i] < best_c:
                best_c, best_u = float(c[i]), sols[i]
            history.append(best_c)
        evals += run_evals
    u = space.to_unit(x0)
    u[free] = best_u
    vals = space.from_unit(u)
    vals[~free] = x0[~free]
    values = {n: float(v) for n, v in zip(names, vals, strict=True)}
    notes = bound_notes(space, u, vals)
    return ActuatorFit(
        config=cfg.with_values(values),
        values=values,
        nominal_mae_rad=nominal,
        train_mae_rad=best_c,
        evals=evals,
        fit_time_s=time.perf_counter() - t0,
        history=history,
        at_bounds=notes,
    )
