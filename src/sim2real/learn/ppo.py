"""A compact PPO (proximal policy optimization) on PyTorch for CPU environments with numpy
observations.

The structure follows rsl_rl (``ActorCritic``, ``RolloutStorage``, ``PPO.update`` with a
clipped surrogate, a clipped value loss, an entropy bonus and a KL-adaptive learning rate);
rsl-rl-lib itself is written around Isaac-style torch environments and tensordict, so a
self-contained version for :class:`sim2real.learn.vec.VecEnv` is shorter than an adapter.

Observations are normalized inside the networks (:class:`EmpiricalNormalizer`, one per role),
so a saved actor is the whole observation-to-action map: what export puts into the ONNX graph.
All sampling goes through one ``torch.Generator`` owned by the caller, so a run can be resumed
bit-exactly.
"""

from __future__ import annotations

import itertools
import math
from typing import Literal

import torch
from pydantic import Field, PositiveInt
from torch import nn

from sim2real.core.strict import StrictModel
from sim2real.learn.learners.normalize import merge_moments

Activation = Literal["elu", "tanh", "relu"]
_ACTIVATIONS: dict[str, type[nn.Module]] = {"elu": nn.ELU, "tanh": nn.Tanh, "relu": nn.ReLU}


class PPOConfig(StrictModel):
    """Hyperparameters of one PPO update (rsl_rl's defaults where they apply)."""

    gamma: float = Field(0.99, gt=0, le=1, description="discount per control step")
    lam: float = Field(0.95, ge=0, le=1, description="GAE lambda")
    clip_ratio: float = Field(0.2, gt=0, description="PPO clipping of the probability ratio")
    epochs: int = Field(5, ge=1, description="passes over each rollout")
    minibatches: int = Field(4, ge=1, description="minibatches per pass")
    learning_rate: float = Field(
        1e-3, gt=0, description="Adam step size (initial if adaptive or linear)"
    )
    schedule: Literal["adaptive", "fixed", "linear"] = Field(
        "adaptive",
        description="adaptive: scale the step size to keep the KL near desired_kl; linear: "
        "anneal it to 0 over the run (Stable-Baselines3's linear schedule, CleanRL's anneal_lr)",
    )
    desired_kl: float = Field(0.01, gt=0, description="target KL per update (adaptive)")
    entropy_coef: float = Field(0.005, ge=0, description="weight of the entropy bonus")
    value_coef: float = Field(1.0, ge=0, description="weight of the value loss")
    clipped_value_loss: bool = Field(True, description="clip the value change like the ratio")
    normalize_rewards: bool = Field(
        True,
        description="divide rewards by the running std of the discounted return, so values stay "
        "O(1) whatever the reward's scale (the clipped value loss moves a value by at most "
        "clip_ratio per update: with returns in the hundreds the critic cannot keep up)",
    )
    max_grad_norm: float = Field(1.0, gt=0, description="gradient norm clipping")
    bound_coef: float = Field(
        0.0,
        ge=0,
        description="weight of a penalty on mean actions beyond [-1, 1] (the environment "
        "clips actions: a mean drifting past the bound stops exploring); 0: rsl_rl's loss",
    )


class NetConfig(StrictModel):
    """Sizes of the actor and critic networks."""

    actor_hidden: list[PositiveInt] = Field(
        [64, 64], description="hidden layer widths of the actor"
    )
    critic_hidden: list[PositiveInt] = Field(
        [128, 128], description="hidden layer widths of the critic"
    )
    activation: Activation = Field("elu", description="hidden activation")
    init_std: float = Field(1.0, gt=0, description="initial action standard deviation")
    bounded_mean: bool = Field(
        False,
        description="mean action through tanh, inside [-1, 1]: a clipped environment gives no "
        "gradient beyond the bound, so an unbounded mean can drift past it and stop exploring",
    )
    state_dependent_noise: bool = Field(
        False,
        description="gSDE (Raffin et al. 2022): the exploration noise is a linear function of "
        "the actor's last hidden features with weights drawn every sde_resample_steps, so the "
        "perturbed policy is a smooth deterministic policy for a while: at 100 Hz it explores "
        "motions that last a swing, where white noise averages out. Learned std per feature",
    )


class EmpiricalNormalizer(nn.Module):
    """Running mean and variance of an observation vector; ``forward`` standardizes and clips.
    Statistics are buffers, so they travel with ``state_dict`` and into an ONNX export."""

    def __init__(self, dim: int, eps: float = 1e-2, clip: float = 10.0) -> None:
        super().__init__()
        self.eps, self.clip = eps, clip
        self.register_buffer("mean", torch.zeros(dim))
        self.register_buffer("var", torch.ones(dim))
        self.register_buffer("count", torch.zeros((), dtype=torch.float64))

    @torch.no_grad()
    def update(self, x: torch.Tensor) -> None:
        """Merge a batch (B, D) into the statistics."""
        n = x.shape[0]
        if n == 0:
            return
        mean, var, total = merge_moments(
            self.mean, self.var, self.count, x.mean(0), x.var(0, unbiased=False), n
        )
        self.mean.copy_(mean)
        self.var.copy_(var)
        self.count.copy_(total)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ((x - self.mean) / (self.var.sqrt() + self.eps)).clamp(-self.clip, self.clip)


def mlp(in_dim: int, hidden: list[int], out_dim: int, activation: Activation) -> nn.Sequential:
    layers: list[nn.Module] = []
    dims = [in_dim, *hidden]
    for a, b in itertools.pairwise(dims):
        layers += [nn.Linear(a, b), _ACTIVATIONS[activation]()]
    layers.append(nn.Linear(dims[-1], out_dim))
    for layer in layers:
        if isinstance(layer, nn.Linear):
            nn.init.orthogonal_(layer.weight, math.sqrt(2))
            nn.init.zeros_(layer.bias)
    return nn.Sequential(*layers)


class Actor(nn.Module):
    """Gaussian policy: normalized observation -> MLP -> mean; learned log-std, per action or
    (``state_dependent_noise``) per hidden feature and action. (B, obs_dim) -> (B, action_dim)."""

    def __init__(self, obs_dim: int, action_dim: int, net: NetConfig) -> None:
        super().__init__()
        self.obs_dim, self.action_dim = obs_dim, action_dim
        self.normalizer = EmpiricalNormalizer(obs_dim)
        self.net = mlp(obs_dim, net.actor_hidden, action_dim, net.activation)
        nn.init.orthogonal_(self.net[-1].weight, 0.01)  # start near zero action
        self.state_dependent = net.state_dependent_noise
        shape = (self.net[-1].in_features, action_dim) if self.state_dependent else (action_dim,)
        self.log_std = nn.Parameter(torch.full(shape, math.log(net.init_std)))
        self.bounded_mean = net.bounded_mean

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """Mean action (unclipped, or in [-1, 1] with ``bounded_mean``)."""
        return self._mean(self.net[:-1](self.normalizer(obs)))

    def mean_and_features(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean action and the noise features: the last hidden layer scaled by
        1/sqrt(width), detached (gSDE's default), so ``init_std`` is the std of the action for
        features of unit size."""
        hidden = self.net[:-1](self.normalizer(obs))
        return self._mean(hidden), hidden.detach() / math.sqrt(hidden.shape[-1])

    def _mean(self, hidden: torch.Tensor) -> torch.Tensor:
        mean = self.net[-1](hidden)
        return torch.tanh(mean) if self.bounded_mean else mean

    def std(self, features: torch.Tensor) -> torch.Tensor:
        """Action std (B, action_dim): the std of ``features @ W`` with ``W ~ N(0, std^2)``."""
        if not self.state_dependent:
            return self.log_std.exp().expand(features.shape[0], self.action_dim)
        return torch.sqrt(features**2 @ torch.exp(2.0 * self.log_std) + 1e-12)

    def distribution(self, obs: torch.Tensor) -> torch.distributions.Normal:
        mean, features = self.mean_and_features(obs)
        return torch.distributions.Normal(mean, self.std(features))


class Critic(nn.Module):
    """State value: (B, obs_dim) -> (B,)."""

    def __init__(self, obs_dim: int, net: NetConfig) -> None:
        super().__init__()
        self.normalizer = EmpiricalNormalizer(obs_dim)
        self.net = mlp(obs_dim, net.critic_hidden, 1, net.activation)
        nn.init.orthogonal_(self.net[-1].weight, 1.0)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.net(self.normalizer(obs)).squeeze(-1)


class ActorCritic(nn.Module):
    def __init__(self, actor_dim: int, critic_dim: int, action_dim: int, net: NetConfig) -> None:
        super().__init__()
        self.actor = Actor(actor_dim, action_dim, net)
        self.critic = Critic(critic_dim, net)


class RolloutStorage:
    """(T, N, ...) tensors of one rollout, and GAE returns and advantages."""

    def __init__(self, steps: int, num_envs: int, actor_dim: int, critic_dim: int, act_dim: int):
        T, N = steps, num_envs
        self.actor_obs = torch.zeros(T, N, actor_dim)
        self.critic_obs = torch.zeros(T, N, critic_dim)
        self.actions = torch.zeros(T, N, act_dim)
        self.log_probs = torch.zeros(T, N)
        self.mu = torch.zeros(T, N, act_dim)
        self.sigma = torch.zeros(T, N, act_dim)
        self.values = torch.zeros(T, N)
        self.rewards = torch.zeros(T, N)
        self.dones = torch.zeros(T, N)
        self.returns = torch.zeros(T, N)
        self.advantages = torch.zeros(T, N)
        self.steps = T

    def compute_returns(self, last_values: torch.Tensor, gamma: float, lam: float) -> None:
        """Generalized advantage estimation; ``rewards`` already hold the bootstrap of
        time-limit truncations, so ``dones`` cut the recursion."""
        adv = torch.zeros_like(last_values)
        for t in reversed(range(self.steps)):
            next_values = last_values if t == self.steps - 1 else self.values[t + 1]
            alive = 1.0 - self.dones[t]
            delta = self.rewards[t] + gamma * next_values * alive - self.values[t]
            adv = delta + gamma * lam * alive * adv
            self.advantages[t] = adv
        self.returns = self.advantages + self.values

    def flat(self) -> dict[str, torch.Tensor]:
        names = ("actor_obs", "critic_obs", "actions", "log_probs", "mu", "sigma", "values")
        out = {n: getattr(self, n).flatten(0, 1) for n in names}
        out["returns"] = self.returns.flatten(0, 1)
        adv = self.advantages.flatten(0, 1)
        out["advantages"] = (adv - adv.mean()) / (adv.std() + 1e-8)
        return out


class PPO:
    """The update of an :class:`ActorCritic` from one :class:`RolloutStorage`."""

    def __init__(self, model: ActorCritic, cfg: PPOConfig) -> None:
        self.model, self.cfg = model, cfg
        self.learning_rate = cfg.learning_rate
        self.optimizer = torch.optim.Adam(model.parameters(), lr=cfg.learning_rate)

    def update(
        self, storage: RolloutStorage, generator: torch.Generator, *, progress: float
    ) -> dict[str, float]:
        """Epochs of minibatch steps; returns mean losses, KL and the learning rate.
        ``progress``: the share of the run's iterations done before this one (linear schedule)."""
        cfg, model = self.cfg, self.model
        if cfg.schedule == "linear":
            self._set_learning_rate(cfg.learning_rate * (1.0 - progress))
        data = storage.flat()
        batch = data["returns"].shape[0]
        mb_size = max(1, batch // cfg.minibatches)
        sums = {"policy_loss": 0.0, "value_loss": 0.0, "entropy": 0.0, "kl": 0.0, "bound_loss": 0.0}
        count = 0
        for _ in range(cfg.epochs):
            perm = torch.randperm(batch, generator=generator)
            for start in range(0, mb_size * cfg.minibatches, mb_size):
                idx = perm[start : start + mb_size]
                mb = {k: v[idx] for k, v in data.items()}
                dist = model.actor.distribution(mb["actor_obs"])
                log_prob = dist.log_prob(mb["actions"]).sum(-1)
                entropy = dist.entropy().sum(-1).mean()
                values = model.critic(mb["critic_obs"])
                with torch.no_grad():
                    kl = _gaussian_kl(mb["mu"], mb["sigma"], dist.mean, dist.stddev).mean()
                if cfg.schedule == "adaptive":
                    self._adapt_learning_rate(float(kl))
                ratio = torch.exp(log_prob - mb["log_probs"])
                adv = mb["advantages"]
                surrogate = torch.max(
                    -adv * ratio, -adv * ratio.clamp(1 - cfg.clip_ratio, 1 + cfg.clip_ratio)
                ).mean()
                if cfg.clipped_value_loss:
                    clipped = mb["values"] + (values - mb["values"]).clamp(
                        -cfg.clip_ratio, cfg.clip_ratio
                    )
                    value_loss = torch.max(
                        (values - mb["returns"]) ** 2, (clipped - mb["returns"]) ** 2
                    ).mean()
                else:
                    value_loss = ((values - mb["returns"]) ** 2).mean()
                excess = (dist.mean.abs() - 1.0).clamp(min=0.0)
                bound_loss = (excess**2).sum(-1).mean()
                loss = (
                    surrogate
                    + cfg.value_coef * value_loss
                    - cfg.entropy_coef * entropy
                    + cfg.bound_coef * bound_loss
                )
                self.optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
                self.optimizer.step()
                sums["policy_loss"] += surrogate.item()
                sums["value_loss"] += value_loss.item()
                sums["entropy"] += entropy.item()
                sums["kl"] += kl.item()
                sums["bound_loss"] += bound_loss.item()
                count += 1
        out = {k: v / count for k, v in sums.items()}
        out["learning_rate"] = self.learning_rate
        return out

    def _adapt_learning_rate(self, kl: float) -> None:
        # rsl_rl's rule: shrink fast when the policy moved too far, grow slowly otherwise
        learning_rate = self.learning_rate
        if kl > 2.0 * self.cfg.desired_kl:
            learning_rate = max(1e-5, learning_rate / 1.5)
        elif 0.0 < kl < 0.5 * self.cfg.desired_kl:
            learning_rate = min(1e-2, learning_rate * 1.5)
        self._set_learning_rate(learning_rate)

    def _set_learning_rate(self, learning_rate: float) -> None:
        self.learning_rate = learning_rate
        for group in self.optimizer.param_groups:
            group["lr"] = learning_rate


def _gaussian_kl(
    mu_old: torch.Tensor, sigma_old: torch.Tensor, mu: torch.Tensor, sigma: torch.Tensor
) -> torch.Tensor:
    """KL(old || new) of diagonal Gaussians, summed over action dimensions: (B,)."""
    return torch.sum(
        torch.log(sigma / sigma_old) + (sigma_old**2 + (mu_old - mu) ** 2) / (2.0 * sigma**2) - 0.5,
        dim=-1,
    )
