"""PPO building blocks against hand computations, and learning on the toy rotor."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from learn.toy_env import TOY_ENV_ID, make_toy_vec

from sim2real.learn.distill import run_episodes
from sim2real.learn.policy import load_policy
from sim2real.learn.ppo import EmpiricalNormalizer, RolloutStorage, _gaussian_kl
from sim2real.learn.train import ReturnScale, TrainConfig, read_metrics, train


def test_normalizer_merges_batches_like_numpy_on_the_whole():
    rng = np.random.default_rng(0)
    batches = [rng.normal(3.0, 2.0, size=(n, 4)) for n in (5, 17, 1, 40)]
    norm = EmpiricalNormalizer(4)
    for b in batches:
        norm.update(torch.tensor(b, dtype=torch.float32))
    whole = np.concatenate(batches)
    assert np.allclose(norm.mean.numpy(), whole.mean(0), atol=1e-5)
    assert np.allclose(norm.var.numpy(), whole.var(0), atol=1e-4)
    assert float(norm.count) == len(whole)
    x = torch.tensor(whole[:3], dtype=torch.float32)
    expected = (whole[:3] - whole.mean(0)) / (whole.std(0) + norm.eps)
    assert np.allclose(norm(x).numpy(), expected, atol=1e-4)


def test_return_scale_tracks_the_discounted_return_and_ignores_the_reward_unit():
    gamma, rng = 0.9, np.random.default_rng(0)
    rewards = rng.normal(2.0, 1.0, size=(300, 3))
    dones = np.zeros((300, 3), dtype=bool)
    dones[::50, 1] = True  # episodes end in one environment: its return restarts
    small, large = ReturnScale(3, gamma), ReturnScale(3, gamma)
    seen, ret = [], np.zeros(3)
    for r, d in zip(rewards, dones, strict=True):
        out = small(r, d)
        assert np.allclose(large(1000.0 * r, d), out, rtol=1e-3)  # any reward unit
        ret = ret * gamma + r
        seen.append(ret.copy())
        ret[d] = 0.0
    # the divisor is the std of every discounted return seen so far, as numpy has it
    assert np.allclose(r / out, np.std(np.concatenate(seen)), rtol=1e-3)


def test_gae_matches_hand_computation():
    # one env, 3 steps, episode ends after step 1: gamma 0.5, lambda 0.5
    s = RolloutStorage(3, 1, 1, 1, 1)
    s.rewards[:, 0] = torch.tensor([1.0, 2.0, 3.0])
    s.values[:, 0] = torch.tensor([0.5, 1.0, 2.0])
    s.dones[:, 0] = torch.tensor([0.0, 1.0, 0.0])
    s.compute_returns(torch.tensor([4.0]), gamma=0.5, lam=0.5)
    d2 = 3.0 + 0.5 * 4.0 - 2.0  # 3.0
    d1 = 2.0 - 1.0  # done: no bootstrap, 1.0
    d0 = 1.0 + 0.5 * 1.0 - 0.5  # 1.0
    a0 = d0 + 0.25 * d1  # 1.25
    assert s.advantages[:, 0].tolist() == pytest.approx([a0, d1, d2])
    assert s.returns[:, 0].tolist() == pytest.approx([a0 + 0.5, d1 + 1.0, d2 + 2.0])


def test_gaussian_kl_matches_torch():
    mu0, s0 = torch.tensor([[0.1, -0.3]]), torch.tensor([[0.5, 1.2]])
    mu1, s1 = torch.tensor([[0.4, 0.2]]), torch.tensor([[0.7, 0.9]])
    p, q = torch.distributions.Normal(mu0, s0), torch.distributions.Normal(mu1, s1)
    expected = torch.distributions.kl_divergence(p, q).sum(-1)
    assert torch.allclose(_gaussian_kl(mu0, s0, mu1, s1), expected, atol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("sde", [False, True], ids=["white-noise", "state-dependent-noise"])
def test_ppo_learns_the_toy_task(tmp_path, sde):
    # the same seed: the 1-iteration run is the start of the 20-iteration one
    results = {}
    for iterations in (1, 20):
        cfg = TrainConfig(
            total_env_steps=32 * 40 * iterations,
            num_envs=32,
            steps_per_env=40,
            net={"state_dependent_noise": sde},
        )
        train(
            tmp_path / str(iterations),
            TOY_ENV_ID,
            train_config=cfg,
            make_env=make_toy_vec,
            quiet=True,
        )
        policy = load_policy(tmp_path / str(iterations))
        env = make_toy_vec(TOY_ENV_ID, 128, seed=99)
        results[iterations] = run_episodes(env, policy.act, seed=99)
    # untrained: about -52 and 12 % (random starts that happen to end near the target)
    assert results[1].success_rate < 0.3
    assert results[20].success_rate > 0.7
    assert results[20].mean_return > results[1].mean_return + 15.0


def test_state_dependent_noise_has_the_actors_std_and_holds_between_draws():
    from sim2real.learn.ppo import Actor, NetConfig
    from sim2real.learn.ppo_rollout import ExplorationNoise

    gen = torch.Generator().manual_seed(0)
    actor = Actor(3, 2, NetConfig(state_dependent_noise=True, init_std=0.5))
    with torch.no_grad():
        actor.log_std[:, 1] -= 1.0  # the second action explores less
        _, features = actor.mean_and_features(torch.randn(1, 3).expand(20000, 3))
    noise = ExplorationNoise(0.0, 3, (20000, *actor.log_std.shape), gen)  # 20000 envs, one state
    with torch.no_grad():
        sigma = actor.std(features)
        draws = [noise.sample(actor, features, sigma, gen) for _ in range(4)]
    # N(0, std(s)^2) across environments, as the log-probabilities of PPO assume
    assert np.allclose(draws[0].std(0).numpy(), actor.std(features)[0].detach().numpy(), rtol=0.03)
    # the same state gives the same noise until the next draw (every 3 steps)
    assert torch.equal(draws[0], draws[1]) and torch.equal(draws[0], draws[2])
    assert not torch.allclose(draws[3], draws[0])


def test_bounded_mean_stays_inside_the_action_bounds():
    import torch

    from sim2real.learn.ppo import Actor, NetConfig

    actor = Actor(3, 2, NetConfig(bounded_mean=True))
    with torch.no_grad():
        actor.net[-1].weight.fill_(50.0)  # a mean far beyond the bounds without tanh
        mean = actor(torch.full((4, 3), 10.0))
    assert mean.abs().max() <= 1.0 and mean.abs().min() > 0.99


def test_linear_schedule_anneals_the_step_size_to_zero_over_the_run(tmp_path):
    cfg = TrainConfig(
        total_env_steps=8 * 16 * 4,
        num_envs=8,
        steps_per_env=16,
        ppo={"schedule": "linear", "learning_rate": 1e-3},
    )
    train(tmp_path, TOY_ENV_ID, train_config=cfg, make_env=make_toy_vec, quiet=True)
    rates = [row["learning_rate"] for row in read_metrics(tmp_path)]
    np.testing.assert_allclose(rates, [1e-3, 7.5e-4, 5e-4, 2.5e-4])
