"""The Unitree Go1's joint motors (mjlab's ``go1_constants``, from Unitree's go1.urdf): hip
and thigh 23.7 N m peak, 30.1 rad/s, gear 6; knee 35.55 N m, 20.06 rad/s, gear 9; rotor
0.000111842 kg m^2 (reflected as armature: x gear^2); the drivers' PD gains mjlab's: a 10 Hz
natural frequency at damping ratio 2 over the reflected inertia, ``kp = I w^2``,
``kd = 2 zeta I w``; the action scale ``tau_max / kp``: an action of +-1 (the environment clips
there) asks the motor's peak torque at standstill. mjlab scales by ``0.25 tau_max / kp`` and
leaves actions unclipped (rsl_rl's walking policies reach +-2-4); clipped at +-1 that scale left
the knee +-0.25 rad around its pose, under the sag of standing, and no trial walked (RESULTS.md,
"a first training trial")."""

from __future__ import annotations

import math

from sim2real.actuators.joint_motors import JointMotorsConfig, MotorType

ROTOR_KGM2 = 0.000111842
OMEGA_RAD_S, ZETA = 2 * math.pi * 10.0, 2.0


def motor(tau_max_Nm: float, v_max_rad_s: float, gear: float) -> MotorType:
    """A Go1 motor type with mjlab's gains."""
    inertia = ROTOR_KGM2 * gear**2
    return MotorType(
        tau_max_Nm=tau_max_Nm,
        v_max_rad_s=v_max_rad_s,
        gear_ratio=gear,
        kp_Nm_rad=inertia * OMEGA_RAD_S**2,
        kd_Nms_rad=2 * ZETA * inertia * OMEGA_RAD_S,
    )


HIP = motor(23.7, 30.1, 6.0)
"""Hip and thigh joints."""
KNEE = motor(35.55, 20.06, 9.0)
"""Knee (calf) joints."""
MOTORS = JointMotorsConfig(types={"*_calf_joint": KNEE, "*": HIP}, rotor_inertia_kgm2=ROTOR_KGM2)
ACTION_SCALE_RAD = {
    "*_calf_joint": KNEE.tau_max_Nm / KNEE.kp_Nm_rad,
    "*": HIP.tau_max_Nm / HIP.kp_Nm_rad,
}
