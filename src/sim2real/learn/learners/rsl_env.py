"""Our :class:`~sim2real.learn.vec.VecEnv` seen as rsl_rl's ``VecEnv``: torch tensors in, a
``TensorDict`` of the observation groups out (rsl_rl's ``obs_groups`` then map groups to the
actor and critic sets as our :class:`~sim2real.learn.vec.ObsRoles` do).

``dones`` are ``terminated | truncated``; ``extras["time_outs"]`` marks the truncations, which
rsl_rl's PPO bootstraps (from the value of the last observation before the step: rsl_rl's
approximation, our environment's ``final_obs`` is not used). Finished episodes' return and
success are appended to ``episodes`` for the runner's curve. With ``reward_scale`` the rewards
rsl_rl sees are divided by the running std of the discounted return (rsl_rl's PPO does not
normalize rewards, its discounted-variation normalizer serves only RND; returns here are in the
hundreds).
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np
import torch
from rsl_rl.env import VecEnv as RslVecEnvBase
from tensordict import TensorDict

from sim2real.learn.learners.normalize import ReturnScale
from sim2real.learn.vec import VecEnv


def obs_tensordict(obs: dict[str, np.ndarray], num_envs: int) -> TensorDict:
    """(N, dim) float32 tensors by group name, batch size N."""
    groups = {k: torch.as_tensor(np.asarray(v, dtype=np.float32)) for k, v in obs.items()}
    return TensorDict(groups, batch_size=[num_envs])


class RslVecEnv(RslVecEnvBase):
    """rsl_rl's view of ``env`` (CPU). Call :meth:`reset` once before the runner reads
    :meth:`get_observations`."""

    def __init__(
        self,
        env: VecEnv,
        reward_scale: ReturnScale | None = None,
        episodes: deque[tuple[float, float]] | None = None,
    ) -> None:
        self.env = env
        self.num_envs = env.num_envs
        self.num_actions = env.action_dim
        self.max_episode_length = env.max_episode_steps
        self.episode_length_buf = torch.zeros(env.num_envs, dtype=torch.long)
        self.device = "cpu"
        self.cfg = {"env_id": env.env_id}
        self.reward_scale = reward_scale
        self.episodes = episodes if episodes is not None else deque(maxlen=200)
        self._obs: TensorDict | None = None

    def reset(self, seed: int | None = None) -> TensorDict:
        self._obs = obs_tensordict(self.env.reset(seed=seed), self.num_envs)
        self.episode_length_buf.zero_()
        return self._obs

    def get_observations(self) -> TensorDict:
        if self._obs is None:
            raise RuntimeError("reset the environment first")
        return self._obs

    def step(self, actions: torch.Tensor) -> tuple[TensorDict, torch.Tensor, torch.Tensor, dict]:
        result = self.env.step(actions.detach().cpu().numpy().astype(np.float64))
        terminated = np.asarray(result.terminated, dtype=bool)
        truncated = np.asarray(result.truncated, dtype=bool)
        done = terminated | truncated
        reward = np.asarray(result.reward, dtype=np.float64)
        if self.reward_scale is not None:
            reward = self.reward_scale(reward, done)
        ret = np.asarray(result.info["episode_return"], dtype=float)
        success = np.asarray(result.info["episode_success"], dtype=float)
        for i in np.flatnonzero(np.isfinite(ret)):
            self.episodes.append((float(ret[i]), float(success[i])))
        self.episode_length_buf += 1
        self.episode_length_buf[torch.from_numpy(done)] = 0
        self._obs = obs_tensordict(result.obs, self.num_envs)
        extras: dict[str, Any] = {"time_outs": torch.from_numpy(truncated & ~terminated)}
        return (
            self._obs,
            torch.as_tensor(reward, dtype=torch.float32),
            torch.from_numpy(done.astype(np.int64)),
            extras,
        )

    def get_state(self) -> dict[str, Any]:
        return {
            "env": self.env.get_state(),
            "obs": None if self._obs is None else self._obs.to_dict(),
            "episode_length": self.episode_length_buf.clone(),
            "reward_scale": None if self.reward_scale is None else self.reward_scale.state(),
            "episodes": list(self.episodes),
        }

    def set_state(self, state: dict[str, Any]) -> None:
        self.env.set_state(state["env"])
        obs = state["obs"]
        self._obs = None if obs is None else TensorDict(obs, batch_size=[self.num_envs])
        self.episode_length_buf = state["episode_length"].clone()
        if self.reward_scale is not None:
            self.reward_scale.load_state(state["reward_scale"])
        self.episodes.clear()
        self.episodes.extend(state["episodes"])
