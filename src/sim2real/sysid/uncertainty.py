"""Uncertainty of a fit by a bootstrap over segments, linearized (one Gauss-Newton step per
resample instead of a full refit, so hundreds of resamples cost one batched rollout).

At the best parameters the scaled residuals of every segment and their Jacobian with respect to
the free parameters (central differences in the unit cube) give per-segment Gauss-Newton terms
H_s = J_s^T J_s and g_s = J_s^T r_s (centred, so the full sample stays at theta*). A resample draws blocks of segments with replacement
(segments overlapping in time share a block, so correlated data is resampled together) and
moves to theta_b = theta* - (sum w H)^-1 sum w g. The spread of theta_b, mapped back to the
parameters' units, is the uncertainty; its covariance is reported in those units too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim2real.sysid.objective import MultipleShooting


@dataclass
class Uncertainty:
    """``std`` (P,) and ``cov`` (P, P) in the parameters' units (0 for fixed ones);
    ``ci95`` (P, 2) percentile interval; ``samples`` (B, P) resampled parameter sets."""

    std: np.ndarray
    cov: np.ndarray
    ci95: np.ndarray
    samples: np.ndarray
    method: str


def segment_bootstrap(
    obj: MultipleShooting, best: np.ndarray, n: int, seed: int, step: float = 1e-3
) -> Uncertainty:
    space = obj.space
    free = np.flatnonzero(space.free_mask())
    u0 = space.to_unit(best)
    u0c = np.clip(u0, step, 1 - step)
    cands = [space.from_unit(u0c)]
    for j in free:
        for s in (+step, -step):
            u = u0c.copy()
            u[j] += s
            cands.append(space.from_unit(u))
    ev = obj.evaluate(np.array(cands))
    S = ev.residuals.shape[1]
    r0 = ev.residuals[0].reshape(S, -1)
    jac = np.stack(
        [
            (ev.residuals[1 + 2 * k] - ev.residuals[2 + 2 * k]).reshape(S, -1) / (2 * step)
            for k in range(len(free))
        ],
        axis=2,
    )  # (S, n_res, F)
    ok = ~ev.unstable[0]
    H = np.einsum("snf,sng->sfg", jac, jac) * ok[:, None, None]
    g = np.einsum("snf,sn->sf", jac, r0) * ok[:, None]
    g = g - g.sum(axis=0) / max(int(ok.sum()), 1) * ok[:, None]  # centred: full sample -> 0
    seg = obj.segments
    block_len = max(obj.cfg.segment_s, 1.0)
    key = seg.log_index * 100000 + np.floor(seg.t0_s / block_len).astype(int)
    _, block = np.unique(key, return_inverse=True)
    nb = block.max() + 1
    rng = np.random.default_rng(seed)
    samples = np.empty((n, len(space)))
    ridge = 1e-9 * np.trace(H.sum(0)) / max(len(free), 1) + 1e-12
    for b in range(n):
        counts = np.bincount(rng.integers(0, nb, nb), minlength=nb)[block]
        Hb = np.einsum("s,sfg->fg", counts, H) + ridge * np.eye(len(free))
        gb = counts @ g
        u = u0.copy()
        u[free] = u0c[free] - np.linalg.solve(Hb, gb)
        samples[b] = space.from_unit(u)
    std = samples.std(axis=0)
    cov = np.cov(samples, rowvar=False) if n > 1 else np.zeros((len(space),) * 2)
    ci = np.percentile(samples, [2.5, 97.5], axis=0).T
    method = (
        f"linearized bootstrap over {nb} blocks of segments ({S} segments, {n} resamples, "
        f"one Gauss-Newton step each)"
    )
    return Uncertainty(std, np.atleast_2d(cov), ci, samples, method)
