"""The weighted reward terms of an environment and what each one adds up to over the running
episode (mjlab and Isaac Lab log the same as ``Episode_Reward/<term>``): which term a policy
earns its return from, and which one it pays. A squared-speed penalty that outweighs the height
and the band on the way to a hold is seen here, not in the return alone."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


class RewardTerms:
    """``weighted``: {name: (weight, term)}; a term maps a StepView to (N,) values."""

    def __init__(self, weighted: dict[str, tuple[float, Callable]], num_envs: int) -> None:
        self.names = tuple(weighted)
        self._weighted = list(weighted.values())
        self.episode = np.zeros((num_envs, len(self.names)))
        """(N, terms) weighted sum of each term over each environment's running episode."""

    def __call__(self, view) -> np.ndarray:
        """(N,) this step's reward; each weighted term is added to its episode sum."""
        if not self._weighted:
            return np.zeros(len(self.episode))
        values = np.stack([weight * term(view) for weight, term in self._weighted], axis=1)
        self.episode += values
        return values.sum(axis=1)

    def state(self) -> dict:
        return {"names": self.names, "episode": self.episode.copy()}

    def load_state(self, saved) -> None:
        """The sums of ``state()``, matched by name: a term the saved run did not have (its
        reward weights changed since, a curriculum's next stage) starts from zero. A bare array
        is a state saved before the names were (the same terms); None, before the sums were."""
        self.episode[:] = 0.0
        if saved is None:
            return
        if not isinstance(saved, dict):
            saved = {"names": self.names, "episode": saved}
        for j, name in enumerate(saved["names"]):
            if name in self.names:
                self.episode[:, self.names.index(name)] = np.asarray(saved["episode"])[:, j]
