"""Which parameter combinations the logs pin down, from the data: the sensitivity of the
multiple-shooting residuals to the free parameters at the optimum (the Jacobian, central
differences in the unit cube, one batched rollout), its eigen-decomposition, and the
uncertainty of each principal direction.

With per-segment Jacobians J_s and residuals r_s at the optimum, the Huber loss's
Gauss-Newton matrix is H = sum_s J_s^T W_s J_s (W = 1 where a residual is in the quadratic
range, 0 beyond) and its gradient per block of segments g_b = sum J_s^T psi(r_s) (psi the
clipped residual; segments starting within one segment length share a block). The sandwich
covariance C = H^-1 (sum_b g_b g_b^T) H^-1 (what a bootstrap over blocks estimates) gives
along each eigenvector v_k of H the standard deviation

    std_k = sqrt(v_k^T G v_k) / lambda_k     (unit-cube units: 1 = a parameter's whole range)

A direction is *unidentified* when the logs do not change with it, numerically
(lambda_k <= ``rcond`` lambda_max: the residuals are flat along it, e.g. mass and centre of
mass of a rigid pendulum whose inertia is free, pinned only as m cx and J), or when its
standard deviation exceeds ``max_std`` (the logs pin it to no better than the whole range of
the spec). Only those directions are held at their value nearest the nominal; every other
combination is fitted and reported with its uncertainty."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim2real.sysid.lsq import Problem

RCOND = 1e-6
"""Eigenvalues of H below this fraction of the largest are flat (singular values of the
sensitivity below 1e-3 of the largest). On the real logs the spectrum has a gap of several
orders of magnitude around it: 3e-7 for the double pendulum's structural mass trade, 5e-4
for its weakest pinned direction."""
MAX_STD = 1.0
"""A direction whose 1-sigma exceeds the whole unit range of the spec is unidentified."""


@dataclass
class Sensitivity:
    """At unit coordinates ``x`` (F,): per-segment Jacobians ``jac`` (S, n, F), residuals
    ``r`` (S, n), Huber curvature weights ``w`` (S, n) and clipped residuals ``psi`` (S, n);
    ``block`` (S,) block of each segment (segments that start within one segment length of each
    other); ``ok`` (S,) segments that did not diverge."""

    x: np.ndarray
    jac: np.ndarray
    r: np.ndarray
    w: np.ndarray
    psi: np.ndarray
    block: np.ndarray
    ok: np.ndarray

    def hessian(self) -> np.ndarray:
        """(F, F) Gauss-Newton matrix of the Huber loss."""
        return np.einsum("snf,sn,sng->fg", self.jac, self.w * self.ok[:, None], self.jac)

    def block_gradients(self) -> np.ndarray:
        """(nb, F) loss gradient per block, centred over blocks."""
        g = np.einsum("snf,sn->sf", self.jac, self.psi * self.ok[:, None])
        gb = np.zeros((int(self.block.max()) + 1, g.shape[1]))
        np.add.at(gb, self.block, g)
        return gb - gb.mean(axis=0)


def sensitivity(problem: Problem, x: np.ndarray, step: float = 1e-4) -> Sensitivity:
    """Central-difference Jacobian of each segment's residuals at ``x`` (F,), 2 F + 1
    parameter sets in one batched rollout (the step is mirrored away from a bound)."""
    F = len(x)
    xc = np.clip(x, step, 1.0 - step)
    X = np.concatenate([xc[None], xc[None] + step * np.eye(F), xc[None] - step * np.eye(F)])
    ev = problem.obj.evaluate(problem.values(X))
    R = ev.residuals.reshape(len(X), ev.residuals.shape[1], -1)  # (2F + 1, S, n)
    jac = np.moveaxis((R[1 : F + 1] - R[F + 1 :]) / (2 * step), 0, 2)  # (S, n, F)
    r0 = R[0]
    cols = problem.obj.column_deltas()
    delta = np.tile(cols, r0.shape[1] // len(cols))
    seg = problem.obj.segments
    block_len = problem.obj.cfg.segment_s
    key = seg.log_index * 100000 + np.floor(seg.t0_s / block_len).astype(int)
    _, block = np.unique(key, return_inverse=True)
    return Sensitivity(
        xc,
        jac,
        r0,
        (np.abs(r0) <= delta).astype(float),
        np.clip(r0, -delta, delta),
        block,
        ~ev.unstable.any(axis=0),
    )


@dataclass
class Identifiability:
    """Principal directions of the fit in the unit cube of the free parameters ``names``:
    ``directions`` (F, F) columns v_k, strongest first; ``relative_curvature`` (F,)
    lambda_k / lambda_max; ``std`` (F,) 1-sigma along each (inf where flat);
    ``unidentified`` (F,) bool per direction."""

    names: list[str]
    directions: np.ndarray
    relative_curvature: np.ndarray
    std: np.ndarray
    unidentified: np.ndarray

    @property
    def null_space(self) -> np.ndarray:
        """(F, K) the unidentified directions."""
        return self.directions[:, self.unidentified]

    def param_unidentified(self, threshold: float = 0.05) -> np.ndarray:
        """(F,) bool: free parameters with a loading above ``threshold`` on an unidentified
        direction (their value alone is not pinned by the logs)."""
        V0 = self.null_space
        if not V0.size:
            return np.zeros(len(self.names), dtype=bool)
        return np.sqrt((V0**2).sum(axis=1)) > threshold

    def describe(self) -> list[str]:
        """One line per unidentified direction: its largest loadings."""
        lines = []
        for k in np.flatnonzero(self.unidentified):
            v = self.directions[:, k]
            v = v * np.sign(v[np.argmax(np.abs(v))])
            order = np.argsort(-np.abs(v))
            terms = " ".join(f"{v[j]:+.2f} {self.names[j]}" for j in order if abs(v[j]) >= 0.1)
            why = (
                "flat"
                if self.relative_curvature[k] <= RCOND
                else f"1-sigma {self.std[k]:.2g} of the range"
            )
            lines.append(f"unidentified direction ({why}): {terms}")
        return lines


def analyse(
    sens: Sensitivity,
    names: list[str],
    *,
    held: np.ndarray | None = None,
    rcond: float = RCOND,
    max_std: float = MAX_STD,
) -> Identifiability:
    """Classify the principal directions of ``sens`` (see the module docstring). ``held``
    (F, K): the directions the fit holds; given, they are exactly the unidentified ones (the
    others are analysed in their orthogonal complement and counted as identified, if weakly)."""
    H = sens.hessian()
    P = np.eye(len(H))
    if held is not None:
        P = P - held @ held.T
        H = P @ H @ P
    lam, V = np.linalg.eigh(H)
    lam, V = lam[::-1], V[:, ::-1]
    lam_max = max(float(lam[0]), 1e-300)
    rel = np.maximum(lam, 0.0) / lam_max
    G = sens.block_gradients()
    nb = len(G)
    var_num = ((G @ V) ** 2).sum(axis=0) * nb / max(nb - 1, 1)
    flat = rel <= rcond
    with np.errstate(divide="ignore", invalid="ignore"):
        std = np.where(flat, np.inf, np.sqrt(var_num) / np.where(flat, 1.0, lam))
    if held is not None:
        in_held = np.linalg.norm(P @ V, axis=0) < 1e-6
        return Identifiability(list(names), V, rel, std, in_held)
    return Identifiability(list(names), V, rel, std, flat | (std > max_std))
