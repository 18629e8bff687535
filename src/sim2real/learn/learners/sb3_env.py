"""Our :class:`~sim2real.learn.vec.VecEnv` seen as Stable-Baselines3's ``VecEnv``: one Box
observation (the groups an actor reads, side by side, as :func:`~sim2real.learn.vec.concat_obs`
puts them), actions in [-1, 1].

SB3's conventions for an autoresetting batch: ``dones = terminated | truncated``; for a
finished environment ``infos[i]["terminal_observation"]`` is the last observation of its
episode (our ``final_obs``) and ``infos[i]["TimeLimit.truncated"]`` says the time limit ended
it (SB3's replay buffer then bootstraps); ``infos[i]["episode"]`` carries the return and length
(what SB3's ``Monitor`` would add). Finished episodes' return and success are also appended to
``episodes``. SB3's ``seed()`` sets the seed of the next ``reset``.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv as Sb3VecEnvBase

from sim2real.learn.vec import VecEnv, concat_obs


class Sb3VecEnv(Sb3VecEnvBase):
    """SB3's view of ``env``; the observation is the concatenation of ``groups``."""

    def __init__(
        self,
        env: VecEnv,
        groups: tuple[str, ...],
        episodes: deque[tuple[float, float]] | None = None,
    ) -> None:
        for name in groups:
            if name not in env.obs_groups:
                raise KeyError(f"no observation group {name!r} (have {', '.join(env.obs_groups)})")
        self.env, self.groups = env, tuple(groups)
        self.render_mode = None
        self.episodes = episodes if episodes is not None else deque(maxlen=200)
        dim = sum(env.obs_groups[n].dim for n in self.groups)
        obs_space = gym.spaces.Box(-np.inf, np.inf, (dim,), np.float32)
        action_space = gym.spaces.Box(-1.0, 1.0, (env.action_dim,), np.float32)
        super().__init__(env.num_envs, obs_space, action_space)
        self._actions: np.ndarray | None = None

    def reset(self) -> np.ndarray:
        seed = self._seeds[0]
        obs = self.env.reset(seed=seed)
        self._reset_seeds()
        return concat_obs(obs, self.groups)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, dtype=np.float64).reshape(self.num_envs, -1)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
        result = self.env.step(self._actions)
        terminated = np.asarray(result.terminated, dtype=bool)
        truncated = np.asarray(result.truncated, dtype=bool)
        done = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        ret = np.asarray(result.info["episode_return"], dtype=float)
        success = np.asarray(result.info["episode_success"], dtype=float)
        length = np.asarray(result.info["episode_length"])
        if done.any():
            final = concat_obs(result.final_obs, self.groups)
            for i in np.flatnonzero(done):
                infos[i]["terminal_observation"] = final[i].copy()
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        for i in np.flatnonzero(np.isfinite(ret)):
            infos[i]["episode"] = {"r": float(ret[i]), "l": int(length[i]), "t": 0.0}
            self.episodes.append((float(ret[i]), float(success[i])))
        obs = concat_obs(result.obs, self.groups)
        return obs, np.asarray(result.reward, dtype=np.float32), done, infos

    def close(self) -> None:
        close = getattr(self.env, "close", None)
        if callable(close):
            close()

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        return [getattr(self, attr_name) for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        raise AttributeError(f"cannot set {attr_name!r} per environment of a batch")

    def env_method(self, method_name: str, *args, indices=None, **kwargs) -> list[Any]:
        raise AttributeError(f"no per-environment method {method_name!r} in a batch")

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices=None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]
