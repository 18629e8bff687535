"""rsl_rl's PPO (``rsl_rl.algorithms.PPO``, its ``MLPModel`` actor and critic with empirical
observation normalization) on our environments, one iteration at a time.

The loop is rsl_rl's ``OnPolicyRunner.learn`` (rollout under ``torch.inference_mode``:
``alg.act``, ``env.step``, ``alg.process_env_step``; ``alg.compute_returns``; ``alg.update``);
logging, checkpoints and progress stay with our runner. Settings map from our
:class:`~sim2real.learn.ppo.PPOConfig` / :class:`~sim2real.learn.ppo.NetConfig` onto rsl_rl's
arguments; two of ours have no rsl_rl counterpart and are refused rather than ignored
(``bound_coef``, and the networks' ``bounded_mean`` / ``state_dependent_noise``). Reward
normalization is done by the adapter (:mod:`.rsl_env`); correlated exploration noise by a
distribution plugged into rsl_rl's ``distribution_cfg`` (:class:`ColoredGaussianDistribution`).
Two of rsl_rl's defaults differ from our PPO's and are mapped onto ours unless asked
otherwise: the Gaussian's std is learned in log space (``std_type``) and the mean action's
layer starts orthogonal with gain 0.01 (``last_layer_gain``), near zero action.
``distribution="beta"``: rsl_rl's ``BetaDistribution`` instead, actions bounded to [-1, 1] by
construction (the field's answer to the mean drifting past a clipped bound, which our PPO's
``bound_coef`` penalizes); its draws are independent per step.

rsl_rl samples with torch's global generator: the learner seeds it and its state is part of
:meth:`RslPPO.get_state`, so a resumed run continues exactly.
"""

from __future__ import annotations

import contextlib
import io
import math
import time
from collections import deque
from typing import Any, Literal

import torch
from rsl_rl.algorithms import PPO
from rsl_rl.modules.distribution import GaussianDistribution
from torch import nn

from sim2real.learn.learners.normalize import ReturnScale
from sim2real.learn.learners.rsl_env import RslVecEnv
from sim2real.learn.ppo import NetConfig, PPOConfig
from sim2real.learn.vec import ObsRoles, VecEnv

_DISTRIBUTION = "sim2real.learn.learners.rsl_ppo:ColoredGaussianDistribution"


class ColoredGaussianDistribution(GaussianDistribution):
    """rsl_rl's Gaussian with AR(1) exploration noise in the rollout: ``e <- rho e +
    sqrt(1 - rho^2) xi`` per environment, every step still N(0, 1), so the per-step Gaussian
    log-probabilities PPO uses hold. ``rho`` = 0: rsl_rl's white noise. Outside inference mode
    (the update re-evaluates the distribution on minibatches) it samples as rsl_rl does."""

    def __init__(self, output_dim: int, rho: float = 0.0, **kw: Any) -> None:
        super().__init__(output_dim, **kw)
        self.rho = float(rho)
        self.noise: torch.Tensor | None = None

    def sample(self) -> torch.Tensor:
        if self.rho == 0.0 or not torch.is_inference_mode_enabled():
            return super().sample()
        mean, std = self.mean, self.std
        xi = torch.randn_like(mean)
        if self.noise is None or self.noise.shape != mean.shape:
            self.noise = xi
        else:
            self.noise = self.rho * self.noise + math.sqrt(1.0 - self.rho**2) * xi
        return mean + std * self.noise


class DeterministicActor(nn.Module):
    """Normalize, MLP, the distribution's deterministic output (the Gaussian's or the Beta's
    mean), clamp to [-1, 1]: (B, actor_dim) float32 -> (B, A)."""

    def __init__(self, normalizer: nn.Module, mlp: nn.Module, head: nn.Module) -> None:
        super().__init__()
        self.normalizer, self.mlp, self.head = normalizer, mlp, head

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.head(self.mlp(self.normalizer(obs))).clamp(-1.0, 1.0)


def rsl_train_cfg(
    ppo: PPOConfig,
    net: NetConfig,
    roles: ObsRoles,
    steps_per_env: int,
    rho: float,
    distribution: Literal["gaussian", "beta"] = "gaussian",
    std_type: Literal["log", "scalar"] = "log",
) -> dict[str, Any]:
    """rsl_rl's runner configuration for our settings. ``std_type`` "log": the Gaussian's std
    learned in log space, as our PPO's (rsl_rl's default is "scalar", the std itself)."""
    if distribution == "beta":
        if rho:
            raise ValueError("correlated exploration noise needs the Gaussian distribution")
        dist_cfg: dict[str, Any] = {"class_name": "BetaDistribution"}
    else:
        dist_cfg = {
            "class_name": _DISTRIBUTION,
            "init_std": net.init_std,
            "std_type": std_type,
            "rho": rho,
        }
    if ppo.bound_coef != 0.0:
        raise ValueError("rsl_rl's PPO has no action-bound loss: set ppo.bound_coef to 0")
    if net.bounded_mean or net.state_dependent_noise:
        raise ValueError("rsl_rl's MLPModel has no bounded mean or state-dependent noise")
    model = {"class_name": "MLPModel", "activation": net.activation, "obs_normalization": True}
    return {
        "num_steps_per_env": steps_per_env,
        "obs_groups": {"actor": list(roles.actor), "critic": list(roles.critic)},
        "multi_gpu": None,
        "actor": {
            **model,
            "hidden_dims": list(net.actor_hidden),
            "distribution_cfg": dist_cfg,
        },
        "critic": {**model, "hidden_dims": list(net.critic_hidden)},
        "algorithm": {
            "class_name": "PPO",
            "num_learning_epochs": ppo.epochs,
            "num_mini_batches": ppo.minibatches,
            "clip_param": ppo.clip_ratio,
            "gamma": ppo.gamma,
            "lam": ppo.lam,
            "value_loss_coef": ppo.value_coef,
            "entropy_coef": ppo.entropy_coef,
            "learning_rate": ppo.learning_rate,
            "max_grad_norm": ppo.max_grad_norm,
            "use_clipped_value_loss": ppo.clipped_value_loss,
            "schedule": ppo.schedule,
            "desired_kl": ppo.desired_kl,
        },
    }


class RslPPO:
    """rsl_rl's PPO on ``env``; ``iterate()`` collects ``steps_per_env`` steps of every
    environment and updates."""

    def __init__(
        self,
        env: VecEnv,
        *,
        ppo: PPOConfig,
        net: NetConfig,
        roles: ObsRoles,
        steps_per_env: int,
        seed: int,
        noise_correlation_s: float = 0.0,
        episode_window: int = 200,
        distribution: Literal["gaussian", "beta"] = "gaussian",
        std_type: Literal["log", "scalar"] = "log",
        last_layer_gain: float | None = 0.01,
    ) -> None:
        self.episodes: deque[tuple[float, float]] = deque(maxlen=episode_window)
        scale = ReturnScale(env.num_envs, ppo.gamma) if ppo.normalize_rewards else None
        self.env = RslVecEnv(env, scale, self.episodes)
        self.steps_per_env = steps_per_env
        rho = math.exp(-env.control_dt / noise_correlation_s) if noise_correlation_s else 0.0
        self.cfg = rsl_train_cfg(ppo, net, roles, steps_per_env, rho, distribution, std_type)
        torch.manual_seed(seed)
        obs = self.env.reset(seed=seed)
        with contextlib.redirect_stdout(io.StringIO()):  # it prints the models
            self.alg = PPO.construct_algorithm(obs, self.env, self.cfg, "cpu")
        if last_layer_gain is not None and distribution == "gaussian":
            # our PPO's start: the mean action's layer orthogonal with a small gain, so every
            # environment starts near zero action (rsl_rl keeps torch's default there)
            last = [m for m in self.alg.get_policy().mlp if isinstance(m, nn.Linear)][-1]
            nn.init.orthogonal_(last.weight, last_layer_gain)
        self.alg.train_mode()

    @property
    def batch(self) -> int:
        return self.env.num_envs * self.steps_per_env

    def iterate(self) -> dict[str, float]:
        """One rollout and update: timings, losses, learning rate and action std."""
        t0 = time.perf_counter()
        with torch.inference_mode():
            obs = self.env.get_observations()
            for _ in range(self.steps_per_env):
                actions = self.alg.act(obs)
                obs, rewards, dones, extras = self.env.step(actions)
                self.alg.process_env_step(obs, rewards, dones, extras)
            self.alg.compute_returns(obs)
        t1 = time.perf_counter()
        losses = self.alg.update()
        t2 = time.perf_counter()
        return {
            "collect_s": t1 - t0,
            "learn_s": t2 - t1,
            "policy_loss": losses["surrogate"],
            "value_loss": losses["value"],
            "entropy": losses["entropy"],
            "learning_rate": self.alg.learning_rate,
            "action_std": float(self.alg.get_policy().output_std.detach().mean()),
        }

    def policy(self) -> DeterministicActor:
        actor = self.alg.get_policy()
        head = actor.distribution.as_deterministic_output_module()
        return DeterministicActor(actor.obs_normalizer, actor.mlp, head).eval()

    def get_state(self) -> dict[str, Any]:
        noise = getattr(self.alg.get_policy().distribution, "noise", None)
        return {
            "alg": self.alg.save(),
            "learning_rate": self.alg.learning_rate,
            "noise": None if noise is None else noise.clone(),
            "torch_rng": torch.get_rng_state(),
            "env": self.env.get_state(),
        }

    def set_state(self, state: dict[str, Any]) -> None:
        self.alg.load(state["alg"], None, strict=True)
        self.alg.learning_rate = state["learning_rate"]
        noise, dist = state["noise"], self.alg.get_policy().distribution
        if hasattr(dist, "noise"):
            dist.noise = None if noise is None else noise.clone()
        torch.set_rng_state(state["torch_rng"])
        self.env.set_state(state["env"])
