"""One environment of a task as a ``gymnasium.Env`` (``num_envs = 1`` underneath); its
observation is one observation group (``policy`` by default)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import gymnasium
import numpy as np

from sim2real.learn.envs.manager import ManagerVecEnv
from sim2real.learn.envs.task import Task
from sim2real.learn.randomization import Randomization


class TaskEnv(gymnasium.Env):
    """A single environment of ``task``."""

    metadata: ClassVar[dict] = {"render_modes": []}

    def __init__(
        self,
        task: Task,
        dr: str | Path | Randomization | None = "default",
        config: Any = None,
        obs_group: str = "policy",
    ) -> None:
        self.vec = (task.vec_env or ManagerVecEnv)(task, 1, seed=0, dr=dr, config=config)
        self.obs_group = obs_group
        dim = self.vec.obs_groups[obs_group].dim
        self.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, (dim,), np.float32)
        self.action_space = gymnasium.spaces.Box(-1.0, 1.0, (self.vec.action_dim,), np.float32)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is None:
            seed = int(self.np_random.integers(2**31))
        obs = self.vec.reset(seed)
        return obs[self.obs_group][0], {}

    def step(self, action):
        res = self.vec.step(np.asarray(action, dtype=float).reshape(1, -1))
        # episode statistics only where an episode ended (NaN elsewhere would break equality)
        info = {
            k: float(v[0])
            for k, v in res.info.items()
            if np.ndim(v) == 1 and np.isfinite(float(v[0]))
        }
        terms = res.info.get("episode_terms")
        if terms is not None and np.isfinite(terms[0]).all():  # {term: episode sum}
            info["episode_terms"] = dict(
                zip(self.vec.reward_names, map(float, terms[0]), strict=True)
            )
        done = res.truncated[0] or res.terminated[0]
        obs = res.final_obs if done else res.obs
        return (
            obs[self.obs_group][0],
            float(res.reward[0]),
            bool(res.terminated[0]),
            bool(res.truncated[0]),
            info,
        )

    def close(self) -> None:
        self.vec.close()


def gym_factory(task: Task):
    """The entry point gymnasium registers for ``task``."""

    def make(**kwargs) -> TaskEnv:
        return TaskEnv(task, **kwargs)

    return make
