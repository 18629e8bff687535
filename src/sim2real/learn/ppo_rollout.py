"""PPO's rollout on a :class:`~sim2real.learn.vec.VecEnv`: the exploration noise (white,
AR(1)-correlated or state-dependent) and the collection of one rollout into
:class:`~sim2real.learn.ppo.RolloutStorage`, every draw from the caller's generator (so a run
resumes exactly)."""

from __future__ import annotations

import math
from collections import deque
from typing import Any

import numpy as np
import torch

from sim2real.learn.learners.normalize import ReturnScale
from sim2real.learn.ppo import ActorCritic, PPOConfig, RolloutStorage
from sim2real.learn.vec import ObsRoles, VecEnv, concat_obs


class ExplorationNoise:
    """Exploration noise per environment and action. White (``rho`` = 0): N(0, 1) per step,
    times the std. AR(1): ``e <- rho e + sqrt(1 - rho^2) xi``, every step still N(0, 1), so the
    Gaussian log-probabilities of PPO hold per step. State-dependent (gSDE): ``features @ (E *
    std)`` with E ~ N(0, 1) per environment, drawn again every ``resample`` steps: N(0, std(s)^2)
    per step, the same function of the state in between."""

    def __init__(self, rho: float, resample: int, shape: tuple[int, ...], generator) -> None:
        self.rho, self.resample, self.steps = rho, resample, 0
        self.state = torch.randn(shape, generator=generator)

    def sample(
        self, actor, features: torch.Tensor, sigma: torch.Tensor, generator: torch.Generator
    ) -> torch.Tensor:
        """The noise to add to the mean action (N, action_dim); ``sigma`` = actor.std(features)."""
        if actor.state_dependent:
            if self.steps % self.resample == 0:
                self.state = torch.randn(self.state.shape, generator=generator)
            self.steps += 1
            weights = self.state * actor.log_std.exp()  # (N, features, actions)
            return torch.einsum("nf,nfa->na", features, weights)
        xi = torch.randn(self.state.shape, generator=generator)
        if self.rho == 0.0:
            self.state = xi
        else:
            self.state = self.rho * self.state + math.sqrt(1.0 - self.rho**2) * xi
        return sigma * self.state

    def get_state(self) -> dict[str, Any]:
        return {"state": self.state.clone(), "steps": self.steps}

    def set_state(self, state: dict[str, Any]) -> None:
        self.state, self.steps = state["state"].clone(), state["steps"]


@torch.no_grad()
def collect(
    env: VecEnv,
    model: ActorCritic,
    storage: RolloutStorage,
    obs: dict[str, np.ndarray],
    roles: ObsRoles,
    generator: torch.Generator,
    noise: ExplorationNoise,
    reward_scale: ReturnScale | None,
    ppo_cfg: PPOConfig,
    episodes: deque,
    episode_terms: deque | None = None,
) -> dict[str, np.ndarray]:
    """Fill ``storage`` with one rollout; returns the observation to continue from. Each ended
    episode's (return, success) goes to ``episodes``, its reward terms' sums (where the
    environment names its terms) to ``episode_terms``."""
    gamma = ppo_cfg.gamma
    for t in range(storage.steps):
        actor_obs = torch.from_numpy(concat_obs(obs, roles.actor))
        critic_obs = torch.from_numpy(concat_obs(obs, roles.critic))
        mu, features = model.actor.mean_and_features(actor_obs)
        sigma = model.actor.std(features)
        action = mu + noise.sample(model.actor, features, sigma, generator)
        log_prob = torch.distributions.Normal(mu, sigma).log_prob(action).sum(-1)
        result = env.step(action.numpy())
        done = np.asarray(result.terminated) | np.asarray(result.truncated)
        reward = np.asarray(result.reward, dtype=np.float64)
        if reward_scale is not None:
            reward = reward_scale(reward, done)
        reward = torch.as_tensor(reward, dtype=torch.float32)
        # a time limit is not a failure: bootstrap from the value of the last observation
        bootstrap = np.asarray(result.truncated) & ~np.asarray(result.terminated)
        if bootstrap.any():
            final = torch.from_numpy(concat_obs(result.final_obs, roles.critic)[bootstrap])
            reward[torch.from_numpy(bootstrap)] += gamma * model.critic(final)
        storage.actor_obs[t] = actor_obs
        storage.critic_obs[t] = critic_obs
        storage.actions[t] = action
        storage.log_probs[t] = log_prob
        storage.mu[t] = mu
        storage.sigma[t] = sigma
        storage.values[t] = model.critic(critic_obs)
        storage.rewards[t] = reward
        storage.dones[t] = torch.from_numpy(done.astype(np.float32))
        ret = np.asarray(result.info["episode_return"], dtype=float)
        success = np.asarray(result.info["episode_success"], dtype=float)
        ended = np.flatnonzero(np.isfinite(ret))
        episodes.extend((float(ret[i]), float(success[i])) for i in ended)
        if episode_terms is not None and "episode_terms" in result.info:
            episode_terms.extend(np.asarray(result.info["episode_terms"], dtype=float)[ended])
        obs = result.obs
    last_values = model.critic(torch.from_numpy(concat_obs(obs, roles.critic)))
    storage.compute_returns(last_values, gamma, ppo_cfg.lam)
    return obs
