"""Every registered task: gymnasium's check_env, a smoke run under its default randomization
(no NaN, observations and state within bounds), the robot-side runner on an exported policy of
it, refusals of unknown terms; the cart-pole's own rules (force limit, end of the rail,
success)."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
import torch
import yaml
from cli_helpers import assert_one_line_error, run_cli
from gymnasium.utils.env_checker import check_env

from sim2real.core.errors import InputError
from sim2real.learn.deploy import DeployedPolicy
from sim2real.learn.envs import ENV_IDS, TASKS, env_config, make_vec, terms
from sim2real.learn.export import export_policy
from sim2real.learn.policy import PolicyMeta, load_policy, save_policy
from sim2real.learn.ppo import Actor, NetConfig
from sim2real.learn.vec import ObsRoles

CARTPOLE = "sim2real/CartpoleSwingup-v0"


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_check_env(env_id):
    env = gymnasium.make(env_id)
    check_env(env.unwrapped)
    obs, _ = env.reset(seed=1)
    assert obs.shape == env.observation_space.shape and obs.dtype == np.float32


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_random_actions_under_the_default_randomization(env_id):
    env = make_vec(env_id, 8, seed=2, config={"episode_s": 2.0})
    obs = env.reset()
    names = [t.name for t in env.obs_groups["policy"].terms]
    scales = np.array([t.scale for t in env.obs_groups["policy"].terms])
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(450):  # past two time limits
        res = env.step(rng.uniform(-1.5, 1.5, (8, env.action_dim)))  # also beyond [-1, 1]
        for group in ("policy", "privileged"):
            assert np.isfinite(res.obs[group]).all() and np.isfinite(res.final_obs[group]).all()
        assert np.isfinite(res.reward).all() and np.all(np.abs(res.reward) < 100)
        frame = res.obs["policy"][:, -len(names) :] / scales
        for k, name in enumerate(names):
            if name.startswith("q") and not name.startswith("qvel"):
                assert np.all(np.abs(frame[:, k]) <= np.pi + 1e-5), name  # wrapped angles
            if name.startswith(("cos", "sin")):
                assert np.all(np.abs(frame[:, k]) <= 1 + 1e-6), name
            if name == "prev_action":
                assert np.all(np.abs(frame[:, k]) <= 1 + 1e-6)
        assert np.all(np.abs(env.stepper.qvel) < 200)
        ends += int((res.truncated | res.terminated).sum())
    assert ends >= 8
    assert np.isfinite(obs["policy"]).all()


# the navigation tasks over the walking policy (learn/envs/goto.py) have no robot-side runner
@pytest.mark.parametrize("env_id", [e for e in ENV_IDS if TASKS[e].vec_env is None])
def test_the_robot_side_runner_runs_an_exported_policy(env_id, tmp_path):
    # an untrained actor with fixed random weights: both sides must compute the same function
    # of the robot's measurements (q and qvel of the joints, x and x_vel of a cart)
    config = {"episode_s": 0.5}
    env = make_vec(env_id, 1, seed=7, config=config)
    torch.manual_seed(0)
    net = NetConfig(actor_hidden=[16, 16], init_std=0.5)
    actor = Actor(env.obs_groups["policy"].dim, env.action_dim, net)
    torch.nn.init.normal_(actor.net[-1].weight, std=0.5)
    save_policy(
        tmp_path / "run", actor, PolicyMeta.from_env(env, ObsRoles(), env_config=config, net=net)
    )
    export_policy(tmp_path / "run", tmp_path / "out")
    policy, deployed = load_policy(tmp_path / "run"), DeployedPolicy(tmp_path / "out")
    names = [t.name for t in env.obs_groups["policy"].terms]
    scales = np.array([t.scale for t in env.obs_groups["policy"].terms])

    def measured(obs):
        newest = obs["policy"][0, -len(names) :] / scales
        out = {}
        legged = ("base_ang_vel", "projected_gravity", "command", "joint_pos", "joint_vel")
        for base in ("q", "qvel", "x", "x_vel", *legged):
            idx = [k for k, n in enumerate(names) if n == base or n.startswith(f"{base}[")]
            if idx:
                out[base] = newest[idx]
        if "joint_pos" in out:  # a legged robot measures absolute positions
            out["joint_pos"] = out["joint_pos"] + deployed.default_joint_pos
        return out

    obs, diffs, actions, resets = env.reset(seed=7), [], [], 0
    for _ in range(120):
        expected = policy.act(obs)[0]
        got = deployed.act(measured(obs))
        diffs.append(np.abs(got - expected).max())
        actions.append(got)
        res = env.step(expected[None])
        obs = res.obs
        if res.truncated[0] or res.terminated[0]:
            deployed.reset()
            resets += 1
    assert resets >= 2 and max(diffs) < 1e-5 and np.ptp(actions) > 0.1


@pytest.mark.parametrize(
    ("data", "field", "close"),
    [
        ({"reward": {"uprigth": 1.0}}, "reward.uprigth", "upright"),
        ({"observations": ["q", "cos_qq"]}, "observations.cos_qq", "cos_q"),
        ({"scales": {"qvell": 0.2}}, "scales.qvell", "qvel"),
    ],
)
def test_unknown_terms_are_refused_with_close_matches(data, field, close):
    with pytest.raises(InputError) as err:
        env_config("sim2real/PendulumSwingup-v0", data)
    message = str(err.value)
    assert field in message and close in message and "\n" not in message
    with pytest.raises(InputError):
        make_vec("sim2real/PendulumSwingup-v0", 1, config=data)


def test_an_empty_observation_list_is_refused():
    with pytest.raises(InputError, match="at least 1 item") as err:  # was a numpy traceback
        env_config("sim2real/PendulumSwingup-v0", {"observations": []})
    assert "observations" in str(err.value)


def test_unknown_term_from_the_command_line_exits_2(tmp_path):
    cfg = tmp_path / "env.yaml"
    cfg.write_text(yaml.safe_dump({"reward": {"bonnus": 1.0}}))
    proc = run_cli("policy", "train", CARTPOLE, "--env-config", cfg, "--steps", 64,
                   "--out", tmp_path / "run")  # fmt: skip
    assert_one_line_error(proc, "reward.bonnus", "bonus")
    assert not (tmp_path / "run").exists()


def test_a_config_model_is_the_task_own_a_built_in_or_a_file():
    cartpole = TASKS[CARTPOLE]
    assert cartpole.model_path("cartpole") == cartpole.models["cartpole"]
    assert TASKS["sim2real/PendulumSwingup-v0"].model_path("pendulum-dfki").is_file()
    with pytest.raises(InputError) as err:
        cartpole.model_path("cartpol")
    assert (err.value.source, err.value.field) == ("config", "model")
    assert "cartpol: neither" in str(err.value) and "did you mean cartpole" in str(err.value)


def test_observation_terms_are_chosen_by_the_config():
    env = make_vec(CARTPOLE, 2, seed=0, dr=None, config={"observations": ["cos_q", "sin_q", "x"]})
    obs = env.reset()["policy"].reshape(2, -1, 3)
    assert [t.name for t in env.obs_groups["policy"].terms] == ["cos_q", "sin_q", "x"]
    q, x = env.stepper.qpos[:, 1], env.stepper.qpos[:, 0]
    assert np.allclose(obs[:, -1], np.stack([np.cos(q), np.sin(q), x], axis=1), atol=1e-6)


def _cartpole(**cfg):
    base = {"init_q_rad": 0.0, "init_qvel_rad_s": 0.0}
    env = make_vec(CARTPOLE, 2, seed=0, dr=None, config={**base, **cfg})
    env.reset()
    return env


def test_cartpole_force_limit_pushes_the_cart_by_f_over_m():
    # a pole hanging at rest: a cart pushed by F starts at a = F / (M + m I_c / I_pivot) (the
    # pole's centre lags behind, so it adds only I_c / (I_c + m l^2) = 1/4 of its mass):
    # 10 N on 1 kg + 0.1 kg / 4, less 0.05 N of friction, for 10 ms
    env = _cartpole()
    env.step(np.array([[1.0], [5.0]]))  # the second is clipped to 1: 10 N as well
    v = env.stepper.qvel[:, 0]
    assert v[0] == v[1]
    assert v[0] == pytest.approx((10.0 - 0.05) / 1.025 * 0.01, rel=0.01)


def test_cartpole_episode_ends_at_the_end_of_the_rail():
    env = _cartpole()
    steps = 0
    while steps < 200:
        res = env.step(np.array([[1.0], [0.0]]))
        steps += 1
        if res.terminated[0]:
            break
    assert res.terminated[0] and not res.truncated[0] and not res.terminated[1]
    assert res.info["episode_length"][0] == steps and np.isnan(res.info["episode_length"][1])
    final_x = res.final_obs["policy"][0, -7]  # x of the last frame, scale 1
    assert abs(final_x) >= 0.9 - 1e-3
    assert abs(env.stepper.qpos[0, 0]) < 0.1  # reset to the middle


def test_cartpole_success_when_the_pole_is_held_upright():
    env = _cartpole(episode_s=2.5)
    env.stepper.state[:, 2] = [np.pi, 2.5]  # [time, x, q, ...]: row 1 far out of the band
    env.stepper.state[:, 3:] = 0.0
    up = []
    for _ in range(250):
        # the upright pole falls without control; hold it there by rewriting the state
        env.stepper.state[0, 1:5] = [0.0, np.pi, 0.0, 0.0]
        res = env.step(np.zeros((2, 1)))
        up.append(res.info["in_band"].copy())
    assert list(res.info["episode_success"]) == [1.0, 0.0]
    assert np.all(np.array(up)[:, 0])


def test_pendubot_stops_a_runaway_spin_with_a_penalty():
    # full torque all along spins the links up: the episode ends at 50 rad/s, before the 2 ms
    # simulation diverges, and that step costs the termination weight (10)
    env = make_vec("sim2real/PendubotSwingup-v0", 1, seed=0, dr=None)
    env.reset()
    for _ in range(1000):
        before = np.abs(env.stepper.qvel[0]).max()
        res = env.step(np.ones((1, 1)))
        if res.terminated[0]:
            break
    assert res.terminated[0] and not res.truncated[0]
    assert before < 50.0 and res.reward[0] < -5.0
    assert np.isfinite(res.final_obs["privileged"]).all()
    assert np.abs(env.stepper.qvel[0]).max() < 1.0  # reset


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_every_world_of_a_task_builds_its_environment(env_id):
    from sim2real.learn.reality import load_reality, reality_env
    from sim2real.learn.reality_sets import reality_sets

    sets = reality_sets(env_id)
    names = [*sets.validation, *sets.evaluation]
    assert sets.validation and sets.evaluation
    for name in names:
        env = reality_env(load_reality(name), env_id, {}, 2, 0)
        env.reset()
        res = env.step(np.zeros((2, env.action_dim)))
        assert np.isfinite(res.obs["policy"]).all(), name


def test_commands_are_drawn_per_episode_observed_and_rewarded():
    # the cart-pole's x_target: drawn per environment at every episode start, read by the
    # policy when its frame lists it, and the centring term is -(x - x_target)^2
    only = {"upright": 0.0, "velocity": 0.0, "action": 0.0, "bonus": 0.0, "terminated": 0.0}
    cfg = {"commands": {"x_target": [-0.5, 0.5]}, "episode_s": 0.1,
           "observations": ["x", "x_target"], "reward": {**only, "centre": 1.0}}  # fmt: skip
    env = make_vec(CARTPOLE, 4, seed=3, dr=None, config=cfg)
    obs = env.reset()
    target = env.commands[:, 0].copy()
    assert np.all(np.abs(target) <= 0.5) and len(set(target)) == 4
    assert np.allclose(obs["policy"][:, -1], target, atol=1e-6)  # x_target scale 1
    names = [t.name for t in env.obs_groups["privileged"].terms]
    assert obs["privileged"][:, names.index("command.x_target")] == pytest.approx(target, abs=1e-6)
    for _ in range(9):
        res = env.step(np.zeros((4, 1)))
        x = env.stepper.qpos[:, 0]
        assert res.reward == pytest.approx(-((x - target) ** 2), rel=1e-5, abs=1e-7)
        assert np.array_equal(env.commands[:, 0], target)  # held through the episode
    res = env.step(np.zeros((4, 1)))
    assert res.truncated.all() and not np.array_equal(env.commands[:, 0], target)  # redrawn
    for bad, field in (({"x_goal": [0, 1]}, "commands.x_goal"), ({"x_target": [1, 0]}, "inverted")):
        with pytest.raises(InputError, match=field):
            env_config(CARTPOLE, {"commands": bad})


def test_a_hand_controller_swings_the_cart_pole_up():
    # energy pumping then LQR (tests/learn/cartpole_controller.py): the task is solvable within
    # its 10 N and its rail, and success is what the environment reports for it
    from learn.cartpole_controller import episodes

    success, at_rail = episodes(4, None)
    assert np.array_equal(success, np.ones(4)) and at_rail == 0


def test_start_shares_spread_the_hinges_or_start_at_the_goal():
    pendubot, cart = "sim2real/PendubotSwingup-v0", CARTPOLE
    env = make_vec(pendubot, 200, seed=0, dr=None, config={"init_random_share": 0.5})
    env.reset(seed=0)
    q = env.stepper.qpos[:, env.qadr]
    spread = np.any(np.abs(q) > 0.05, axis=1)  # outside the usual +-0.05 rad start
    assert 0.35 < spread.mean() < 0.65 and np.abs(q).max() > 3.0
    env = make_vec(cart, 200, seed=0, dr=None, config={"init_random_share": 1.0})
    env.reset(seed=0)
    cart_x, pole = env.stepper.qpos[:, env.qadr[0]], env.stepper.qpos[:, env.qadr[1]]
    assert np.abs(cart_x).max() <= 0.05 + 1e-12  # the slider keeps its start range
    assert np.abs(pole).max() > 3.0
    env = make_vec(pendubot, 200, seed=0, dr=None, config={"init_goal_share": 0.5})
    env.reset(seed=0)
    err = env.stepper.qpos[:, env.qadr] - [np.pi, 0.0]
    at_goal = np.all(np.abs(err) <= 0.05 + 1e-12, axis=1)
    assert 0.35 < at_goal.mean() < 0.65
    assert np.all(np.abs(env.stepper.qpos[~at_goal][:, env.qadr]) <= 0.05 + 1e-12)
    with pytest.raises(InputError, match="init_goal_share"):
        env_config(pendubot, {"init_random_share": 0.6, "init_goal_share": 0.5})
    # share 0 draws exactly as before the field existed
    a, b = (make_vec(pendubot, 8, seed=3, config=c) for c in ({}, {"init_random_share": 0.0}))
    assert np.array_equal(a.reset(seed=3)["policy"], b.reset(seed=3)["policy"])


def test_action_rate_pays_for_every_change_of_the_action():
    # the pendulum with the smoothness term alone: the first step pays for the change from the
    # reset's zero action, a held action pays nothing, a flip pays (2 a)^2, and a new episode
    # starts again from zero
    only = {"upright": 0.0, "velocity": 0.0, "action": 0.0, "bonus": 0.0, "action_rate": 0.5}
    env = make_vec("sim2real/PendulumSwingup-v0", 3, seed=0, dr=None,
                   config={"reward": only, "episode_s": 0.03})  # fmt: skip
    env.reset()
    a = np.array([[0.2], [-0.6], [1.0]])
    assert env.step(a).reward == pytest.approx(-0.5 * a[:, 0] ** 2, rel=1e-6)
    assert env.step(a).reward == pytest.approx(np.zeros(3), abs=1e-9)
    res = env.step(-a)
    assert res.truncated.all()
    assert res.reward == pytest.approx(-0.5 * (2 * a[:, 0]) ** 2, rel=1e-6)
    assert env.step(a).reward == pytest.approx(-0.5 * a[:, 0] ** 2, rel=1e-6)


@pytest.mark.parametrize("env_id", ["sim2real/PendulumSwingup-v0", "sim2real/PendubotSwingup-v0",
                                    CARTPOLE])  # fmt: skip
def test_energy_shaping_reads_mujoco_energy_of_each_randomized_model(env_id):
    # the term's closed form against MuJoCo's own energy (potential + kinetic, armature
    # included) at random states of 16 randomized models: masses, inertias and armatures
    # drawn; a cart-pole's cart stands still (the term is the pole's energy in its frame)
    import mujoco

    env = make_vec(env_id, 16, seed=4, config={"reward": {"energy": 1.0}})
    env.reset()
    term = env.reward_terms["energy"]
    rng = np.random.default_rng(1)
    q = rng.uniform(-np.pi, np.pi, (16, len(env.qadr)))
    qd = rng.uniform(-8.0, 8.0, (16, len(env.qadr)))
    hinges = env.task.hinges or env.task.joints
    qd[:, [k for k, j in enumerate(env.task.joints) if j not in hinges]] = 0.0
    ours = term.energy(q, qd)
    for i, model in enumerate(env.stepper.models):
        m = model.__copy__()
        m.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
        d = mujoco.MjData(m)
        mujoco.mj_forward(m, d)
        rest = d.energy.sum()
        d.qpos[env.qadr], d.qvel[env.dof] = q[i], qd[i]
        mujoco.mj_forward(m, d)
        assert ours[i] == pytest.approx(d.energy.sum() - rest, rel=1e-9, abs=1e-12)
    # 0 hanging at rest, 1 at the goal at rest, less on either side of the goal's energy
    goal = np.array([env.task.goal.get(j, 0.0) for j in env.task.joints])
    still = np.zeros_like(qd)
    at_rest = term.energy(np.zeros_like(q), still)
    assert np.all(at_rest == 0.0)
    assert np.allclose(term.energy(np.tile(goal, (16, 1)), still), term.goal_energy)
    assert len({float(e) for e in term.goal_energy}) == 16  # one per randomized model
    view = terms.StepView(q=np.tile(goal, (16, 1)), qd=still, err=None, action=None, in_band=None)
    assert np.allclose(term(view), 1.0)


def test_energy_shaping_refuses_more_than_two_hinges():
    env = make_vec("sim2real/Go1Velocity-v0", 2, seed=0, dr=None)  # twelve leg hinges
    with pytest.raises(InputError, match=r"reward\.energy.*chain of 1 or 2 hinges"):
        terms.Energy(2).update_rows(env, np.arange(2))


def test_an_unknown_environment_suggests_only_close_ids():
    with pytest.raises(InputError) as err:
        make_vec("sim2real/Nope-v0", 1)
    assert "did you mean" not in str(err.value)  # every id shares "sim2real/": not a match
    with pytest.raises(InputError, match=r"did you mean sim2real/Go1Velocity-v0\?"):
        make_vec("sim2real/Go1Velocity-v1", 1)
