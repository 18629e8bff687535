"""Choosing an actuator model by leave-one-gain-out validation, never by training error.

For every candidate and every firmware gain ``g`` among the logs, the model is fitted on the
logs at the other gains and judged on the logs at ``g`` (position MAE of the simulated bench):
a gain it never saw, inside or outside the fitted range. The candidate chosen has the lowest
mean of those held-out errors among the candidates that *extrapolate*: on every held-out gain
its error stays within ``EXTRAPOLATION_RATIO`` times its error on the gains it was fitted to,
or at most the reference model's (Coulomb-viscous, the simplest physical servo, when among
the candidates) on that gain. A model whose error triples on a new gain and ends worse than
the simplest physical model has learnt the gains, not the servo (issue 14's report). A simpler
candidate (fewer fitted parameters) within ``SIMPLER_TOLERANCE`` of the best is preferred.
When no candidate passes the test, the physical model with the lowest held-out error is
chosen and the selection says so (``extrapolates: false`` in the report and the YAML).

Fits are cached by (model, gains fitted), so a benchmark that holds out each gain in turn and
selects within the remaining ones fits each model once per distinct set of gains.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from sim2real.actuators.servo_log import ServoLog
from sim2real.core.local_jobs import worker_context
from sim2real.core.stop_request import ignore_ctrl_c

EXTRAPOLATION_RATIO = 2.0
"""Held-out-gain MAE over the same fit's training MAE above which a model does not
extrapolate, unless it still beats the reference (the failure reported in issue 14: about
3x, no better than Coulomb-viscous)."""

REFERENCE = "coulomb-viscous"
"""The simplest physical servo model, the yardstick of the extrapolation test."""

SIMPLER_TOLERANCE = 0.05
"""A candidate with fewer parameters is preferred within this fraction of the best score."""

FitFn = Callable[[str, list[ServoLog]], object]
"""(model name, training logs) -> a fit with ``config``, ``train_mae_rad``, ``fit_time_s``."""
EvalFn = Callable[[object, list[ServoLog]], float]
"""(config, logs) -> position MAE [rad]."""


def gains_of(logs: list[ServoLog]) -> list[float]:
    return sorted({float(log.kp_fw) for log in logs})


def at_gains(logs: list[ServoLog], gains) -> list[ServoLog]:
    keep = set(gains)
    return [log for log in logs if float(log.kp_fw) in keep]


class FitCache:
    """Fits by (model, fitted gains); ``fit_fn`` runs only on a miss. Inside
    :meth:`parallel` the fits named there run in ``processes`` worker processes (``fit_fn``
    must then pickle), and :meth:`get` waits for its own: each fit is seeded by its settings
    alone, so the figures do not depend on where or in what order it ran."""

    def __init__(self, fit_fn: FitFn, processes: int = 1):
        self.fit_fn = fit_fn
        self.processes = processes
        self.fits: dict[tuple[str, tuple[float, ...]], object] = {}
        self._running: dict[tuple[str, tuple[float, ...]], Future] | None = None

    def get(self, name: str, logs: list[ServoLog]):
        key = (name, tuple(gains_of(logs)))
        if key not in self.fits:
            running = (self._running or {}).pop(key, None)
            self.fits[key] = running.result() if running else self.fit_fn(name, logs)
        return self.fits[key]

    @contextmanager
    def parallel(self, jobs: list[tuple[str, list[ServoLog]]]) -> Iterator[None]:
        """The fits of ``jobs`` (model, logs) not cached yet, started in worker processes, in
        order. Leaving on an error or Ctrl-C ends the workers at once. Within another block,
        nothing more starts."""
        todo: dict[tuple[str, tuple[float, ...]], tuple[str, list[ServoLog]]] = {}
        for name, logs in jobs:
            key = (name, tuple(gains_of(logs)))
            if key not in self.fits:
                todo.setdefault(key, (name, logs))
        if self.processes <= 1 or len(todo) <= 1 or self._running is not None:
            yield
            return
        # an executor, not a multiprocessing.Pool: a worker killed mid-fit (out of memory)
        # raises BrokenProcessPool here, where a Pool waits for its result forever
        pool = ProcessPoolExecutor(min(self.processes, len(todo)), mp_context=worker_context(),
                                   initializer=ignore_ctrl_c)  # fmt: skip
        try:
            self._running = {key: pool.submit(self.fit_fn, *job) for key, job in todo.items()}
            yield
        except BaseException:
            _end_at_once(pool)  # the other fits are not wanted any more
            raise
        finally:
            self._running = None
            pool.shutdown(wait=True)


def _end_at_once(pool: ProcessPoolExecutor) -> None:
    """Cancel the fits not begun and end the running ones now (Python 3.14's
    ``terminate_workers``; by its worker processes before that)."""
    if hasattr(pool, "terminate_workers"):
        pool.terminate_workers()
        return
    processes = list((getattr(pool, "_processes", None) or {}).values())  # shutdown drops them
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()


@dataclass
class GainFold:
    """One held-out gain: MAEs [rad] on the fitted gains and on the held-out one."""

    held_kp: float
    train_mae_rad: float
    holdout_mae_rad: float
    fit_time_s: float

    @property
    def ratio(self) -> float:
        return self.holdout_mae_rad / max(self.train_mae_rad, 1e-12)


@dataclass
class Candidate:
    """A model's leave-one-gain-out record; ``n_params`` = its fitted parameters."""

    name: str
    folds: list[GainFold]
    n_params: int
    physical: bool
    extrapolates: bool = True
    """Set by :func:`choose` (the rule of the module docstring)."""

    @property
    def logo_mae_rad(self) -> float:
        """Mean held-out-gain MAE [rad]."""
        return float(np.mean([f.holdout_mae_rad for f in self.folds]))

    @property
    def worst_ratio(self) -> float:
        return max(f.ratio for f in self.folds)


def _extrapolates(c: Candidate, ref: Candidate | None) -> bool:
    ref_mae = {f.held_kp: f.holdout_mae_rad for f in ref.folds} if ref is not None else {}
    return all(
        f.ratio <= EXTRAPOLATION_RATIO or f.holdout_mae_rad <= ref_mae.get(f.held_kp, -1.0)
        for f in c.folds
    )


@dataclass
class Selection:
    """The candidates' records, the chosen name and the reason in words."""

    candidates: list[Candidate]
    chosen: str
    reason: str
    extrapolates: bool
    gains: list[float] = field(default_factory=list)

    def candidate(self, name: str) -> Candidate:
        return next(c for c in self.candidates if c.name == name)

    def record(self) -> dict:
        """Plain data for a YAML report."""
        return {
            "method": "leave one gain out",
            "gains": self.gains,
            "chosen": self.chosen,
            "reason": self.reason,
            "extrapolates": self.extrapolates,
            "extrapolation_ratio_limit": EXTRAPOLATION_RATIO,
            "extrapolation_reference": REFERENCE,
            "candidates": {
                c.name: {
                    "logo_mae_rad": round(c.logo_mae_rad, 6),
                    "extrapolates": c.extrapolates,
                    "held_out": {
                        f"kp {f.held_kp:g}": {
                            "train_mae_rad": round(f.train_mae_rad, 6),
                            "holdout_mae_rad": round(f.holdout_mae_rad, 6),
                        }
                        for f in c.folds
                    },
                }
                for c in self.candidates
            },
        }


def leave_one_gain_out(
    name: str, logs: list[ServoLog], cache: FitCache, evaluate: EvalFn
) -> list[GainFold]:
    """Fit ``name`` on all gains but one, judge it on that one, for every gain of ``logs``."""
    folds = []
    for g in gains_of(logs):
        hold = at_gains(logs, [g])
        fit = cache.get(name, all_but_gain(logs, g))
        folds.append(
            GainFold(g, float(fit.train_mae_rad), evaluate(fit.config, hold), fit.fit_time_s)
        )
    return folds


def all_but_gain(logs: list[ServoLog], gain: float) -> list[ServoLog]:
    return [log for log in logs if float(log.kp_fw) != gain]


def fold_jobs(names: list[str], logs: list[ServoLog]) -> list[tuple[str, list[ServoLog]]]:
    """The (model, logs) fits leave one gain out makes of each of ``names``: for
    :meth:`FitCache.parallel`."""
    return [(name, all_but_gain(logs, g)) for name in names for g in gains_of(logs)]


def choose(candidates: list[Candidate], gains: list[float]) -> Selection:
    """The rule of the module docstring applied to the candidates' records (sets their
    ``extrapolates``)."""
    ref = next((c for c in candidates if c.name == REFERENCE), None)
    for c in candidates:
        c.extrapolates = _extrapolates(c, ref)
    passing = [c for c in candidates if c.extrapolates]
    pool = passing or [c for c in candidates if c.physical] or candidates
    best = min(pool, key=lambda c: c.logo_mae_rad)
    simpler = [
        c
        for c in pool
        if c.n_params < best.n_params
        and c.logo_mae_rad <= (1.0 + SIMPLER_TOLERANCE) * best.logo_mae_rad
    ]
    chosen = min(simpler, key=lambda c: (c.n_params, c.logo_mae_rad)) if simpler else best
    held = ", ".join(f"{g:g}" for g in gains)
    reason = (
        f"lowest mean error on a held-out gain (leave one gain out over kp {held}): "
        f"{chosen.logo_mae_rad:.4f} rad"
    )
    if chosen is not best:
        reason += (
            f", within {100 * SIMPLER_TOLERANCE:.0f} % of {best.name} "
            f"({best.logo_mae_rad:.4f}) with fewer parameters"
        )
    excluded = [c.name for c in candidates if not c.extrapolates]
    if passing and excluded:
        reason += (
            f"; not eligible (held-out error above {EXTRAPOLATION_RATIO:g}x their training "
            f"error and above {REFERENCE}'s): {', '.join(excluded)}"
        )
    if not passing:
        reason = (
            f"no candidate passed the extrapolation test (held-out error within "
            f"{EXTRAPOLATION_RATIO:g}x the training error, or below {REFERENCE}'s, on every "
            f"held-out gain); {chosen.name} is the physical model with the " + reason
        )
    return Selection(candidates, chosen.name, reason, chosen.extrapolates, list(gains))


def select_model(
    names: list[str],
    logs: list[ServoLog],
    cache: FitCache,
    evaluate: EvalFn,
    n_params: Callable[[str], int],
    physical: Callable[[str], bool],
    progress: Callable[[str], None] | None = None,
) -> Selection:
    """Leave-one-gain-out records of every candidate on ``logs`` (two gains or more) and the
    choice among them."""
    gains = gains_of(logs)
    if len(gains) < 2:
        raise ValueError("leave-one-gain-out selection needs logs at two gains or more")
    candidates = []
    with cache.parallel(fold_jobs(names, logs)):
        for name in names:
            folds = leave_one_gain_out(name, logs, cache, evaluate)
            cand = Candidate(name, folds, n_params(name), physical(name))
            candidates.append(cand)
            if progress is not None:
                held = ", ".join(f"kp {f.held_kp:g} {f.holdout_mae_rad:.4f}" for f in folds)
                progress(f"{name}: held-out gains {held} rad (mean {cand.logo_mae_rad:.4f})")
    return choose(candidates, gains)
