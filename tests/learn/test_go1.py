"""sim2real/Go1Velocity-v0 and the machinery of legged tasks: the base's frame against MuJoCo's
own sensors, the action map, the motors in the loop (envelope, reflected inertia), commands
redrawn within an episode, terms and terminations by hand, feet air time bookkeeping, exact
continuation, randomization per environment, refused inputs."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest
import yaml
from cli_helpers import assert_one_line_error, run_cli

from sim2real.learn.envs import go1, make_vec
from sim2real.learn.envs import legged_terms as lt
from sim2real.learn.envs.legged import BaseState
from sim2real.learn.envs.terms import StepView
from sim2real.sim.vecstep import STATE_SPEC

ENV = go1.ENV_ID


def _env(n=2, dr=None, **cfg):
    env = make_vec(ENV, n, seed=3, dr=dr, config=cfg)
    env.reset()
    return env


def test_base_frame_matches_the_imu_sensors():
    # after random actions: our body-frame quantities from qpos / qvel against MuJoCo's gyro,
    # velocimeter (at the IMU site, offset r from the base: v_site = v + w x r) and z axis
    env = _env(3)
    rng = np.random.default_rng(0)
    for _ in range(40):
        env.step(rng.uniform(-1, 1, (3, 12)))
    m = env.stepper.models[0]
    d = mujoco.MjData(m)
    base = env.legged.base(env.stepper.qpos, env.stepper.qvel)
    r = m.site("imu").pos
    for i in range(3):
        mujoco.mj_setState(m, d, env.stepper.state[i], STATE_SPEC)
        mujoco.mj_forward(m, d)
        assert np.allclose(base.ang_vel_b[i], d.sensor("imu_ang_vel").data, atol=1e-9)
        v_site = base.lin_vel_b[i] + np.cross(base.ang_vel_b[i], r)
        assert np.allclose(v_site, d.sensor("imu_lin_vel").data, atol=1e-9)
        assert np.allclose(-base.gravity_b[i], d.sensor("imu_upvector").data, atol=1e-9)


def test_tracking_terms_by_hand():
    # a base yawed by +90 deg moving along world +y: in its own frame it moves forward at 1 m/s
    qpos = np.array([[0, 0, 0.3, math.cos(math.pi / 4), 0, 0, math.sin(math.pi / 4)]])
    qvel = np.array([[0.0, 1.0, 0.0, 0.0, 0.0, 0.5]])
    base = BaseState(qpos, qvel, 0, 0)
    assert base.lin_vel_b[0] == pytest.approx([1.0, 0.0, 0.0], abs=1e-12)
    assert base.gravity_b[0] == pytest.approx([0.0, 0.0, -1.0], abs=1e-12)
    cmd = np.array([[1.0, 0.0, 0.5], [0.0, 0.0, 0.0]])
    view = StepView(None, None, None, None, None, commands=cmd, base=BaseState(
        np.repeat(qpos, 2, 0), np.repeat(qvel, 2, 0), 0, 0))  # fmt: skip
    assert lt.track_lin_vel_xy(0.25)(view) == pytest.approx([1.0, math.exp(-4.0)])
    assert lt.track_ang_vel_z(0.25)(view) == pytest.approx([1.0, math.exp(-1.0)])
    assert lt.flat_orientation(view) == pytest.approx([0.0, 0.0], abs=1e-12)


def test_action_map_and_the_motors_in_the_loop():
    env = _env(2)
    kp_hip = 0.000111842 * 36 * (20 * math.pi) ** 2  # 15.895 N m/rad (mjlab's 10 Hz, zeta 2)
    kp_knee = 0.000111842 * 81 * (20 * math.pi) ** 2  # 35.764
    scale = env.legged.targets(np.ones((1, 12))) - env.legged.default
    assert scale[0, :3] == pytest.approx([23.7 / kp_hip, 23.7 / kp_hip, 35.55 / kp_knee])
    assert env.legged.default[:3] == pytest.approx([0.1, 0.9, -1.8])
    # reflected rotor inertia in every model copy: 0.000111842 x 6^2 (hip, thigh), x 9^2 (knee)
    arm = env.stepper.models[1].dof_armature[6:9]
    assert arm == pytest.approx([0.004026312, 0.004026312, 0.009059202])
    # with targets 3 rad away the PD asks far beyond the motors' peak: delivered, at most it
    env = _env(2, action_scale_rad={"*": 3.0})
    rng = np.random.default_rng(1)
    peak = np.zeros(12)
    for _ in range(50):
        env.step(rng.choice([-1.0, 1.0], (2, 12)))
        peak = np.maximum(peak, np.abs(env.act.last_torque).max(axis=0))
    limit = np.tile([23.7, 23.7, 35.55], 4)
    assert np.all(peak <= limit + 1e-9) and np.any(peak > 0.99 * limit)  # saturates, never more


def test_zero_action_stands_and_commands_are_redrawn_every_4_s():
    env = _env(2)
    first = env.commands.copy()
    lo, hi = np.array([[-1.0, -0.5, -1.0]]), np.array([[1.0, 0.5, 1.0]])
    assert np.all((first >= lo) & (first <= hi))
    for k in range(1, 201):
        res = env.step(np.zeros((2, 12)))
        assert not res.terminated.any()
        if k < 200:
            assert np.array_equal(env.commands, first)
    assert not np.any(env.commands == first) and np.all((env.commands >= lo) & (env.commands <= hi))
    assert np.all(np.abs(env.stepper.qpos[:, 2] - 0.24) < 0.04)  # stands (default pose, 4 s)
    assert np.allclose(res.obs["policy"][:, 6:9], env.commands, atol=1e-6)  # command observed


def test_a_tilted_or_low_base_terminates():
    env = _env(2)
    q = env.stepper.qpos
    q[0, 3:7] = [math.cos(0.6), math.sin(0.6), 0, 0]  # rolled by 1.2 rad > max_tilt 1.0
    q[1, 2] = 0.05  # below min_base_height_m 0.12
    view = env._view(q[:, env.qadr], env.stepper.qvel[:, env.dof], np.zeros((2, 12)))
    assert lt.base_tilted(view).tolist() == [True, False]
    assert lt.base_too_low(view).tolist() == [False, True]
    res = env.step(np.zeros((2, 12)))
    assert res.terminated.tolist() == [True, True]


def test_feet_air_time_bookkeeping_by_hand():
    # foot 0 in the air for 10 steps, then down: it pays (air time - 0.5) once, on touch-down;
    # legged_gym's accounting: the air time counts the touch-down step too (11 x 20 ms)
    env = _env(1)
    lg = env.legged
    lg.reset_rows(np.array([0]), np.zeros((1, 12)))
    touch = env.stepper.sensordata[:, lg.touch_adr]
    term = lt.feet_air_time(0.5, 0.1)
    paid = []
    for k in range(13):
        touch[:] = 0.0
        touch[0, 1:] = 50.0
        touch[0, 0] = 50.0 if k >= 10 else 0.0
        env.stepper.sensordata[:, lg.touch_adr] = touch
        lg.update(np.zeros((1, 12)))
        view = StepView(None, None, None, None, None, commands=np.array([[0.5, 0, 0]]), legged=lg)
        paid.append(float(term(view)[0]))
    assert paid[10] == pytest.approx(11 * 0.02 - 0.5)
    assert paid[:10] == [0.0] * 10 and paid[11:] == [0.0, 0.0]


def test_get_state_set_state_continues_exactly():
    env = make_vec(ENV, 2, seed=5, config={"episode_s": 1.0})
    env.reset()
    rng = np.random.default_rng(2)
    actions = rng.uniform(-1, 1, (80, 2, 12))
    for a in actions[:30]:
        env.step(a)
    state = env.get_state()
    first = [env.step(a).obs["policy"] for a in actions[30:]]
    env.set_state(state)
    again = [env.step(a).obs["policy"] for a in actions[30:]]
    assert all(np.array_equal(x, y) for x, y in zip(first, again, strict=True))


def test_default_randomization_draws_each_environment_its_world():
    env = make_vec(ENV, 4, seed=0)
    env.reset()
    foot = [m.geom("FR_foot_collision").id for m in env.stepper.models]
    mu = np.array([m.geom_friction[g, 0] for m, g in zip(env.stepper.models, foot, strict=True)])
    assert np.all((mu >= 0.4) & (mu <= 1.2)) and len(set(mu)) == 4
    mass = np.array([m.body("trunk").mass[0] for m in env.stepper.models])
    assert np.all((mass >= 5.204 - 0.5) & (mass <= 5.204 + 2.5)) and len(set(mass)) == 4
    strength = env.values[:, env.col["actuator.strength"]]
    assert np.all((strength >= 0.8) & (strength <= 1.2))
    assert np.allclose(env.act.motors.p["strength"], strength)


def test_an_inverted_command_range_exits_2_naming_the_field(tmp_path):
    cfg = tmp_path / "env.yaml"
    cfg.write_text(yaml.safe_dump({"commands": {"vx": [1.0, -1.0]}}))
    proc = run_cli("policy", "train", ENV, "--env-config", cfg, "--steps", 64,
                   "--out", tmp_path / "run")  # fmt: skip
    assert_one_line_error(proc, "commands.vx", "inverted")
    assert not (tmp_path / "run").exists()


def test_a_reality_with_negative_friction_is_refused_naming_the_file_and_field(tmp_path):
    from sim2real.core.errors import InputError
    from sim2real.learn.reality import load_reality, reality_env

    path = tmp_path / "ice.yaml"
    path.write_text(yaml.safe_dump({"params": {"ground_friction": -0.3}}))
    with pytest.raises(InputError) as err:
        reality_env(load_reality(str(path)), ENV, {}, 1, 0)
    assert err.value.field == "params.ground_friction" and "ice.yaml" in str(err.value)
    assert ">= 0" in str(err.value) and "\n" not in str(err.value)


def test_pushes_act_horizontally_along_their_own_direction():
    # one push of 20 N on standing robots: each base starts to move along its push's
    # direction (drawn per push, uniform in the plane), not all along world x
    from sim2real.learn.randomization import Randomization, Term

    push = Term(name="push", target="push_Nm", mode="interval", interval_s=(0.1, 0.1),
                range=(20.0, 20.0), operation="absolute")  # fmt: skip
    cfg = {"init_q_rad": 0.0, "init_qvel_rad_s": 0.0, "push_duration_s": 0.2}
    env = make_vec(ENV, 6, seed=1, dr=Randomization(terms=[push]), config=cfg)
    calm = make_vec(ENV, 6, seed=1, dr=None, config=cfg)  # the same robots, never pushed
    for e in (env, calm):
        e.reset()
    for k in range(9):  # the push fires at the end of step 5 (and again at 10), 0.2 s long
        env.step(np.zeros((6, 12)))
        calm.step(np.zeros((6, 12)))
        if k == 4:
            direction = env.legged.push_dir.copy()
    dv = env.stepper.qvel[:, :2] - calm.stepper.qvel[:, :2]
    along = np.sum(dv * direction, axis=1) / np.linalg.norm(dv, axis=1)
    assert np.allclose(np.linalg.norm(direction, axis=1), 1.0) and np.ptp(direction[:, 1]) > 0.5
    assert np.all(along > 0.95), along
