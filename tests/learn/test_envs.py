"""PendulumSwingup: gymnasium compliance, the observation contract, success, autoreset, exact
continuation, per-environment parameters, action delay and actuator models in the loop."""

from __future__ import annotations

import pickle

import gymnasium
import mujoco
import numpy as np
import pytest
import yaml
from gymnasium.utils.env_checker import check_env
from scipy.optimize import brentq

from sim2real.core.errors import InputError
from sim2real.learn.envs import ENV_IDS, default_dr_path, env_config, make_vec
from sim2real.learn.envs.pendubot import tip_height
from sim2real.learn.envs.terms import StepView
from sim2real.learn.randomization import Randomization, Term, load_randomization
from sim2real.learn.vec import VecEnv

ENV = "sim2real/PendulumSwingup-v0"
# point-mass pendulum of the built-in model: m g cx (N m)
MGCX = 0.16688 * 9.81 * 0.6124


def _wrap(a):
    return (a + np.pi) % (2 * np.pi) - np.pi


def test_registered_and_check_env_passes():
    assert ENV in ENV_IDS
    env = gymnasium.make(ENV)
    check_env(env.unwrapped)
    obs, _ = env.reset(seed=3)
    assert obs.shape == env.observation_space.shape and obs.dtype == np.float32
    assert env.action_space.shape == (1,)


def test_reset_and_step_shapes_and_dtypes():
    env = make_vec(ENV, 4, seed=0)
    assert isinstance(env, VecEnv)
    obs = env.reset()
    hist = env.obs_groups["policy"].history
    assert obs["policy"].shape == (4, 5 * hist) and obs["policy"].dtype == np.float32
    assert obs["privileged"].shape == (4, env.obs_groups["privileged"].dim)
    assert not env.obs_groups["privileged"].deployable
    res = env.step(np.zeros((4, 1)))
    assert res.reward.shape == (4,) and res.reward.dtype == np.float32
    assert res.terminated.dtype == bool and res.truncated.dtype == bool
    assert np.isnan(res.info["episode_return"]).all()
    assert env.max_episode_steps == 1000 and env.control_dt == 0.01
    assert np.array_equal(env.action_limit, [1.0])


def test_policy_frame_terms_scaling_history_and_wrapping():
    env = make_vec(ENV, 2, seed=0, dr=None)
    terms = env.obs_groups["policy"].terms
    assert [t.name for t in terms] == ["q", "cos_q", "sin_q", "qvel", "prev_action"]
    scales = np.array([t.scale for t in terms])
    obs = env.reset()["policy"].reshape(2, -1, 5)
    # first frame copied over the whole history
    assert np.array_equal(obs[:, 0], obs[:, -1]) and np.array_equal(obs[:, 1], obs[:, -1])
    # start past +pi: the measured q must wrap to [-pi, pi)
    env.stepper.state[:, 1] = [3.5, -0.2]
    env.stepper.state[:, 2] = [1.0, -1.0]
    frames = []
    for action in (0.5, -0.25):
        o = env.step(np.full((2, 1), action)).obs["policy"].reshape(2, -1, 5)
        q, qd = env.stepper.qpos[:, 0], env.stepper.qvel[:, 0]
        qm = _wrap(q)
        raw = np.stack([qm, np.cos(qm), np.sin(qm), qd, np.full(2, action)], axis=1)
        assert np.allclose(o[:, -1], raw * scales, atol=1e-6)  # float32
        frames.append(o[:, -1])
    assert q[0] > np.pi and -np.pi <= o[0, -1, 0] / scales[0] < np.pi
    # oldest first: [first frame, after step 1, after step 2]
    assert np.array_equal(o[:, 1], frames[0]) and np.array_equal(o[:, 2], frames[1])
    assert np.array_equal(o[:, 0], obs[:, 0])
    assert o[0, -2, 4] == pytest.approx(0.5 * scales[4]) and o[0, -1, 4] == pytest.approx(-0.25)


def _upright_env(episode_s: float):
    cfg = {"episode_s": episode_s, "init_q_rad": 0.0, "init_qvel_rad_s": 0.0}
    env = make_vec(ENV, 3, seed=0, dr=None, config=cfg)
    env.reset()
    return env


def _teleport(env, rows, q):
    env.stepper.state[rows, 1] = q
    env.stepper.state[rows, 2] = 0.0


def test_success_needs_an_uninterrupted_hold():
    # static friction (0.29 N m) holds the pendulum at exactly upright with zero torque.
    # row 0: upright all along; row 1: 1.5 s upright, knocked out, 1.5 s again: no 2 s hold;
    # row 2: 1.5 s upright, knocked out, 2.1 s upright: success
    env = _upright_env(4.0)
    _teleport(env, [0, 1, 2], np.pi)
    for step in range(400):
        if step == 150:
            _teleport(env, [1, 2], 0.0)
        if step == 151:
            _teleport(env, [1, 2], np.pi)
        if step == 301:
            _teleport(env, [1], 0.0)
        res = env.step(np.zeros((3, 1)))
    assert res.truncated.all()
    assert list(res.info["episode_success"]) == [1.0, 0.0, 1.0]
    assert list(res.info["episode_length"]) == [400, 400, 400]


def test_success_boundary_is_exactly_hold_s():
    # in band for 199 steps then out: fails; 200 steps: succeeds
    env = _upright_env(3.0)
    _teleport(env, [0, 1, 2], np.pi)
    for step in range(300):
        if step == 199:
            _teleport(env, [0], 0.0)
        if step == 200:
            _teleport(env, [1], 0.0)
        res = env.step(np.zeros((3, 1)))
    assert list(res.info["episode_success"]) == [0.0, 1.0, 1.0]


def test_autoreset_returns_final_obs_and_new_first_frame():
    env = make_vec(ENV, 2, seed=0, config={"episode_s": 0.05})
    env.reset()
    for _ in range(4):
        res = env.step(np.ones((2, 1)))
        assert not res.truncated.any()
    res = env.step(np.ones((2, 1)))
    assert res.truncated.all() and not res.terminated.any()
    assert np.array_equal(res.info["episode_length"], [5.0, 5.0])
    assert np.isfinite(res.info["episode_return"]).all()
    new = res.obs["policy"].reshape(2, -1, 5)
    final = res.final_obs["policy"].reshape(2, -1, 5)
    assert np.array_equal(new[:, 0], new[:, -1])  # a fresh history
    assert not np.array_equal(final[:, 0], final[:, -1])
    assert np.all(final[:, -1, 4] == 1.0) and np.all(new[:, -1, 4] == 0.0)
    assert np.all(env.steps == 0)


def _rollout(env, actions):
    out = []
    for a in actions:
        r = env.step(a)
        out.append((r.obs["policy"], r.obs["privileged"], r.reward, r.final_obs["policy"]))
    return out


@pytest.mark.parametrize("actuator", [None, {"kind": "pd"}])
def test_get_state_set_state_continues_exactly(actuator):
    cfg = {"episode_s": 0.5, "actuator": actuator}
    # the default DR (resets, noise) with pushes every 0.1-0.2 s so some land in the window
    dr = load_randomization(default_dr_path(ENV))
    push = Term(
        name="push", target="env.push_Nm", mode="interval", interval_s=(0.1, 0.2), range=(-1.0, 1.0)
    )
    dr = Randomization(terms=[*dr.terms, push])
    env = make_vec(ENV, 3, seed=7, dr=dr, config=cfg)
    env.reset()
    actions = np.random.default_rng(0).uniform(-1, 1, (120, 3, 1))
    _rollout(env, actions[:20])
    state = pickle.loads(pickle.dumps(env.get_state()))
    first = _rollout(env, actions[20:])
    assert env.push_left.any() or np.any(np.stack([f[1][:, 3] for f in first]))
    env.set_state(state)
    again = _rollout(env, actions[20:])
    fresh = make_vec(ENV, 3, seed=99, dr=dr, config=cfg)
    fresh.reset()
    fresh.set_state(state)
    third = _rollout(fresh, actions[20:])
    for a, b, c in zip(first, again, third, strict=True):
        for x, y, z in zip(a, b, c, strict=True):
            assert np.array_equal(x, y) and np.array_equal(x, z)


def test_same_seed_same_trajectories_other_seed_differs():
    actions = np.random.default_rng(1).uniform(-1, 1, (30, 2, 1))
    runs = []
    for seed in (5, 5, 6):
        env = make_vec(ENV, 2, seed=seed)
        env.reset()
        runs.append(np.stack([r[0] for r in _rollout(env, actions)]))
    assert np.array_equal(runs[0], runs[1]) and not np.array_equal(runs[0], runs[2])


def test_each_env_has_its_own_model_values():
    env = make_vec(ENV, 5, seed=2)
    env.reset()
    col = env.space.names.index
    mass = env.values[:, col("mass_kg")]
    damping = env.values[:, col("damping_Nm_s")]
    assert len(set(mass.round(9))) == 5
    for i, m in enumerate(env.stepper.models):
        assert m.body_mass[1] == pytest.approx(mass[i])
        assert m.dof_damping[0] == pytest.approx(damping[i])
    # the privileged group reports them relative to nominal
    priv = env._observe()["privileged"]
    k = 4 + col("mass_kg")
    assert np.allclose(priv[:, k], mass / env.nominal[col("mass_kg")] - 1.0, atol=1e-6)


def test_action_delay_is_honoured_at_substep_resolution():
    # 6 ms = 3 substeps of 2 ms: the first control step applies 0 for 3 substeps, then u1
    cfg = {"extra_delay_s": 0.006, "init_q_rad": 0.0, "init_qvel_rad_s": 0.0}
    env = make_vec(ENV, 1, seed=0, dr=None, config=cfg)
    env.reset()
    u1, u2 = 0.8, -0.6
    env.step(np.array([[u1]]))
    env.step(np.array([[u2]]))
    model = env.stepper.models[0]
    d = mujoco.MjData(model)
    for u in [0, 0, 0, u1, u1, u1, u1, u1, u2, u2]:
        d.ctrl[0] = u
        mujoco.mj_step(model, d)
    assert env.stepper.qpos[0, 0] == pytest.approx(d.qpos[0], abs=1e-12)
    assert env.stepper.qvel[0, 0] == pytest.approx(d.qvel[0], abs=1e-12)
    d2 = mujoco.MjData(model)  # and a different delay gives a different state
    for u in [0, 0, u1, u1, u1, u1, u1, u2, u2, u2]:
        d2.ctrl[0] = u
        mujoco.mj_step(model, d2)
    assert abs(env.stepper.qvel[0, 0] - d2.qvel[0]) > 1e-6


def test_torque_limit_is_enforced():
    cfg = {"init_q_rad": 0.0, "init_qvel_rad_s": 0.0, "torque_limit_Nm": 0.5}
    a, b = (make_vec(ENV, 1, seed=0, dr=None, config=cfg) for _ in range(2))
    a.reset(), b.reset()
    a.step(np.array([[1.0]]))
    b.step(np.array([[7.0]]))  # clipped to 1 -> 0.5 N m, not 3.5
    assert np.array_equal(a.stepper.state, b.stepper.state)
    assert a.stepper.qvel[0, 0] > 0


def test_a_weaker_motor_saturates_the_command_and_does_not_scale_it(tmp_path):
    # the exported runner sends action * the nominal limit; a motor of 0.5 N m clips that at
    # 0.5 and passes smaller commands unchanged (it scaled every command by 0.5 before)
    weak = tmp_path / "weak.dr.yaml"
    weak.write_text(
        "terms:\n  - {name: weak, target: env.torque_limit_Nm, mode: startup,"
        " distribution: uniform, range: [0.5, 0.5], operation: absolute}\n"
    )
    cfg = {"init_q_rad": 0.0, "init_qvel_rad_s": 0.0}
    for action, same_as in ((0.3, 0.3), (1.0, 0.5)):
        a = make_vec(ENV, 1, seed=0, dr=weak, config=cfg)
        b = make_vec(ENV, 1, seed=0, dr=None, config=cfg)
        a.reset(), b.reset()
        a.step(np.array([[action]]))
        b.step(np.array([[same_as]]))
        assert np.array_equal(a.stepper.state, b.stepper.state), action


def test_pd_actuator_in_the_loop_holds_its_equilibrium():
    # command = action * torque_limit = 0.5 rad; with friction and bias off the PD spring
    # K (0.5 - q) balances gravity m g cx sin q, K = kp * kp_fw(200)
    kp = 0.05
    cfg = {
        "init_q_rad": 0.0,
        "init_qvel_rad_s": 0.0,
        "params": {"frictionloss_Nm": 0.0, "torque_bias_Nm": 0.0},
        "actuator": {
            "kind": "pd",
            "params": {"kp_Nm_rad_per_fw": kp, "kd_Nms_rad": 0.5, "tau_max_Nm": 5.0},
        },
    }
    env = make_vec(ENV, 2, seed=0, dr=None, config=cfg)
    env.reset()
    for _ in range(300):
        env.step(np.array([[0.5], [-0.3]]))
    K = kp * 200.0
    for row, target in ((0, 0.5), (1, -0.3)):
        q_eq = brentq(lambda q, t=target: K * (t - q) - MGCX * np.sin(q), -1.0, 1.0)
        assert env.stepper.qpos[row, 0] == pytest.approx(q_eq, abs=1e-4)
        assert abs(q_eq - target) > 0.02  # gravity's droop is visible
    assert "actuator.kp_Nm_rad_per_fw" in env.space.names


def test_actuator_parameters_are_randomizable():
    dr = Randomization(
        terms=[
            Term(
                name="kp",
                target="actuator.kp_*",
                mode="reset",
                range=(0.01, 0.02),
                operation="absolute",
            )
        ]
    )
    env = make_vec(ENV, 4, seed=0, dr=dr, config={"actuator": {"kind": "pd"}})
    env.reset()
    kp = env.act.runtime.p["kp_Nm_rad_per_fw"]
    assert kp.shape == (4,) and np.all((kp >= 0.01) & (kp <= 0.02)) and len(set(kp)) == 4


def test_config_params_override_and_unknown_names_fail():
    env = make_vec(ENV, 1, dr=None, config={"params": {"body.mass:pendulum": 0.2}})
    env.reset()
    assert env.stepper.models[0].body_mass[1] == pytest.approx(0.2)
    with pytest.raises(InputError) as err:
        make_vec(ENV, 1, dr=None, config={"params": {"mass_kgg": 0.2}})
    assert "mass_kg" in str(err.value)
    with pytest.raises(InputError):
        env_config(ENV, {"torque_limit": 2.0})
    with pytest.raises(InputError):
        make_vec("sim2real/PendulumSwingup-v9", 1)


def test_privileged_size_does_not_depend_on_the_dr_file(tmp_path):
    dims = {make_vec(ENV, 1, dr=dr).obs_groups["privileged"].dim for dr in (None, "default")}
    assert len(dims) == 1


def test_state_dependent_friction_steps_in_python_exactly():
    # a smooth Coulomb term (extra.coulomb) is applied from the velocity at every substep
    cfg = {
        "init_q_rad": 0.0,
        "init_qvel_rad_s": 0.0,
        "params": {"coulomb_Nm": 0.2, "frictionloss_Nm": 0.0},
    }
    env = make_vec(ENV, 1, seed=0, dr=None, config=cfg)
    env.reset()
    env.stepper.state[0, 2] = 3.0
    env.step(np.array([[0.4]]))
    model = env.stepper.models[0]
    d = mujoco.MjData(model)
    d.qvel[0] = 3.0
    for _ in range(5):
        d.ctrl[0] = 0.4
        d.qfrc_applied[0] = -0.2 * (2 / np.pi) * np.arctan(d.qvel[0] / 0.01)
        mujoco.mj_step(model, d)
    assert env.stepper.qvel[0, 0] == pytest.approx(d.qvel[0], abs=1e-12)
    assert env.batch_extras.state_dependent


def test_fitted_model_with_sidecar_sets_the_nominal(tmp_path):
    import shutil

    from sim2real.sim.builtin import resolve_model

    xml = tmp_path / "fitted.xml"
    shutil.copy(resolve_model("pendulum-dfki")[0], xml)
    sidecar = {"extras": {"delay_s": 0.01, "pos_noise_rad": {"shoulder": 0.003}}}
    (tmp_path / "fitted.sidecar.yaml").write_text(yaml.safe_dump(sidecar))
    env = make_vec(ENV, 2, dr=None, config={"model": str(xml), "extra_delay_s": 0.004})
    env.reset()
    col = env.space.names.index
    assert env.nominal[col("delay_s")] == pytest.approx(0.01)
    assert env.nominal[col("pos_noise_rad")] == pytest.approx(0.003)
    assert list(env.act.delay_sub) == [7, 7]  # (10 + 4) ms / 2 ms


def test_torque_actuator_with_ideal_settings_matches_the_fast_path():
    # torque kind, gain 1, no lag, no delay, no friction: only its 1e-5 kg m^2 armature
    # differs (J = 0.0626 kg m^2), so the swing matches to ~1e-4 relative
    cfg = {"init_q_rad": 0.0, "init_qvel_rad_s": 0.0}
    fast = make_vec(ENV, 1, seed=0, dr=None, config=cfg)
    act = make_vec(ENV, 1, seed=0, dr=None, config={**cfg, "actuator": {"kind": "torque"}})
    fast.reset(), act.reset()
    for k in range(300):  # bang-bang at about the natural half period (0.78 s)
        a = np.array([[1.0 if (k // 78) % 2 == 0 else -1.0]])
        fast.step(a), act.step(a)
    assert abs(fast.stepper.qpos[0, 0]) > 0.5  # it swung
    assert act.stepper.qpos[0, 0] == pytest.approx(fast.stepper.qpos[0, 0], rel=2e-3)


PENDUBOT = "sim2real/PendubotSwingup-v0"


def test_pendubot_check_env_and_layout():
    check_env(gymnasium.make(PENDUBOT).unwrapped)
    env = make_vec(PENDUBOT, 2, seed=0)
    obs = env.reset()
    names = [t.name for t in env.obs_groups["policy"].terms]
    per_joint = [f"{t}[{j}]" for j in (0, 1) for t in ("q", "cos_q", "sin_q", "qvel")]
    assert names == [*per_joint, "prev_action"]
    assert obs["policy"].shape == (2, 9 * env.obs_groups["policy"].history)
    assert np.array_equal(env.action_limit, [6.0])
    # the elbow is passive: the action drives the shoulder's actuator only
    env.step(np.ones((2, 1)))
    assert list(env.act.act_index) == [0] and env.stepper.models[0].actuator_trnid[0, 0] == 0


def test_pendubot_height_and_success_when_held_upright():
    env = make_vec(PENDUBOT, 2, seed=0, dr=None, config={"episode_s": 2.5})
    env.reset()
    q = np.array([[0.0, 0.0], [np.pi, 0.0], [np.pi / 2, -np.pi / 2], [np.pi, np.pi]])
    # tip heights -0.5, 0.5, -0.2 (upper link horizontal, lower hanging), 0.1 (folded) m
    height = tip_height(StepView(q, q, q, q, q))
    assert np.allclose(height, [0.0, 1.0, 0.5 * (1 - 0.2 / 0.5), 0.5 * (1 + 0.1 / 0.5)])
    # both joints' static friction holds the exact upright with zero torque
    env.stepper.state[:, 1:3] = [[np.pi, 0.0], [np.pi, 0.3]]  # row 1: elbow out of the band
    env.stepper.state[:, 3:5] = 0.0
    for _ in range(250):
        res = env.step(np.zeros((2, 1)))
    assert list(res.info["episode_success"]) == [1.0, 0.0]


def test_angle_and_energy_reward_terms_by_hand():
    # hanging at rest both score 0; at rest sideways the angle term gives 1 - (1/2)^2 and the
    # energy term 1 - |m g l / (2 m g l) - 1| = 1/2
    only = {"upright": 0.0, "velocity": 0.0, "action": 0.0, "bonus": 0.0}
    cfg = {"init_q_rad": 0.0, "init_qvel_rad_s": 0.0}
    for term, sideways in (("angle", 0.75), ("energy", 0.5)):
        env = make_vec(ENV, 2, seed=0, dr=None, config={**cfg, "reward": {**only, term: 1.0}})
        env.reset(seed=0)
        env.stepper.state[1, 1:3] = [np.pi / 2, 0.0]  # [time, q, qvel]
        reward = env.step(np.zeros((2, 1))).reward
        assert reward == pytest.approx([0.0, sideways], abs=5e-3), term
    # the energy constants are each environment's own: m g l and J of the (scaled) model
    dr = Randomization(terms=[Term(name="m", target="mass_kg", mode="startup",
                                   range=(2.0, 2.0), operation="scale")])  # fmt: skip
    env = make_vec(ENV, 2, seed=0, dr=dr, config={"reward": {"energy": 1.0}})
    env.reset(seed=0)
    energy = env.reward_terms["energy"]
    assert energy.gravity[:, 0] == pytest.approx(2 * 0.1022 * 9.81, rel=1e-3)  # m cx, doubled
    assert energy.m0[:, 0, 0] == pytest.approx(2 * 0.06259, rel=2e-3)  # J doubles with the mass


def test_desync_spreads_the_first_episodes_only():
    env = make_vec(ENV, 64, seed=0, dr=None, config={"desync_episodes": True, "episode_s": 1.0})
    env.reset(seed=0)
    assert len(np.unique(env.steps)) > 30 and env.steps.max() < env.max_episode_steps
    ends = []
    for _ in range(2 * env.max_episode_steps):
        ends.append(np.isfinite(env.step(np.zeros((64, 1))).info["episode_length"]))
    first_lengths = np.argmax(np.array(ends), axis=0) + 1
    assert len(np.unique(first_lengths)) > 30  # first episodes cut at different steps
    from sim2real.learn.evaluate import task_config

    assert "desync_episodes" not in task_config({"desync_episodes": True, "history": 3})
