"""``goal_start_fall_rad``: an episode that started at the goal ends (terminated) on the first
step a goal joint is that far from its goal; episodes that started elsewhere never do; the
evaluation's config drops it; a saved state keeps which episodes started at the goal."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from sim2real.core.errors import InputError
from sim2real.learn.envs import make_vec
from sim2real.learn.envs.task import task_config
from sim2real.learn.envs.terms import wrap

PENDUBOT = "sim2real/PendubotSwingup-v0"
FALL = 0.5
CONFIG = {"init_goal_share": 0.5, "goal_start_fall_rad": FALL, "episode_s": 3.0}


def _err(env) -> np.ndarray:
    return np.abs(wrap(env.stepper.qpos[:, env.qadr] - [np.pi, 0.0]))


def _final_err(result) -> np.ndarray:
    """(N, 2) |distance to the goal| of both joints at the step's end, read from the noiseless
    privileged terms of the final observation (an ended episode's, before its reset)."""
    p = result.final_obs["privileged"]
    q = np.arctan2(p[:, [1, 4]], p[:, [0, 3]])  # (cos_q1_true, sin_q1_true, qvel1_true, ...)
    return np.abs(wrap(q - [np.pi, 0.0]))


def test_goal_starts_end_on_the_first_step_beyond_the_limit_and_only_they():
    env = make_vec(PENDUBOT, 32, seed=0, dr=None, config=CONFIG)
    env.reset(seed=0)
    assert env.obs_groups["privileged"].terms[0].name == "cos_q1_true"
    started = env.started_at_goal.copy()
    assert 0.25 < started.mean() < 0.75
    assert np.all(_err(env)[started] <= 0.05 + 1e-12)  # they start at the goal
    push = np.ones((32, 1))  # full shoulder torque knocks every goal start over
    ended = np.zeros(32, dtype=bool)
    for _ in range(env.max_episode_steps - 1):
        result = env.step(push)
        beyond = np.any(_final_err(result) > FALL, axis=1)
        # first episodes: terminated exactly on the first step a goal start is beyond the limit
        np.testing.assert_array_equal(result.terminated[~ended], (beyond & started)[~ended])
        ended |= result.terminated
        if ended[started].all():
            break
    assert ended[started].all()
    assert not ended[~started].any()  # hanging starts run on, far from the goal all along
    assert np.all(_err(env)[~started] > FALL)


def test_evaluation_drops_the_training_aid_and_state_keeps_the_starts():
    assert "goal_start_fall_rad" not in task_config(CONFIG)
    env = make_vec(PENDUBOT, 8, seed=4, dr=None, config=CONFIG)
    env.reset(seed=4)
    state = pickle.loads(pickle.dumps(env.get_state()))
    fresh = make_vec(PENDUBOT, 8, seed=99, dr=None, config=CONFIG)
    fresh.reset(seed=99)
    fresh.set_state(state)
    np.testing.assert_array_equal(fresh.started_at_goal, env.started_at_goal)
    legacy = {k: v for k, v in state.items() if k != "started_at_goal"}  # saved before it
    fresh.set_state(legacy)
    assert not fresh.started_at_goal.any()


def test_the_critic_reads_which_episodes_start_at_the_goal():
    env = make_vec(PENDUBOT, 32, seed=2, dr=None, config=CONFIG)
    obs = env.reset(seed=2)
    names = [t.name for t in env.obs_groups["privileged"].terms]
    flag = obs["privileged"][:, names.index("goal_start")]
    np.testing.assert_array_equal(flag, env.started_at_goal.astype(np.float32))
    assert 0 < flag.sum() < 32
    plain = make_vec(PENDUBOT, 4, seed=2, dr=None, config={"init_goal_share": 0.5})
    assert "goal_start" not in [t.name for t in plain.obs_groups["privileged"].terms]


def test_a_teacher_with_the_aid_is_refused(tmp_path):
    from sim2real.learn.train import TrainConfig, train
    from sim2real.learn.vec import ObsRoles

    cfg = TrainConfig(total_env_steps=64, num_envs=4, steps_per_env=16, validate_every=0)
    roles = ObsRoles(actor=("policy", "privileged"), critic=("policy", "privileged"))
    with pytest.raises(InputError, match="goal_start_fall_rad"):
        train(tmp_path / "run", PENDUBOT, train_config=cfg, env_config=CONFIG, roles=roles)
    assert not (tmp_path / "run").exists()
