"""The actuator inside the MuJoCo loop: attach replaces the joint's passive terms and armature,
and the joint then moves by the actuator's torque alone."""

from __future__ import annotations

import mujoco
import numpy as np
from sim.one_body import one_body_xml

from sim2real.actuators.models import PDServo
from sim2real.actuators.mujoco_loop import MujocoActuatorLoop
from sim2real.actuators.params import SPECS


def _servo(armature: float) -> PDServo:
    p = {name: spec[0] for name, spec in SPECS.items()}
    return PDServo({**p, "armature_kgm2": armature, "delay_s": 0.0})


def test_attach_sets_the_armature_even_on_a_simple_body():
    model = mujoco.MjModel.from_xml_string(one_body_xml(armature=0.01, damping=0.1))
    assert model.dof_simplenum.any()  # a rotor on its own axis: MuJoCo's constant mass matrix
    data = mujoco.MjData(model)
    loop = MujocoActuatorLoop(model, data, "j", _servo(0.05), kp_fw=100.0, vin_V=7.4)
    loop.attach()
    assert model.dof_damping[0] == 0.0 and model.dof_frictionloss[0] == 0.0
    loop.step(0.0)
    # the inertia the actuator is told about, and the one MuJoCo integrates: izz + armature
    assert np.isclose(loop.state.inertia_kgm2, 0.02 + 0.05)
    tau = 0.1
    data.qvel[:] = 0.0
    data.qfrc_applied[:] = tau
    mujoco.mj_forward(model, data)
    assert np.isclose(data.qacc[0], tau / (0.02 + 0.05))


def test_the_joint_follows_the_servo_torque():
    model = mujoco.MjModel.from_xml_string(one_body_xml(armature=0.01))
    data = mujoco.MjData(model)
    loop = MujocoActuatorLoop(model, data, "j", _servo(0.01), kp_fw=100.0, vin_V=7.4)
    loop.attach()
    for _ in range(2000):
        loop.step(0.5)
    assert abs(data.qpos[0] - 0.5) < 0.02  # the PD servo settles at its goal
