"""One rule for choosing on validation worlds, among seeds (:mod:`sim2real.learn.seeds`) and
among a run's iterates (:mod:`sim2real.learn.validation_watch`): the mean success rate over
the worlds that could judge the policy, ties broken by the mean return; a world the policy was
skipped in (``EvalResult.to_dict()`` without figures) counts for nothing."""

from __future__ import annotations

import math
from typing import Any


def mean_over(worlds: list[dict[str, Any]], field: str) -> float:
    """The mean of ``field`` over the worlds that have it (NaN when none has)."""
    values = [w[field] for w in worlds if field in w]
    return sum(values) / len(values) if values else math.nan


def score_key(success: float, mean_return: float) -> tuple[float, float]:
    """Sort key: higher is better, NaN lowest."""
    return (_finite(success), _finite(mean_return))


def _finite(x: float) -> float:
    return x if x == x else -math.inf
