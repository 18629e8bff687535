"""rsl_rl's PPO on our VecEnv: the adapter against the environment stepped directly, the
correlated exploration noise, learning on the toy rotor, determinism and exact resume."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch
from learn.toy_env import TOY_ENV_ID, make_toy_vec

from sim2real.learn.distill import run_episodes
from sim2real.learn.learners.normalize import ReturnScale
from sim2real.learn.learners.rsl_env import RslVecEnv
from sim2real.learn.learners.rsl_ppo import ColoredGaussianDistribution, RslPPO
from sim2real.learn.ppo import NetConfig, PPOConfig
from sim2real.learn.vec import ObsRoles, concat_obs


def _learner(
    seed: int = 0,
    num_envs: int = 8,
    steps: int = 16,
    noise_s: float = 0.0,
    distribution: str = "gaussian",
    **ppo,
):
    env = make_toy_vec(TOY_ENV_ID, num_envs, seed=seed)
    return RslPPO(
        env,
        ppo=PPOConfig(**ppo),
        net=NetConfig(),
        roles=ObsRoles(),
        steps_per_env=steps,
        seed=seed,
        noise_correlation_s=noise_s,
        distribution=distribution,
    )


def _params(learner: RslPPO) -> dict[str, torch.Tensor]:
    saved = learner.alg.save()
    return {
        **{f"actor.{k}": v for k, v in saved["actor_state_dict"].items()},
        **{f"critic.{k}": v for k, v in saved["critic_state_dict"].items()},
    }


def _same(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_adapter_steps_the_environment_unchanged():
    direct, wrapped = make_toy_vec(TOY_ENV_ID, 4, seed=3), make_toy_vec(TOY_ENV_ID, 4, seed=3)
    env = RslVecEnv(wrapped)
    obs = env.reset(seed=3)
    expected = direct.reset(seed=3)
    assert set(obs.keys()) == {"policy", "privileged"} and obs.batch_size == torch.Size([4])
    for group, value in expected.items():
        assert np.array_equal(obs[group].numpy(), value)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(45):  # past the 40-step time limit: autoreset and time-outs
        action = rng.uniform(-1, 1, (4, 1)).astype(np.float32)  # what a torch policy gives
        result = direct.step(action.astype(np.float64))
        obs, reward, dones, extras = env.step(torch.as_tensor(action, dtype=torch.float32))
        for group, value in result.obs.items():
            assert np.array_equal(obs[group].numpy(), value)
        assert np.allclose(reward.numpy(), result.reward, atol=1e-6)
        assert dones.tolist() == (result.truncated | result.terminated).astype(int).tolist()
        assert extras["time_outs"].tolist() == result.truncated.tolist()
        ended += int(result.truncated.sum())
    assert ended == 4 and len(env.episodes) == 4  # every environment's first episode, logged
    assert env.episode_length_buf.tolist() == [5, 5, 5, 5]


def test_adapter_scales_rewards_by_the_return_std():
    direct, wrapped = make_toy_vec(TOY_ENV_ID, 4, seed=1), make_toy_vec(TOY_ENV_ID, 4, seed=1)
    scale = ReturnScale(4, 0.9)
    env = RslVecEnv(wrapped, reward_scale=scale)
    env.reset(seed=1)
    direct.reset(seed=1)
    reference = ReturnScale(4, 0.9)  # the same statistics computed beside it
    for _ in range(10):
        action = np.full((4, 1), 0.5)
        result = direct.step(action)
        _, reward, _, _ = env.step(torch.as_tensor(action, dtype=torch.float32))
        done = result.terminated | result.truncated
        assert np.allclose(reward.numpy(), reference(result.reward, done), rtol=1e-6)
    assert scale.var == pytest.approx(reference.var) and scale.var != 1.0


def test_colored_noise_keeps_the_gaussian_marginal_and_correlates_steps():
    rho = 0.9
    dist = ColoredGaussianDistribution(2, rho=rho, init_std=0.5)
    torch.manual_seed(0)
    mean = torch.zeros(4000, 2)
    draws = []
    with torch.inference_mode():
        for _ in range(30):
            dist.update(mean)
            draws.append(dist.sample())
    x = torch.stack(draws).numpy() / 0.5  # (T, N, A) unit noise
    assert x[-1].std() == pytest.approx(1.0, abs=0.03)  # N(0, 1) at every step
    lag1 = np.mean(x[1:] * x[:-1])
    assert lag1 == pytest.approx(rho, abs=0.02)
    # the update re-evaluates outside inference mode: white samples, no change to the noise
    state = dist.noise.clone()
    dist.update(mean)
    dist.sample()
    assert torch.equal(dist.noise, state)


def test_refuses_settings_it_cannot_honour():
    env = make_toy_vec(TOY_ENV_ID, 4)
    with pytest.raises(ValueError, match="bound_coef"):
        RslPPO(
            env,
            ppo=PPOConfig(bound_coef=1.0),
            net=NetConfig(),
            roles=ObsRoles(),
            steps_per_env=4,
            seed=0,
        )
    with pytest.raises(ValueError, match="bounded mean"):
        RslPPO(
            env,
            ppo=PPOConfig(),
            net=NetConfig(bounded_mean=True),
            roles=ObsRoles(),
            steps_per_env=4,
            seed=0,
        )


def test_rsl_ppo_learns_the_toy_task():
    torch.set_num_threads(1)
    learner = _learner(num_envs=32, steps=40)
    eval_env = make_toy_vec(TOY_ENV_ID, 128, seed=99)

    def act(obs):
        with torch.no_grad():
            return learner.policy()(torch.from_numpy(concat_obs(obs, ("policy",)))).numpy()

    before = run_episodes(eval_env, act, seed=99)
    for _ in range(20):
        metrics = learner.iterate()
    after = run_episodes(eval_env, act, seed=99)
    assert all(np.isfinite(v) for v in metrics.values())
    # untrained: about -50 and 10 % (as our PPO's test); 20 iterations of 1280 steps learn it
    assert before.success_rate < 0.3
    assert after.success_rate > 0.7
    assert after.mean_return > before.mean_return + 15.0
    assert len(learner.episodes) > 0


def test_same_seed_same_run_other_seed_other_run():
    runs = []
    for seed in (0, 0, 1):
        learner = _learner(seed=seed, noise_s=0.2)
        for _ in range(3):
            learner.iterate()
        runs.append(_params(learner))
    assert _same(runs[0], runs[1])
    assert not _same(runs[0], runs[2])


@pytest.mark.parametrize("noise_s", [0.0, 0.2], ids=["white", "correlated"])
def test_resume_continues_exactly(noise_s):
    straight = _learner(noise_s=noise_s)
    for _ in range(4):
        straight.iterate()

    first = _learner(noise_s=noise_s)
    for _ in range(2):
        first.iterate()
    buf = io.BytesIO()
    torch.save(first.get_state(), buf)  # through a file, as a checkpoint
    buf.seek(0)
    del first
    torch.manual_seed(123)  # whatever the process did in between
    resumed = _learner(noise_s=noise_s)
    resumed.set_state(torch.load(buf, weights_only=False))
    for _ in range(2):
        resumed.iterate()
    assert _same(_params(straight), _params(resumed))
    assert straight.alg.learning_rate == resumed.alg.learning_rate
    assert list(straight.episodes) == list(resumed.episodes)
    for group in ("policy", "privileged"):
        a, b = straight.env.get_observations()[group], resumed.env.get_observations()[group]
        assert torch.equal(a, b)


@pytest.mark.parametrize("distribution", ["gaussian", "beta"])
def test_deterministic_actor_is_rsl_rls_deterministic_output(distribution):
    learner = _learner(seed=2, num_envs=16, distribution=distribution)
    learner.iterate()  # normalizer statistics and weights have moved
    obs = learner.env.get_observations()
    with torch.no_grad():
        theirs = learner.alg.get_policy()(obs)  # rsl_rl's MLPModel, deterministic by default
        ours = learner.policy()(obs["policy"])
    assert torch.allclose(ours, theirs.clamp(-1.0, 1.0), atol=1e-6)
    assert ours.abs().max() <= 1.0 and ours.std() > 0
    if distribution == "beta":
        with pytest.raises(ValueError, match="Gaussian"):
            _learner(noise_s=0.2, distribution="beta")
