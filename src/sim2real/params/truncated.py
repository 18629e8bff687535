"""One rejection sampler for every prior truncated to bounds (a parameter's prior, a joint
covariance, a randomization term): out-of-bounds draws are redrawn, rows as a whole."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

ATTEMPTS = 100
"""Redraw rounds before the rest is clipped to the bounds (reached only when the bounds hold
almost none of the prior's mass)."""


def draw_truncated(
    raw: Callable[[int], np.ndarray],
    size: int,
    lower: float | np.ndarray,
    upper: float | np.ndarray,
) -> np.ndarray:
    """``size`` draws of ``raw(m)`` (shape ``(m,)`` or ``(m, k)``, bounds per column) inside
    [lower, upper]; a row with any value outside is redrawn whole, so joint draws keep their
    correlation."""
    out = raw(size)
    for _ in range(ATTEMPTS):
        outside = (out < lower) | (out > upper)
        bad = np.flatnonzero(outside if outside.ndim == 1 else outside.any(axis=1))
        if bad.size == 0:
            return out
        out[bad] = raw(bad.size)
    return np.clip(out, lower, upper)
