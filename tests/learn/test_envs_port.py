"""The swing-up environments on the task machinery step as the code before the port did: the
same observations, rewards and physics states on the same parameters, start states and
actions (tests/learn/swingup_reference.py says how the reference was recorded, and why it was
recorded again when the torque limit became a saturation)."""

from __future__ import annotations

import numpy as np
import pytest
from learn.swingup_reference import DATA, SCENARIOS, run

# a batch with a state-dependent torque (the smooth friction of the default randomization, the
# PD servo) now steps one mujoco.rollout call (mj_step) per substep; the reference was recorded
# through mj_step1 / mj_step2 per environment, which round the implicit integration a few units
# in the last place differently (5.6e-17 at most here)
TO_ROUNDING = {"pendulum", "pendulum_pd", "pendulum_shaped"}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_steps_as_before_the_port(name):
    ref = np.load(DATA)
    now = run(name)
    for key in ("policy", "privileged", "state"):
        k = f"{name}.{key}"
        assert now[k].shape == ref[k].shape, k
        if name in TO_ROUNDING:
            assert np.allclose(now[k], ref[k], rtol=0, atol=1e-12), np.abs(now[k] - ref[k]).max()
        else:
            assert np.array_equal(now[k], ref[k]), (k, np.abs(now[k] - ref[k]).max())
    k = f"{name}.reward"  # a weighted sum in another order: equal to rounding
    assert np.allclose(now[k], ref[k], rtol=1e-6, atol=1e-7), np.abs(now[k] - ref[k]).max()


def test_an_open_loop_actuator_keeps_the_fast_path_and_its_torques():
    # a torque motor without friction (lag, gain, delay): its torques depend on the commands
    # only, so the batch steps by rollout; the physics equals mj_step under the same model's
    # torques computed by a runtime of its own
    import mujoco

    from sim2real.actuators.models import ActuatorState, config_from_dict
    from sim2real.learn.envs import make_vec

    actuator = {"kind": "torque", "params": {"torque_time_constant_s": 0.01, "delay_s": 0.004,
                                             "torque_gain": 0.9}}  # fmt: skip
    cfg = {"init_q_rad": 0.0, "init_qvel_rad_s": 0.0, "actuator": actuator}
    env = make_vec("sim2real/PendulumSwingup-v0", 2, seed=0, dr=None, config=cfg)
    env.reset()
    actions = np.ones((60, 2, 1))
    actions[30:, 1] = -0.5
    actions[:, 0] *= np.random.default_rng(3).uniform(-1, 1, (60, 1))
    for a in actions:
        env.step(a)
    assert env.act.open_loop and env.stepper._env_datas is None  # never the Python path
    runtime = config_from_dict(actuator, "test").build()
    state = ActuatorState(dt_s=0.002)
    model = env.stepper.models[1]
    d = mujoco.MjData(model)
    for a in actions[:, 1, 0]:
        for _ in range(5):
            d.qfrc_applied[0] = runtime.torque(a * 1.0, 0.0, 0.0, state)
            mujoco.mj_step(model, d)
    assert abs(d.qpos[0]) > 0.05  # it moved
    assert env.stepper.qpos[1, 0] == pytest.approx(d.qpos[0], abs=1e-12)
    assert env.stepper.qvel[1, 0] == pytest.approx(d.qvel[0], abs=1e-12)


@pytest.mark.parametrize(
    "actuator",
    [
        {"kind": "pd"},
        {"kind": "dc", "friction": "none"},
    ],
)
def test_a_state_feedback_actuator_steps_the_batch_by_rollout_as_the_python_path(
    actuator, monkeypatch
):
    # a servo whose torque depends on the joint state (not on the bias force or inertia) is
    # evaluated for the whole batch between one-substep rollout calls; the per-environment
    # path (mj_step1, the model, mj_step2) gives the same physics to rounding
    from sim2real.learn.envs import make_vec
    from sim2real.learn.envs.actuation import Actuation

    cfg = {"actuator": actuator}
    # targets held for 20 control steps each, so that the servos move the pendulums
    actions = np.repeat(np.random.default_rng(5).uniform(-1, 1, (4, 3, 1)), 20, axis=0)
    states = []
    for python_path in (False, True):
        with monkeypatch.context() as m:
            if python_path:
                m.setattr(Actuation, "needs_dynamics", property(lambda self: True))
            env = make_vec("sim2real/PendulumSwingup-v0", 3, seed=2, config=cfg)
            env.reset(seed=2)
            for a in actions:
                env.step(a)
            assert (env.stepper._env_datas is not None) == python_path
            states.append(env.stepper.state.copy())
    moved = np.abs(states[0][:, 1]).max()
    assert moved > 0.05  # the servos moved the pendulums
    assert np.allclose(states[0], states[1], rtol=0, atol=1e-10)


def test_a_friction_model_keeps_the_per_environment_path():
    from sim2real.learn.envs import make_vec

    env = make_vec(
        "sim2real/PendulumSwingup-v0",
        2,
        seed=0,
        config={"actuator": {"kind": "dc", "friction": "coulomb-viscous"}},
    )
    env.reset(seed=0)
    env.step(np.zeros((2, 1)))
    assert env.act.needs_dynamics and env.stepper._env_datas is not None
