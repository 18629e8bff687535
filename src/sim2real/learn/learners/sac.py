"""Stable-Baselines3's SAC (soft actor-critic, off-policy: a replay buffer, twin critics, a
tuned entropy coefficient; optionally gSDE exploration) on our environments, through
:class:`~sim2real.learn.learners.sb3_env.Sb3VecEnv` and SB3's ``VecNormalize`` (running
observation and return statistics, applied when the replay buffer is sampled).

``iterate()`` runs SB3's own ``learn`` for ``steps_per_iteration`` environment steps more
(``reset_num_timesteps=False``: the buffer, the optimizers and the last observation carry on).
SAC's critic reads what the actor reads (SB3's SAC has no asymmetric critic), so the roles'
critic groups are not used. ``policy()`` is the deterministic actor: VecNormalize's observation
standardization, SB3's actor, tanh(mean) in [-1, 1].

``get_state()`` / ``set_state()``: what SB3's ``save`` and ``save_replay_buffer`` hold (the
networks with their targets, the optimizers, the entropy coefficient, the replay buffer) plus
what they leave out and a continued ``learn`` reads: the counters, the last observation,
VecNormalize's running statistics, every random generator SB3 draws from (torch's, numpy's,
Python's, the action space's) and the environment's state. A resumed run continues exactly.
"""

from __future__ import annotations

import copy
import random
import time
from collections import deque
from typing import Any

import numpy as np
import torch
from pydantic import Field
from stable_baselines3 import SAC
from stable_baselines3.common.logger import Logger
from stable_baselines3.common.vec_env import VecNormalize
from torch import nn

from sim2real.core.strict import StrictModel
from sim2real.learn.learners.sb3_env import Sb3VecEnv
from sim2real.learn.vec import VecEnv

_MODEL_FIELDS = (  # what a continued SB3 ``learn`` reads besides the parameters and the buffer
    "num_timesteps",
    "_n_updates",
    "_episode_num",
    "_last_obs",
    "_last_original_obs",
    "_last_episode_starts",
    "_current_progress_remaining",
)
_VENV_FIELDS = ("obs_rms", "ret_rms", "returns", "old_obs", "old_reward")


class SACConfig(StrictModel):
    """SB3 SAC's settings used here (SB3's defaults unless said)."""

    learning_rate: float = Field(3e-4, gt=0, description="Adam step size of actor and critics")
    buffer_size: int = Field(1_000_000, ge=1, description="replay buffer capacity [transitions]")
    learning_starts: int = Field(
        10_000, ge=0, description="environment steps of uniform random actions before learning"
    )
    batch_size: int = Field(256, ge=1, description="transitions per gradient step")
    tau: float = Field(0.005, gt=0, le=1, description="Polyak factor of the target critics")
    gamma: float = Field(0.99, gt=0, le=1, description="discount per control step")
    train_freq: int = Field(
        1, ge=1, description="batch steps (each num_envs environment steps) between updates"
    )
    gradient_steps: int = Field(1, ge=1, description="gradient steps per update")
    ent_coef: str | float = Field("auto", description="entropy weight, 'auto': tuned")
    use_sde: bool = Field(False, description="gSDE exploration (Raffin et al. 2022)")
    sde_sample_freq: int = Field(-1, description="steps between gSDE noise draws (-1: per rollout)")
    net_arch: list[int] = Field([256, 256], description="hidden widths of actor and critics")
    norm_obs: bool = Field(True, description="standardize observations (VecNormalize)")
    norm_reward: bool = Field(
        False,
        description="divide rewards by the running std of the discounted return (on the toy "
        "rotor it slowed SAC's learning: the tuned entropy term outweighed rewards that small)",
    )


class DeterministicSACActor(nn.Module):
    """Standardize (VecNormalize's statistics, clipped), SB3's actor, deterministic:
    (B, obs_dim) float32 -> (B, A) in [-1, 1]."""

    def __init__(
        self, actor: nn.Module, mean: np.ndarray, var: np.ndarray, clip: float, eps: float
    ):
        super().__init__()
        self.actor = actor
        self.register_buffer("mean", torch.as_tensor(mean, dtype=torch.float32))
        self.register_buffer("std", torch.as_tensor(np.sqrt(var + eps), dtype=torch.float32))
        self.clip = float(clip)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        x = ((obs - self.mean) / self.std).clamp(-self.clip, self.clip)
        return self.actor(x, deterministic=True).clamp(-1.0, 1.0)


class Sb3SAC:
    """SB3's SAC on ``env``; the observation is the concatenation of ``groups``."""

    def __init__(
        self,
        env: VecEnv,
        *,
        config: SACConfig,
        groups: tuple[str, ...],
        steps_per_iteration: int,
        seed: int,
        episode_window: int = 200,
    ) -> None:
        self.cfg = config
        self.episodes: deque[tuple[float, float]] = deque(maxlen=episode_window)
        self.steps_per_iteration = steps_per_iteration
        self.venv = VecNormalize(
            Sb3VecEnv(env, groups, self.episodes),
            norm_obs=config.norm_obs,
            norm_reward=config.norm_reward,
            gamma=config.gamma,
        )
        self.model = SAC(
            "MlpPolicy",
            self.venv,
            learning_rate=config.learning_rate,
            buffer_size=config.buffer_size,
            learning_starts=config.learning_starts,
            batch_size=config.batch_size,
            tau=config.tau,
            gamma=config.gamma,
            train_freq=config.train_freq,
            gradient_steps=config.gradient_steps,
            ent_coef=config.ent_coef,
            use_sde=config.use_sde,
            sde_sample_freq=config.sde_sample_freq,
            policy_kwargs={"net_arch": list(config.net_arch)},
            seed=seed,
            device="cpu",
            verbose=0,
        )
        # A logger of our own: without one every learn() call makes SB3 create a fresh
        # SB3-<time> folder in the temp directory (one per iteration).
        self.model.set_logger(Logger(folder=None, output_formats=[]))

    @property
    def batch(self) -> int:
        return self.steps_per_iteration

    def iterate(self) -> dict[str, float]:
        """``steps_per_iteration`` environment steps with SAC's updates in between."""
        t0 = time.perf_counter()
        self.model.learn(self.steps_per_iteration, reset_num_timesteps=False, progress_bar=False)
        log = self.model.logger.name_to_value
        out = {"wall_s": time.perf_counter() - t0, "env_steps": float(self.model.num_timesteps)}
        for key in ("train/actor_loss", "train/critic_loss", "train/ent_coef"):
            if key in log:
                out[key.split("/")[1]] = float(log[key])
        return out

    def policy(self) -> DeterministicSACActor:
        rms = self.venv.obs_rms
        dim = self.venv.observation_space.shape[0]
        mean = rms.mean if self.cfg.norm_obs else np.zeros(dim)
        var = rms.var if self.cfg.norm_obs else np.ones(dim) - self.venv.epsilon
        clip = self.venv.clip_obs if self.cfg.norm_obs else np.inf
        return DeterministicSACActor(
            self.model.policy.actor, mean, var, clip, self.venv.epsilon
        ).eval()

    def get_state(self) -> dict[str, Any]:
        m = self.model
        return copy.deepcopy(
            {
                "params": m.get_parameters(),
                "log_ent_coef": getattr(m, "log_ent_coef", None),
                "fields": {k: getattr(m, k) for k in _MODEL_FIELDS},
                "ep_info": list(m.ep_info_buffer or ()),
                "ep_success": list(m.ep_success_buffer or ()),
                "replay_buffer": m.replay_buffer,
                "venv": {k: getattr(self.venv, k) for k in _VENV_FIELDS},
                "rng": {
                    "torch": torch.get_rng_state(),
                    "numpy": np.random.get_state(),
                    "python": random.getstate(),
                    "action_space": m.action_space.np_random.bit_generator.state,
                },
                "env": self.venv.venv.env.get_state(),
                "episodes": list(self.episodes),
            }
        )

    def set_state(self, state: dict[str, Any]) -> None:
        state = copy.deepcopy(state)
        m = self.model
        m.set_parameters(state["params"], exact_match=True)
        if state["log_ent_coef"] is not None:
            with torch.no_grad():  # in place: the entropy optimizer holds this tensor
                m.log_ent_coef.copy_(state["log_ent_coef"])
        for k, v in state["fields"].items():
            setattr(m, k, v)
        m.ep_info_buffer = deque(state["ep_info"], maxlen=m._stats_window_size)
        m.ep_success_buffer = deque(state["ep_success"], maxlen=m._stats_window_size)
        m.replay_buffer = state["replay_buffer"]
        for k, v in state["venv"].items():
            setattr(self.venv, k, v)
        rng = state["rng"]
        torch.set_rng_state(rng["torch"])
        np.random.set_state(rng["numpy"])
        random.setstate(rng["python"])
        m.action_space.np_random.bit_generator.state = rng["action_space"]
        self.venv.venv.env.set_state(state["env"])
        self.episodes.clear()
        self.episodes.extend(state["episodes"])
