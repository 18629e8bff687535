"""Each reward term's episode sum (``info["episode_terms"]``, TensorBoard's
``Episode_Reward/<term>``): it adds up to the return, equals the term summed by hand, survives
a saved state, and reaches the training log."""

from __future__ import annotations

import pickle

import gymnasium
import numpy as np
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from sim2real.learn.envs import make_vec
from sim2real.learn.train import TrainConfig, train

ENV = "sim2real/PendulumSwingup-v0"
STEPS = 30  # one episode of 0.3 s at 100 Hz
CONFIG = {"episode_s": 0.3, "reward": {"action_rate": 0.05}}


def _episode(env, actions):
    """The info of the step that ends the environments' (synchronous) episodes."""
    for a in actions:
        result = env.step(a)
    assert np.isfinite(result.info["episode_return"]).all()
    return result.info


def test_terms_add_up_to_the_return_and_equal_the_term_by_hand():
    env = make_vec(ENV, 4, seed=3, config=CONFIG)
    env.reset(seed=3)
    actions = np.random.default_rng(0).uniform(-1.5, 1.5, (STEPS, 4, 1))
    info = _episode(env, actions)
    names = env.reward_names
    assert names == ("upright", "velocity", "action", "action_rate", "bonus")  # weight != 0
    terms = info["episode_terms"]
    assert terms.shape == (4, len(names))
    np.testing.assert_allclose(terms.sum(axis=1), info["episode_return"], rtol=1e-12)
    clipped = np.clip(actions[..., 0], -1, 1)
    by_hand = 0.01 * -(clipped**2).sum(axis=0)  # the action term's weight is 0.01
    np.testing.assert_allclose(terms[:, names.index("action")], by_hand, rtol=1e-12)
    assert np.all(terms[:, names.index("upright")] > 0)
    assert np.all(terms[:, names.index("action_rate")] < 0)
    # the next episode starts from zero: its sums are its own
    again = _episode(env, actions)["episode_terms"]
    np.testing.assert_allclose(again[:, names.index("action")], by_hand, rtol=1e-12)


def test_running_sums_continue_exactly_from_a_saved_state():
    actions = np.random.default_rng(1).uniform(-1, 1, (STEPS, 3, 1))
    env = make_vec(ENV, 3, seed=5, config=CONFIG)
    env.reset(seed=5)
    for a in actions[:12]:
        env.step(a)
    state = pickle.loads(pickle.dumps(env.get_state()))
    first = _episode(env, actions[12:])["episode_terms"]
    fresh = make_vec(ENV, 3, seed=99, config=CONFIG)
    fresh.reset()
    fresh.set_state(state)
    np.testing.assert_array_equal(_episode(fresh, actions[12:])["episode_terms"], first)


def test_training_logs_each_terms_mean_episode_sum(tmp_path):
    cfg = TrainConfig(total_env_steps=4 * 64 * 2, num_envs=4, steps_per_env=64, validate_every=0)
    train(tmp_path / "run", ENV, train_config=cfg, env_config=CONFIG, quiet=True)
    log = EventAccumulator(str(tmp_path / "run" / "tb"))
    log.Reload()
    tags = set(log.Tags()["scalars"])
    for name in ("upright", "velocity", "action", "action_rate", "bonus"):
        assert f"Episode_Reward/{name}" in tags
    values = [e.value for e in log.Scalars("Episode_Reward/upright")]
    assert len(values) == 2 and all(0 < v <= STEPS for v in values)
    assert all(v < 0 for v in (e.value for e in log.Scalars("Episode_Reward/action")))


def test_gymnasium_wrapper_reports_the_terms_by_name_at_the_episode_end():
    env = gymnasium.make(ENV, config=CONFIG)
    env.reset(seed=0)
    for _ in range(STEPS):
        _, _, terminated, truncated, info = env.step(env.action_space.sample())
    assert truncated and not terminated
    assert set(info["episode_terms"]) == {"upright", "velocity", "action", "action_rate", "bonus"}
    assert sum(info["episode_terms"].values()) == pytest.approx(info["episode_return"], rel=1e-12)
    env.close()
