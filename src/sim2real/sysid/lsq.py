"""Bounded nonlinear least squares on the multiple-shooting residual vector, in the unit cube of
the free parameters: MuJoCo's Levenberg-Marquardt with box constraints
(``mujoco.minimize.least_squares``, the optimizer of ``mujoco.sysid``) under a Huber norm, its
Jacobian by forward finite differences whose perturbed parameter sets are simulated together in
one batched rollout (``mujoco.rollout``, one thread per core). It stops on convergence (step
and gradient tolerances), never on wall time, so a fit does not depend on machine load.

Optional *pins* are extra linear residuals ``weight * (A x - b)``: they hold directions the
logs cannot see (see :mod:`sim2real.sysid.identifiability`) at a chosen value while the
others are fitted.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from mujoco import minimize

from sim2real.sysid.objective import MultipleShooting


@dataclass
class Pin:
    """Residuals ``weight * (A x - b)``: A (K, F), b (K,) in unit-cube coordinates."""

    A: np.ndarray
    b: np.ndarray
    weight: float


@dataclass
class LsqRun:
    """One run: ``x`` (F,) unit coordinates of the free parameters, ``cost`` the
    multiple-shooting cost there (pins excluded), ``evaluations`` parameter sets simulated,
    ``history`` the objective after each iteration, ``message`` the optimizer's reason to stop
    (``converged`` False when it ran out of iterations)."""

    x: np.ndarray
    cost: float
    iterations: int
    evaluations: int
    converged: bool
    message: str
    history: list[float] = field(default_factory=list)


class Problem:
    """The residual vector as a function of the free parameters' unit coordinates ``x`` (F,);
    the fixed parameters keep ``base_values``."""

    def __init__(
        self,
        obj: MultipleShooting,
        base_values: np.ndarray,
        pin: Pin | None = None,
        *,
        fd_step: float = 1e-5,
    ) -> None:
        self.obj = obj
        self.space = obj.space
        self.free = np.flatnonzero(self.space.free_mask())
        self.u_base = self.space.to_unit(base_values)
        self.pin = pin
        self.fd_step = fd_step
        self._cache: tuple[np.ndarray, np.ndarray] | None = None

    def values(self, X: np.ndarray) -> np.ndarray:
        """(K, F) unit coordinates -> (K, P) parameter values."""
        X = np.atleast_2d(X)
        u = np.tile(self.u_base, (len(X), 1))
        u[:, self.free] = X
        return self.space.from_unit(u)

    def data_residuals(self, X: np.ndarray) -> np.ndarray:
        """(K, F) -> (K, N) multiple-shooting residuals, one batched rollout."""
        return self.obj.evaluate(self.values(X)).vectors()

    def residuals(self, X: np.ndarray) -> np.ndarray:
        """(K, F) -> (K, N [+ pins]) all residuals."""
        X = np.atleast_2d(X)
        R = self.data_residuals(X)
        if self.pin is None:
            return R
        p = self.pin
        return np.concatenate([R, p.weight * (X @ p.A.T - p.b)], axis=1)

    def jacobian(self, x: np.ndarray, r0: np.ndarray) -> np.ndarray:
        """(N, F) forward differences at ``x`` (F,) with residuals ``r0`` (N,) (backward
        near the upper bound), all F perturbed sets in one rollout."""
        h = np.where(x + self.fd_step <= 1.0, self.fd_step, -self.fd_step)
        R = self.residuals(x[None] + np.diag(h))
        return ((R - r0[None]) / h[:, None]).T

    def cost(self, x: np.ndarray) -> float:
        return float(self.obj.evaluate(self.values(x[None])).cost[0])


class HuberNorm(minimize.Norm):
    """sum_i huber(r_i, delta_i): quadratic up to delta_i, linear beyond. ``deltas`` (N,) for
    the data residuals; entries after them (pins) use ``delta_extra``."""

    def __init__(self, deltas: np.ndarray, delta_extra: float) -> None:
        self.deltas = np.asarray(deltas, dtype=float)
        self.delta_extra = delta_extra

    def _d(self, r: np.ndarray) -> np.ndarray:
        n = len(self.deltas)
        extra = np.full(r.shape[0] - n, self.delta_extra)
        return np.concatenate([self.deltas, extra]).reshape(-1, *([1] * (r.ndim - 1)))

    def value(self, r: np.ndarray) -> float:
        d = self._d(r)
        a = np.abs(r)
        return float(np.where(a <= d, 0.5 * r * r, d * (a - 0.5 * d)).sum())

    def grad_hess(self, r: np.ndarray, proj: np.ndarray):
        d = self._d(r)
        grad = proj.T @ np.clip(r, -d, d)
        return grad, proj.T @ (proj * (np.abs(r) <= d))


def solve(
    problem: Problem,
    x0: np.ndarray,
    *,
    max_iter: int = 100,
    tol: float = 1e-8,
    progress: Callable[[float], None] | None = None,
) -> LsqRun:
    """Least squares from ``x0`` (F,) in [0, 1]^F until converged or ``max_iter`` iterations."""
    n_data = problem.obj.n_residuals
    history: list[float] = []

    def callback(trace) -> None:
        history.append(float(trace[-1].objective) / n_data)  # mean Huber loss (pins included)
        if progress is not None:
            progress(history[-1])

    F = len(x0)
    evals0 = problem.obj.evaluations
    out = io.StringIO()
    x, trace = minimize.least_squares(
        np.clip(x0, 0.0, 1.0),
        lambda X: problem.residuals(X.T).T,
        bounds=[np.zeros(F), np.ones(F)],
        jacobian=lambda x, r: problem.jacobian(x.ravel(), r.ravel()),
        norm=HuberNorm(problem.obj.deltas(), np.inf),  # pins stay quadratic
        xtol=tol,
        gtol=tol,
        max_iter=max_iter,
        verbose=minimize.Verbosity.FINAL,
        output=out,
        iter_callback=callback,
    )
    text = out.getvalue().strip().splitlines()
    message = text[0].split(": ", 1)[-1].split(" y:")[0] if text else ""
    x = np.clip(np.asarray(x, dtype=float), 0.0, 1.0)
    return LsqRun(
        x,
        problem.cost(x),
        len(trace) - 1,
        problem.obj.evaluations - evals0,
        "maximum iterations" not in message,
        message,
        history,
    )
