"""The update beside the collection (``overlap_update``): which policy collects each rollout,
determinism across threads, and errors of the update thread."""

from __future__ import annotations

import pytest
import torch
from learn.toy_env import TOY_ENV_ID, make_toy_vec

from sim2real.learn.ppo import PPO, ActorCritic, NetConfig, PPOConfig, RolloutStorage
from sim2real.learn.ppo_overlap import OverlappedIterations
from sim2real.learn.train import TRAIN_STATE_FILE, TrainConfig, train

T, N, ACTOR_DIM, CRITIC_DIM = 6, 4, 3, 5


def _overlapped(seed: int = 0) -> tuple[ActorCritic, OverlappedIterations]:
    torch.manual_seed(seed)
    model = ActorCritic(ACTOR_DIM, CRITIC_DIM, 1, NetConfig())
    storages = tuple(RolloutStorage(T, N, ACTOR_DIM, CRITIC_DIM, 1) for _ in range(2))
    return model, OverlappedIterations(model, PPO(model, PPOConfig()), storages, seed, 1)


def _collector(seen: list[torch.Tensor]):
    generator = torch.Generator().manual_seed(1)

    @torch.no_grad()
    def collect(policy: ActorCritic, storage: RolloutStorage) -> None:
        seen.append(policy.actor.net[0].weight.clone())
        for t in range(T):
            obs = torch.randn(N, ACTOR_DIM, generator=generator)
            critic_obs = torch.randn(N, CRITIC_DIM, generator=generator)
            dist = policy.actor.distribution(obs)
            action = dist.mean + dist.stddev * torch.randn(N, 1, generator=generator)
            storage.actor_obs[t], storage.critic_obs[t], storage.actions[t] = (
                obs,
                critic_obs,
                action,
            )
            storage.log_probs[t] = dist.log_prob(action).sum(-1)
            storage.mu[t], storage.sigma[t] = dist.mean, dist.stddev
            storage.values[t] = policy.critic(critic_obs)
            storage.rewards[t] = torch.randn(N, generator=generator)
        storage.compute_returns(torch.zeros(N), 0.99, 0.95)

    return collect


def test_each_rollout_is_collected_by_the_policy_one_update_behind():
    model, overlapped = _overlapped()
    seen: list[torch.Tensor] = []
    collect, before = _collector(seen), []
    for k in range(3):
        before.append(model.actor.net[0].weight.clone())
        overlapped.iteration(collect, progress=k / 3)
    # the first iteration collects two rollouts with the initial policy (one to learn from
    # now, one beside that update); each later one collects with the policy before its update
    assert len(seen) == 4
    assert torch.equal(seen[0], before[0]) and torch.equal(seen[1], before[0])
    assert torch.equal(seen[2], before[1]) and torch.equal(seen[3], before[2])
    assert not torch.equal(before[1], before[0]) and not torch.equal(before[2], before[1])


def test_an_error_in_the_update_is_raised_in_the_caller():
    _, overlapped = _overlapped()

    def broken(*args, **kw):
        raise RuntimeError("update failed")

    overlapped.ppo.update = broken
    with pytest.raises(RuntimeError, match="update failed"):
        overlapped.iteration(_collector([]), progress=0.0)


def _trained(run, overlap: bool) -> dict[str, torch.Tensor]:
    cfg = TrainConfig(
        total_env_steps=8 * 16 * 3, num_envs=8, steps_per_env=16, overlap_update=overlap
    )
    train(run, TOY_ENV_ID, train_config=cfg, make_env=make_toy_vec, quiet=True)
    return torch.load(run / TRAIN_STATE_FILE, weights_only=False)["model"]


def test_overlapped_training_repeats_to_the_bit_and_is_another_learner(tmp_path):
    a, b = _trained(tmp_path / "a", True), _trained(tmp_path / "b", True)
    sequential = _trained(tmp_path / "c", False)
    for key in a:
        assert torch.equal(a[key], b[key]), key
    weights = "actor.net.0.weight"
    assert not torch.equal(a[weights], sequential[weights])  # each rollout one update behind
