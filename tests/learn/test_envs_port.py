"""The swing-up environments on the task machinery step as the code before the port did: the
same observations, rewards and physics states on the same parameters, start states and
actions (tests/learn/swingup_reference.py says how the reference was recorded)."""

from __future__ import annotations

import numpy as np
import pytest
from learn.swingup_reference import DATA, SCENARIOS, run


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_steps_as_before_the_port(name):
    ref = np.load(DATA)
    now = run(name)
    for key in ("policy", "privileged", "state"):
        k = f"{name}.{key}"
        assert now[k].shape == ref[k].shape, k
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
