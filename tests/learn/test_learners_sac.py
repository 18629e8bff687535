"""SB3's SAC on our VecEnv: the adapter against the environment stepped directly, the exported
deterministic actor against SB3's own predict, determinism, exact resume, and learning on the
toy rotor."""

from __future__ import annotations

import io
import tempfile

import numpy as np
import pytest
import torch
from learn.toy_env import TOY_ENV_ID, make_toy_vec

from sim2real.learn.distill import run_episodes
from sim2real.learn.learners.sac import SACConfig, Sb3SAC
from sim2real.learn.learners.sb3_env import Sb3VecEnv
from sim2real.learn.vec import concat_obs

SMALL = SACConfig(
    learning_starts=500,
    buffer_size=20_000,  # the runs here stay below it: the same draws as a larger one
    batch_size=128,
    net_arch=[64, 64],
    gradient_steps=4,
    learning_rate=1e-3,
    ent_coef="auto_0.1",
)


def _learner(seed: int = 0) -> Sb3SAC:
    torch.set_num_threads(1)  # small networks: threads only wait
    env = make_toy_vec(TOY_ENV_ID, 16, seed=seed)
    return Sb3SAC(env, config=SMALL, groups=("policy",), steps_per_iteration=800, seed=seed)


def _act(learner: Sb3SAC):
    def act(obs):
        with torch.no_grad():
            return learner.policy()(torch.from_numpy(concat_obs(obs, ("policy",)))).numpy()

    return act


def test_adapter_steps_the_environment_unchanged():
    direct, wrapped = make_toy_vec(TOY_ENV_ID, 4, seed=3), make_toy_vec(TOY_ENV_ID, 4, seed=3)
    env = Sb3VecEnv(wrapped, ("policy", "privileged"))
    assert env.observation_space.shape == (11,) and env.action_space.shape == (1,)
    env.seed(3)  # SB3's way: the seed of the next reset
    obs = env.reset()
    assert np.array_equal(obs, concat_obs(direct.reset(seed=3), ("policy", "privileged")))
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(45):  # past the 40-step time limit
        action = rng.uniform(-1, 1, (4, 1))
        result = direct.step(action)
        obs, reward, done, infos = env.step(action)
        assert np.array_equal(obs, concat_obs(result.obs, ("policy", "privileged")))
        assert np.allclose(reward, result.reward, atol=1e-6)
        assert done.tolist() == result.truncated.tolist()
        final = concat_obs(result.final_obs, ("policy", "privileged"))
        for i in np.flatnonzero(done):
            assert np.array_equal(infos[i]["terminal_observation"], final[i])
            assert infos[i]["TimeLimit.truncated"] is True
            assert infos[i]["episode"]["r"] == pytest.approx(result.info["episode_return"][i])
        ended += int(done.sum())
    assert ended == 4 and len(env.episodes) == 4


def test_deterministic_actor_is_sb3s_predict_on_normalized_observations(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    learner = _learner()
    learner.iterate()  # past learning_starts: statistics and weights have moved
    learner.iterate()
    assert not list(tmp_path.glob("SB3-*"))  # SB3 wrote no log folder of its own
    obs = concat_obs(make_toy_vec(TOY_ENV_ID, 32, seed=5).reset(seed=5), ("policy",))
    ours = learner.policy()(torch.from_numpy(obs)).detach().numpy()
    sb3, _ = learner.model.predict(learner.venv.normalize_obs(obs), deterministic=True)
    assert np.allclose(ours, sb3, atol=1e-5)
    assert np.abs(ours).max() <= 1.0 and ours.std() > 0


def test_same_seed_same_run_other_seed_other_run():
    runs = []
    for seed in (0, 0, 1):
        learner = _learner(seed)
        metrics = learner.iterate()
        runs.append({k: v.clone() for k, v in learner.model.policy.state_dict().items()})
    assert all(np.isfinite(v) for v in metrics.values()) and metrics["env_steps"] == 800
    assert all(torch.equal(runs[0][k], runs[1][k]) for k in runs[0])
    assert not all(torch.equal(runs[0][k], runs[2][k]) for k in runs[0])


@pytest.mark.slow
def test_sac_learns_the_toy_task():
    learner = _learner()
    eval_env = make_toy_vec(TOY_ENV_ID, 128, seed=99)
    before = run_episodes(eval_env, _act(learner), seed=99)
    for _ in range(8):
        learner.iterate()
    after = run_episodes(eval_env, _act(learner), seed=99)
    # untrained: about -58 and 6 %; 6400 steps (1400 gradient steps) reach about -36 and 55 %
    assert before.success_rate < 0.2
    assert after.success_rate > 0.4
    assert after.mean_return > before.mean_return + 15.0


def test_resume_continues_exactly():
    straight = _learner()
    for _ in range(3):
        straight.iterate()

    first = _learner()
    first.iterate()  # past learning_starts: updates, statistics and a filled buffer
    buf = io.BytesIO()
    torch.save(first.get_state(), buf)  # through a file, as a checkpoint
    buf.seek(0)
    del first
    np.random.seed(7)  # whatever the process did in between
    torch.manual_seed(7)
    resumed = _learner()
    resumed.set_state(torch.load(buf, weights_only=False))
    for _ in range(2):
        resumed.iterate()
    a, b = straight.model.policy.state_dict(), resumed.model.policy.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert straight.model.log_ent_coef.item() == resumed.model.log_ent_coef.item()
    assert straight.model.num_timesteps == resumed.model.num_timesteps == 2400
    rb_a, rb_b = straight.model.replay_buffer, resumed.model.replay_buffer
    assert rb_a.pos == rb_b.pos and np.array_equal(rb_a.observations, rb_b.observations)
    assert np.array_equal(straight.venv.obs_rms.mean, resumed.venv.obs_rms.mean)
    assert list(straight.episodes) == list(resumed.episodes)
