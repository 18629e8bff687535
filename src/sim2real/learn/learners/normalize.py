"""Running statistics shared by the learners: Chan et al.'s merge of moments and the scaling of
rewards by the running standard deviation of the discounted return."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def merge_moments(mean, var, count, batch_mean, batch_var, n: int):
    """Chan et al.'s parallel update: mean, population variance and count of ``count`` samples
    merged with a batch of ``n`` (floats or tensors alike)."""
    total = count + n
    w = float(n / total)
    delta = batch_mean - mean
    return mean + w * delta, (1 - w) * var + w * batch_var + w * (1 - w) * delta**2, total


class ReturnScale:
    """Rewards divided by the running standard deviation of the discounted return (Engstrom et
    al. 2020, "Implementation Matters"; SB3's ``VecNormalize``): the critic's targets stay O(1)
    for any reward scale and discount."""

    def __init__(self, num_envs: int, gamma: float) -> None:
        self.gamma = gamma
        self.returns = np.zeros(num_envs)
        self.count, self.mean, self.var = 1e-4, 0.0, 1.0

    def __call__(self, reward: np.ndarray, done: np.ndarray) -> np.ndarray:
        self.returns = self.returns * self.gamma + reward
        self.mean, self.var, self.count = merge_moments(
            self.mean, self.var, self.count, self.returns.mean(), self.returns.var(), len(reward)
        )
        self.returns[done] = 0.0
        return reward / math.sqrt(self.var + 1e-8)

    def state(self) -> dict[str, Any]:
        return {"returns": self.returns.copy(), "stats": (self.count, self.mean, self.var)}

    def load_state(self, state: dict[str, Any]) -> None:
        self.returns = state["returns"].copy()
        self.count, self.mean, self.var = state["stats"]
