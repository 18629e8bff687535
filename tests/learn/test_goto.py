"""The Go1's navigation (issue 18, part 5; learn/envs/goto.py): the goal in the base frame, the
approach paid per metre, arrival and falls ending an episode, the command held for the walking
policy, exact continuation, the end-to-end variant's frame, bad inputs, and the CLI through
train and eval."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from cli_helpers import assert_one_line_error, run_cli

from sim2real.core.errors import InputError
from sim2real.learn.envs import env_config, go1, goto, make_vec
from sim2real.learn.policy import PolicyMeta, save_policy
from sim2real.learn.ppo import Actor, NetConfig
from sim2real.learn.vec import ObsRoles

HIER, E2E = goto.HIERARCHY_ID, goto.END_TO_END_ID


@pytest.fixture(scope="module")
def standing_walker(tmp_path_factory):
    """A walking policy whose actions are zero: the robot stands on its default pose."""
    env = make_vec(go1.ENV_ID, 1, dr=None)
    net = NetConfig(actor_hidden=[8])
    actor = Actor(env.obs_groups["policy"].dim, env.action_dim, net)
    torch.nn.init.zeros_(actor.net[-1].weight)
    torch.nn.init.zeros_(actor.net[-1].bias)
    folder = tmp_path_factory.mktemp("walker")
    save_policy(folder, actor, PolicyMeta.from_env(env, ObsRoles(), env_config={}, net=net))
    return folder


def _env(walker, n=4, **fields):
    return make_vec(HIER, n, seed=3, dr=None, config={"low_level": str(walker), **fields})


def _xy(env):
    base = env.inner.legged.base(env.stepper.qpos, env.stepper.qvel)
    return base.pos[:, :2].copy(), base.rot.copy()


def test_goal_is_read_in_the_base_frame_and_the_approach_is_paid(standing_walker):
    env = _env(standing_walker)
    obs = env.reset(seed=3)
    xy, rot = _xy(env)
    dist = np.linalg.norm(env.goal - xy, axis=1)
    assert np.all((dist >= 2.0) & (dist <= 4.0)) and len(set(dist.round(6))) == 4
    d_w = np.c_[env.goal - xy, np.zeros(4)]
    expected = np.einsum("nji,nj->ni", rot, d_w)[:, :2] * goto.GOAL_SCALE
    assert obs["policy"][:, :2] == pytest.approx(expected, abs=1e-5)
    assert [t.name for t in env.obs_groups["policy"].terms][:2] == ["goal[0]", "goal[1]"]
    for _ in range(3):
        before = np.linalg.norm(env.goal - _xy(env)[0], axis=1)
        res = env.step(np.zeros((4, 3)))
        after = np.linalg.norm(env.goal - _xy(env)[0], axis=1)
        assert res.reward == pytest.approx(10.0 * (before - after), abs=1e-5)
        assert not (res.terminated | res.truncated).any()
    assert env.control_dt == pytest.approx(0.1) and env.max_episode_steps == 150


def test_the_command_is_held_for_the_walker_over_the_step(standing_walker):
    env = _env(standing_walker, n=2)
    env.reset(seed=1)
    env.step(np.array([[0.5, -1.0, 2.0], [-0.2, 0.4, -0.6]]))
    assert env.inner.commands == pytest.approx(np.array([[0.5, -0.5, 1.0], [-0.2, 0.2, -0.6]]))
    assert env.inner.steps[0] == 5  # 10 Hz over the walker's 50 Hz


def test_arrival_succeeds_and_a_fall_fails_each_starting_a_new_episode(standing_walker):
    env = _env(standing_walker, n=3)
    env.reset(seed=2)
    for _ in range(2):
        env.step(np.zeros((3, 3)))
    xy, _ = _xy(env)
    env.goal[0] = xy[0] + [0.1, 0.0]  # within the reach radius
    qpos = env.stepper.qpos[1].copy()
    qpos[2], qpos[3:7] = 0.4, [0.0, 1.0, 0.0, 0.0]  # upside down: the walking task's termination
    env.inner.stepper.reset_rows(np.array([1]), qpos[None], np.zeros((1, env.stepper.nv)))
    old_goal = env.goal.copy()
    res = env.step(np.zeros((3, 3)))
    assert res.terminated[:2].tolist() == [True, True] and not res.terminated[2]
    assert res.info["episode_success"][:2].tolist() == [1.0, 0.0]
    assert res.info["episode_length"][:2].tolist() == [3, 3]
    assert res.reward[0] > 9.0 and res.reward[1] == pytest.approx(-10.0)
    assert np.isnan(res.info["episode_success"][2]) and np.array_equal(env.goal[2], old_goal[2])
    xy, _ = _xy(env)
    dist = np.linalg.norm(env.goal - xy, axis=1)
    assert np.all((dist[:2] >= 2.0) & (dist[:2] <= 4.0))  # new goals from the new starts
    assert env.steps.tolist() == [0, 0, 3] and env.inner.steps[:2].tolist() == [0, 0]


def test_the_time_limit_truncates(standing_walker):
    env = _env(standing_walker, n=2, episode_s=0.3)
    env.reset(seed=0)
    ends = [env.step(np.zeros((2, 3))) for _ in range(3)]
    assert ends[-1].truncated.all() and not ends[-1].terminated.any()
    assert not any(r.truncated.any() for r in ends[:2])
    assert ends[-1].info["episode_success"].tolist() == [0.0, 0.0]


def test_a_saved_state_continues_exactly(standing_walker):
    env = make_vec(HIER, 3, seed=5, config={"low_level": str(standing_walker)})  # with its DR
    env.reset(seed=5)
    rng = np.random.default_rng(0)
    for _ in range(3):
        env.step(rng.uniform(-1, 1, (3, 3)))
    state = env.get_state()
    actions = rng.uniform(-1, 1, (6, 3, 3))
    first = [env.step(a) for a in actions]
    env.set_state(state)
    again = [env.step(a) for a in actions]
    for a, b in zip(first, again, strict=True):
        assert np.array_equal(a.reward, b.reward)
        assert np.array_equal(a.obs["policy"], b.obs["policy"])


def test_end_to_end_reads_the_walking_frame_with_the_goal_and_zero_commands():
    env = make_vec(E2E, 2, seed=0, dr=None)
    obs = env.reset(seed=0)
    walking = make_vec(go1.ENV_ID, 1, dr=None).obs_groups["policy"]
    names = [t.name for t in env.obs_groups["policy"].terms]
    assert names == ["goal[0]", "goal[1]", *[t.name for t in walking.terms]]
    assert obs["policy"].shape == (2, 2 + walking.dim) and env.action_dim == 12
    assert env.control_dt == pytest.approx(0.02) and env.max_episode_steps == 750
    env.step(np.zeros((2, 12)))
    assert not env.inner.commands.any()
    weights = env.inner.cfg.weights()
    assert weights["track_lin_vel"] == 0 and weights["track_ang_vel"] == 0
    assert weights["joint_acc"] > 0  # the walking task's regularizers stay


def test_bad_navigation_inputs_are_refused(standing_walker, tmp_path):
    from sim2real.learn.envs import pendulum

    other = make_vec(pendulum.ENV_ID, 1)
    net = NetConfig(actor_hidden=[4])
    actor = Actor(other.obs_groups["policy"].dim, other.action_dim, net)
    save_policy(tmp_path / "p", actor, PolicyMeta.from_env(other, ObsRoles(), net=net))
    with pytest.raises(InputError, match="trained on 'sim2real/PendulumSwingup-v0'"):
        make_vec(HIER, 1, config={"low_level": str(tmp_path / "p")})
    with pytest.raises(InputError, match="goal_distance_m"):
        env_config(HIER, {"goal_distance_m": [3.0, 2.0]})
    with pytest.raises(InputError, match="command_dt"):
        make_vec(HIER, 1, config={"command_dt": 0.05, "low_level": str(standing_walker)})


def test_train_and_eval_through_the_cli(standing_walker, tmp_path):
    cfg = tmp_path / "env.yaml"
    cfg.write_text(f"low_level: {standing_walker}\nepisode_s: 1.0\n")
    settings = tmp_path / "s.yaml"
    settings.write_text("num_envs: 4\nsteps_per_env: 8\nnet: {actor_hidden: [8]}\n")
    run = tmp_path / "run"
    args = ("--out", run, "--settings", settings, "--env-config", cfg, "--steps", 64, "--quiet")
    proc = run_cli("policy", "train", HIER, *args)
    assert proc.returncode == 0, proc.stderr
    proc = run_cli("policy", "eval", run, "--episodes", 4)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("time to goal") == 3  # training conditions and two worlds
    assert "go1-slippery-heavy-weak: success" in proc.stdout
    bad = tmp_path / "bad.yaml"
    bad.write_text("low_level: /nonexistent/walker\n")
    proc = run_cli("policy", "train", HIER, "--out", tmp_path / "r2", "--env-config", bad)
    assert_one_line_error(proc, "low_level")
    assert not (tmp_path / "r2").exists()
