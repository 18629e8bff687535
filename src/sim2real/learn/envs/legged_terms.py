"""Term functions of legged tasks (legged_gym's and mjlab's velocity-tracking terms) on the
:class:`~sim2real.learn.envs.terms.StepView` of a robot on a floating base: they read
``view.base`` (:class:`~sim2real.learn.envs.legged.BaseState`), ``view.legged``
(:class:`~sim2real.learn.envs.legged.Legged`) and the commands ``(vx, vy, yaw rate)`` in the
base frame. Penalties return negative values (every weight >= 0)."""

from __future__ import annotations

import numpy as np

from sim2real.learn.envs.terms import ObsFn, StepView


# -- observation terms -------------------------------------------------------------------------
def base_ang_vel(k: int) -> ObsFn:
    """Reads base: angular velocity about body axis k [rad/s] (the IMU's gyro)."""
    return lambda v: v.base.ang_vel_b[:, k]


def projected_gravity(k: int) -> ObsFn:
    """Reads base: component k of gravity's unit vector in the body frame [-]."""
    return lambda v: v.base.gravity_b[:, k]


def base_lin_vel(k: int) -> ObsFn:
    """Reads base: linear velocity along body axis k [m/s] (privileged: no sensor gives it)."""
    return lambda v: v.base.lin_vel_b[:, k]


def base_height(v: StepView) -> np.ndarray:
    """Reads base: the base's height [m] (privileged)."""
    return v.base.height


def foot_contact(f: int) -> ObsFn:
    """Reads legged: 1 while foot f touches the ground (privileged)."""
    return lambda v: v.legged.contact[:, f].astype(float)


def joint_pos_rel(k: int) -> ObsFn:
    """Reads q[:, k], legged: joint k's position minus its default [rad]."""
    return lambda v: v.q[:, k] - v.legged.default[k]


# -- reward terms ------------------------------------------------------------------------------
def track_lin_vel_xy(sigma: float):
    """Reads base, commands: exp(-|v_xy - command_xy|^2 / sigma), body frame."""
    return lambda v: np.exp(-np.sum((v.commands[:, :2] - v.base.lin_vel_b[:, :2]) ** 2, 1) / sigma)


def track_ang_vel_z(sigma: float):
    """Reads base, commands: exp(-(w_z - command_yaw_rate)^2 / sigma)."""
    return lambda v: np.exp(-((v.commands[:, 2] - v.base.ang_vel_b[:, 2]) ** 2) / sigma)


def lin_vel_z(v: StepView) -> np.ndarray:
    """Reads base: minus the squared vertical speed of the base (body frame)."""
    return -(v.base.lin_vel_b[:, 2] ** 2)


def ang_vel_xy(v: StepView) -> np.ndarray:
    """Reads base: minus the squared roll and pitch rates."""
    return -np.sum(v.base.ang_vel_b[:, :2] ** 2, axis=1)


def flat_orientation(v: StepView) -> np.ndarray:
    """Reads base: minus the squared horizontal components of gravity in the body frame
    (0 level)."""
    return -np.sum(v.base.gravity_b[:, :2] ** 2, axis=1)


def joint_torques(v: StepView) -> np.ndarray:
    """Reads legged: minus the summed squared motor torques of the last substep [N^2 m^2]."""
    return -np.sum(v.legged.torque**2, axis=1)


def joint_acc(v: StepView) -> np.ndarray:
    """Reads legged: minus the summed squared joint accelerations over the step."""
    return -np.sum(v.legged.qacc**2, axis=1)


def feet_air_time(target_s: float, min_command: float):
    """Reads legged, commands: sum over feet touching down this step of (air time - target),
    while the commanded planar speed exceeds ``min_command`` (legged_gym: long steps pay)."""

    def term(v: StepView) -> np.ndarray:
        lg = v.legged
        paid = np.sum((lg.touchdown_air - target_s) * lg.first_contact, axis=1)
        return paid * (np.linalg.norm(v.commands[:, :2], axis=1) > min_command)

    return term


# -- termination terms -------------------------------------------------------------------------
def base_too_low(v: StepView) -> np.ndarray:
    """Reads base, config: the base below ``min_base_height_m`` (fallen or lying)."""
    return v.base.height < v.env.cfg.min_base_height_m


def base_tilted(v: StepView) -> np.ndarray:
    """Reads base, config: the base tilted more than ``max_tilt_rad`` from upright."""
    return v.base.gravity_b[:, 2] > -np.cos(v.env.cfg.max_tilt_rad)
