"""Uncertainty of a fit by a bootstrap over blocks of segments, linearized (one Gauss-Newton
step per resample instead of a full refit, so hundreds of resamples cost nothing beyond the
Jacobian of :func:`sim2real.sysid.identifiability.sensitivity`).

A resample draws blocks of segments with replacement (segments overlapping in time share a
block, so correlated data is resampled together) and moves to
x_b = x* - V1 (V1^T H_b V1)^-1 V1^T g_b, with the block-weighted Gauss-Newton matrix H_b and
centred gradient g_b (the full sample stays at x*), inside the span V1 of the identified
directions: the unidentified ones stay where the fit put them. The spread of x_b, mapped back
to the parameters' units, is the uncertainty."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim2real.params.space import ParamSpace
from sim2real.sysid.identifiability import Identifiability, Sensitivity


@dataclass
class Uncertainty:
    """``std`` (P,) and ``cov`` (P, P) in the parameters' units (0 for fixed ones);
    ``ci95`` (P, 2) percentile interval; ``samples`` (B, P) resampled parameter sets (each
    clipped to the bounds); ``cov_unit`` (F, F) covariance of the free parameters' unit
    coordinates over the samples (zero along the unidentified directions)."""

    std: np.ndarray
    cov: np.ndarray
    ci95: np.ndarray
    samples: np.ndarray
    cov_unit: np.ndarray
    method: str


def segment_bootstrap(
    space: ParamSpace,
    base_values: np.ndarray,
    sens: Sensitivity,
    ident: Identifiability,
    n: int,
    seed: int,
) -> Uncertainty:
    """``n`` linearized block-bootstrap resamples around ``sens.x`` (the free parameters'
    unit coordinates; the others keep ``base_values``)."""
    free = np.flatnonzero(space.free_mask())
    V1 = ident.directions[:, ~ident.unidentified]
    jac = sens.jac @ V1  # (S, n, K): sensitivity to the identified coordinates
    wok = sens.w * sens.ok[:, None]
    H = np.einsum("snk,sn,snl->skl", jac, wok, jac)
    g = np.einsum("snk,sn->sk", jac, sens.psi * sens.ok[:, None])
    g = g - g.sum(axis=0) / max(int(sens.ok.sum()), 1) * sens.ok[:, None]
    nb = int(sens.block.max()) + 1
    Hblk = np.zeros((nb, *H.shape[1:]))
    gblk = np.zeros((nb, g.shape[1]))
    np.add.at(Hblk, sens.block, H)
    np.add.at(gblk, sens.block, g)
    K = V1.shape[1]
    ridge = 1e-12 * np.trace(Hblk.sum(0)) / max(K, 1) + 1e-300
    rng = np.random.default_rng(seed)
    u0 = space.to_unit(base_values)
    u0[free] = sens.x
    samples = np.empty((n, len(space)))
    for b in range(n):
        counts = np.bincount(rng.integers(0, nb, nb), minlength=nb)
        Hb = np.einsum("b,bkl->kl", counts, Hblk) + ridge * np.eye(K)
        u = u0.copy()
        u[free] = sens.x - (V1 @ np.linalg.solve(Hb, counts @ gblk) if K else 0.0)
        samples[b] = space.from_unit(u)
    u_free = space.to_unit(samples)[:, free]  # clipped to the bounds by from_unit
    cov_unit = np.atleast_2d(np.cov(u_free, rowvar=False)) if n > 1 else np.zeros((len(free),) * 2)
    cov = np.atleast_2d(np.cov(samples, rowvar=False)) if n > 1 else np.zeros((len(space),) * 2)
    method = (
        f"linearized bootstrap over {nb} blocks of segments ({len(sens.block)} segments, {n} "
        f"resamples, one Gauss-Newton step each, in the {K} identified directions)"
    )
    return Uncertainty(
        samples.std(axis=0),
        cov,
        np.percentile(samples, [2.5, 97.5], axis=0).T,
        samples,
        cov_unit,
        method,
    )
