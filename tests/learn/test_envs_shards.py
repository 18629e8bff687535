"""Randomness per environment by global index: a batch built for environments k..m (``env_offset
= k``) steps exactly as those environments of the whole batch, through resets, randomization
events, pushes, observation noise and autoresets (the Ray shards rely on it)."""

from __future__ import annotations

import numpy as np
import pytest

from sim2real.learn.envs import ENV_IDS, TASKS, default_dr_path, make_vec
from sim2real.learn.randomization import Randomization, Term, load_randomization


def _dr(env_id):
    dr = load_randomization(default_dr_path(env_id))
    push = Term(name="push", target="env.push_Nm", mode="interval", interval_s=(0.05, 0.2),
                range=(-1.0, 1.0))  # fmt: skip
    return Randomization(terms=[*dr.terms, push])


def _run(env, actions):
    obs = [env.reset(seed=4)["policy"]]
    rewards, done = [], []
    for a in actions:
        res = env.step(a)
        obs.append(res.obs["policy"])
        rewards.append(res.reward)
        done.append(res.truncated | res.terminated)
    return np.stack(obs), np.stack(rewards), np.stack(done)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_shards_reproduce_the_whole_batch(env_id):
    cfg = {"episode_s": 0.3, "desync_episodes": True}
    actions = np.random.default_rng(0).uniform(-1, 1, (70, 5, 12))  # the most actions of a task
    whole = _run(make_vec(env_id, 5, seed=9, dr=_dr(env_id), config=cfg), actions)
    parts = [
        _run(make_vec(env_id, hi - lo, seed=9, dr=_dr(env_id), config=cfg, env_offset=lo),
             actions[:, lo:hi])
        for lo, hi in ((0, 2), (2, 3), (3, 5))
    ]  # fmt: skip
    assert whole[2].sum() >= 5  # autoresets happened in the window
    # a task over another's environment runs a policy network inside: float32 matrix products
    # of another batch size round differently (about 1e-7), the rest is bit for bit
    atol = 0.0 if TASKS[env_id].vec_env is None else 1e-5
    for k in range(3):
        joined = np.concatenate([p[k] for p in parts], axis=1)
        assert np.allclose(whole[k], joined, rtol=0, atol=atol) and joined.shape == whole[k].shape
    # and the environments differ from one another (not one stream for all)
    assert not np.array_equal(whole[0][:, 0], whole[0][:, 1])


def test_offset_changes_the_streams():
    a = make_vec(ENV_IDS[0], 2, seed=1).reset()["privileged"]
    b = make_vec(ENV_IDS[0], 2, seed=1, env_offset=1).reset()["privileged"]
    assert np.array_equal(a[1], b[0]) and not np.array_equal(a[0], b[0])


def test_a_state_saved_before_the_streams_is_refused_in_one_line():
    from sim2real.core.errors import InputError

    env = make_vec(ENV_IDS[0], 2, seed=1)
    env.reset()
    old = {k: v for k, v in env.get_state().items() if k != "streams"}
    old["rng"] = {"bit_generator": "PCG64"}  # what the single-stream environment saved
    with pytest.raises(InputError, match="env_state: saved before") as err:
        env.set_state(old)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("actuator", [{"kind": "pd"}, {"kind": "torque", "friction": "stribeck"}])
def test_shards_with_an_actuator_model_in_the_loop(actuator):
    # the Python path (state-dependent actuator models, one runtime state per environment)
    env_id = ENV_IDS[0]
    cfg = {"episode_s": 0.2, "actuator": actuator}
    actions = np.random.default_rng(1).uniform(-1, 1, (45, 4, 1))
    whole = _run(make_vec(env_id, 4, seed=2, dr=_dr(env_id), config=cfg), actions)
    parts = [
        _run(make_vec(env_id, 2, seed=2, dr=_dr(env_id), config=cfg, env_offset=lo),
             actions[:, lo:lo + 2])
        for lo in (0, 2)
    ]  # fmt: skip
    for k in range(3):
        assert np.array_equal(whole[k], np.concatenate([p[k] for p in parts], axis=1))
