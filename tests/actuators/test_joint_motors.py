"""The batched joint motors of a legged robot (sim2real.actuators.joint_motors): PD below the
envelope, the torque-speed envelope by hand, strength, drive friction, reflected inertia."""

from __future__ import annotations

import numpy as np
import pytest

from sim2real.actuators.joint_motors import JointMotorsConfig, MotorType
from sim2real.core.errors import InputError

HIP = MotorType(tau_max_Nm=23.7, v_max_rad_s=30.1, gear_ratio=6, kp_Nm_rad=20.0, kd_Nms_rad=0.5)
KNEE = MotorType(tau_max_Nm=35.55, v_max_rad_s=20.06, gear_ratio=9, kp_Nm_rad=30.0, kd_Nms_rad=1.0)
CFG = JointMotorsConfig(types={"*_calf": KNEE, "*": HIP}, rotor_inertia_kgm2=0.000111842)


def test_pd_below_the_envelope_is_exact():
    m = CFG.build(["FR_hip", "FR_calf"])
    tau = m.torque(np.array([[0.1, -1.0]]), np.array([[0.05, -1.1]]), np.array([[2.0, -3.0]]))
    # hip 20 x 0.05 - 0.5 x 2 = 0; knee 30 x 0.1 - 1 x (-3) = 6
    assert tau == pytest.approx(np.array([[0.0, 6.0]]), abs=1e-12)


def test_torque_speed_envelope_by_hand():
    m = CFG.build(["hip"] * 5)
    qd = np.array([[15.05, 15.05, -15.05, -15.05, 40.0]])  # half of v_max, and beyond it
    want = np.array([[1e3, -1e3, 1e3, -1e3, 1e3]])  # far beyond the peak either way
    tau = m.envelope(want, qd)
    # turning forward at v_max / 2: at most 23.7 (1 - 0.5) = 11.85 forward, the full 23.7 back
    assert tau == pytest.approx(np.array([[11.85, -23.7, 23.7, -11.85, 0.0]]), abs=1e-9)


def test_strength_friction_and_reflected_inertia():
    m = CFG.build(["FR_hip", "FR_calf"])
    m.update({"strength": np.array([0.5, 1.0]), "coulomb_Nm": np.array([0.0, 0.3]),
              "viscous_Nms_rad": np.array([0.0, 0.1]), "rotor_inertia_kgm2": np.array([1e-4, 2e-4])})  # fmt: skip
    q = np.zeros((2, 2))
    qd = np.full((2, 2), 10.0)
    tau = m.torque(np.full((2, 2), 0.5), q, qd)
    # row 0: half of the PD (hip 20 x 0.5 - 0.5 x 10 = 5; knee 15 - 10 = 5) -> 2.5 each
    assert tau[0] == pytest.approx([2.5, 2.5], abs=1e-12)
    # row 1: full PD less friction 0.3 (2/pi) atan(10 / 0.05) + 0.1 x 10 (against the motion)
    friction = 0.3 * 2 / np.pi * np.arctan(10 / 0.05) + 1.0
    assert tau[1] == pytest.approx([5.0 - friction, 5.0 - friction], abs=1e-9)
    assert m.armature() == pytest.approx(np.array([[36e-4, 81e-4], [72e-4, 162e-4]]))


def test_a_joint_without_a_motor_type_is_refused():
    cfg = JointMotorsConfig(types={"*_calf": KNEE}, rotor_inertia_kgm2=1e-4)
    with pytest.raises(InputError, match="hip"):
        cfg.build(["FR_calf", "FR_hip"])
