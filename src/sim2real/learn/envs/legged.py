"""What the generic environment adds for a robot on a floating base (a legged task): the base's
state in its own frame, the feet, joint position targets through batched motors, commands
redrawn within an episode, and the config fields of such a task.

- :class:`BaseState`: from the free joint's ``qpos`` (position, unit quaternion w x y z) and
  ``qvel`` (linear velocity in the world frame, angular velocity in the body frame, MuJoCo's
  convention): ``lin_vel_b`` (m/s) and ``ang_vel_b`` (rad/s) in the body frame,
  ``gravity_b`` (the unit vector of gravity in the body frame: (0, 0, -1) level),
  ``height`` (m above the world origin).
- :class:`Legged`: per-environment state the terms read after a step: foot contacts (touch
  sensor above ``contact_force_N``), foot heights, feet air time at touch-down (legged_gym's
  bookkeeping), joint accelerations from successive velocities, the last motor torques, the
  previous action; the direction of each push (horizontal, uniform); and the action map
  ``target = default + action_scale * action``.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field, field_validator

from sim2real.actuators.joint_motors import JointMotorsConfig, first_match
from sim2real.core.errors import InputError
from sim2real.core.pose import quats_to_matrices
from sim2real.learn.envs.task import TaskConfig


class LeggedConfig(TaskConfig):
    """The fields of a task on a floating base (over :class:`TaskConfig`'s)."""

    motors: JointMotorsConfig = Field(..., description="the joint motors (PD, envelope...)")
    action_scale_rad: dict[str, float] = Field(
        ..., description="by joint pattern: target = default + this x action [rad]"
    )
    actuator_networks: dict[str, str] = Field(
        default_factory=dict,
        description="learned actuator networks (YAML of actuator fit --model net) by joint "
        "pattern, replacing the motors' physical law on those joints (paths made absolute)",
    )
    command_resample_s: float = Field(
        0.0, ge=0, description="redraw the commands this often within an episode [s] (0: never)"
    )
    ang_vel_noise_rad_s: float = Field(
        0.0, ge=0, description="std of the measured base angular velocity's noise [rad/s]"
    )
    gravity_noise: float = Field(
        0.0, ge=0, description="std of the measured projected gravity's noise [-]"
    )
    contact_force_N: float = Field(1.0, gt=0, description="a foot touches above this force [N]")
    min_base_height_m: float = Field(
        0.12, ge=0, description="the episode ends when the base is lower than this [m]"
    )
    max_tilt_rad: float = Field(
        1.0, gt=0, le=np.pi, description="the episode ends when the base tilts more [rad]"
    )

    @field_validator("actuator_networks")
    @classmethod
    def _absolute(cls, value: dict[str, str]) -> dict[str, str]:
        return {k: str(Path(v).expanduser().resolve()) for k, v in value.items()}


def quat_to_mat(quat: np.ndarray) -> np.ndarray:
    """(N, 4) quaternions w x y z (normalized here) -> (N, 3, 3) rotation matrices body->world."""
    return quats_to_matrices(quat / np.linalg.norm(quat, axis=1, keepdims=True))


class BaseState:
    """The floating base of a batch: ``qpos`` (N, nq), ``qvel`` (N, nv), the free joint at
    ``qadr`` / ``dof``."""

    def __init__(self, qpos: np.ndarray, qvel: np.ndarray, qadr: int, dof: int) -> None:
        self.pos = qpos[:, qadr : qadr + 3]
        self.quat = qpos[:, qadr + 3 : qadr + 7]
        self.lin_vel_w = qvel[:, dof : dof + 3]
        self.ang_vel_b = qvel[:, dof + 3 : dof + 6]

    @cached_property
    def rot(self) -> np.ndarray:
        return quat_to_mat(self.quat)

    @cached_property
    def lin_vel_b(self) -> np.ndarray:
        return np.einsum("nji,nj->ni", self.rot, self.lin_vel_w)

    @cached_property
    def gravity_b(self) -> np.ndarray:
        return -self.rot[:, 2, :]  # R^T (0, 0, -1)

    @property
    def height(self) -> np.ndarray:
        return self.pos[:, 2]


class Legged:
    """Legged state of ``env`` (a :class:`~sim2real.learn.envs.manager.ManagerVecEnv` whose
    task has a floating base and feet): see the module docstring."""

    STATE = (
        "air_time", "last_contact", "first_contact", "touchdown_air", "prev_qd", "qacc",
        "push_dir",
    )  # fmt: skip

    def __init__(self, env: Any) -> None:
        task, m, cfg = env.task, env.sim.model, env.cfg
        n, nf, nj = env.num_envs, len(task.feet), len(task.actuated)
        free = m.joint(task.floating_base)
        self.base_qadr, self.base_dof = int(free.qposadr[0]), int(free.dofadr[0])
        key = m.key(task.init_key).qpos if task.init_key else m.qpos0
        self.init_qpos = np.array(key, dtype=float)
        self.default = self.init_qpos[env.act.act_qadr]
        self.scale = np.array([_by_pattern(cfg.action_scale_rad, j) for j in task.actuated])
        self.touch_adr = np.array([m.sensor(f"{f}_touch").adr[0] for f in task.feet])
        self.pos_adr = np.array([m.sensor(f"{f}_pos").adr[0] for f in task.feet])
        self.dt, self.contact_N = env.control_dt, cfg.contact_force_N
        every = cfg.command_resample_s
        self.resample_steps = round(every / env.control_dt) if every > 0 else 0
        self.air_time = np.zeros((n, nf))
        self.last_contact = np.zeros((n, nf), dtype=bool)
        self.first_contact = np.zeros((n, nf), dtype=bool)
        self.touchdown_air = np.zeros((n, nf))
        self.prev_qd = np.zeros((n, nj))
        self.qacc = np.zeros((n, nj))
        self.push_dir = np.tile([1.0, 0.0], (n, 1))  # (N, 2) world x, y of the current push
        self._env = env

    def targets(self, action: np.ndarray) -> np.ndarray:
        """(N, J) joint position targets [rad] of actions (N, J) in [-1, 1]."""
        return self.default + self.scale * action

    def base(self, qpos: np.ndarray, qvel: np.ndarray) -> BaseState:
        return BaseState(qpos, qvel, self.base_qadr, self.base_dof)

    @property
    def contact(self) -> np.ndarray:
        """(N, F) bool: each foot's touch sensor reads more than ``contact_force_N``."""
        return self._env.stepper.sensordata[:, self.touch_adr] > self.contact_N

    @property
    def foot_height(self) -> np.ndarray:
        """(N, F) height of each foot's site [m]."""
        return self._env.stepper.sensordata[:, self.pos_adr + 2]

    @property
    def torque(self) -> np.ndarray:
        """(N, J) the motors' torques of the last substep [N m]."""
        return self._env.act.last_torque

    def new_push_direction(self, rows: np.ndarray, streams: Any) -> None:
        """A push starts in ``rows``: its horizontal direction, uniform, from each row's own
        stream (the push's magnitude, ``push_Nm``, is the randomization's draw)."""
        angle = streams.uniform(rows, -np.pi, np.pi)[:, 0]
        self.push_dir[rows] = np.stack([np.cos(angle), np.sin(angle)], axis=1)

    def push(self, qfrc: np.ndarray, force: np.ndarray, dof: int) -> None:
        """Add the pushes ``force`` (N, nsub) [N] along each row's direction to the base's
        world x and y dofs (``dof``, ``dof + 1``) of ``qfrc`` (N, nsub, nv)."""
        qfrc[:, :, dof : dof + 2] += force[:, :, None] * self.push_dir[:, None, :]

    def resample_commands(self, env: Any) -> None:
        """Redraw the commands of the environments whose episode step is a multiple of
        ``command_resample_s`` (each from its own stream)."""
        if self.resample_steps and env._commands:
            due = np.flatnonzero(env.steps % self.resample_steps == 0)
            if due.size:
                env.commands[due] = env.events.commands(due, list(env._commands.values()))

    def reset_rows(self, rows: np.ndarray, qd: np.ndarray) -> None:
        for name in ("air_time", "last_contact", "first_contact", "touchdown_air", "qacc"):
            getattr(self, name)[rows] = 0
        self.prev_qd[rows] = qd

    def update(self, qd: np.ndarray) -> None:
        """After a physics step with joint speeds ``qd`` (N, J): contacts, air time, qacc."""
        contact = self.contact
        filt = contact | self.last_contact  # legged_gym: one step of contact memory
        self.last_contact = contact
        self.first_contact = (self.air_time > 0) & filt  # was in the air, touches now
        self.air_time += self.dt
        self.touchdown_air = np.where(self.first_contact, self.air_time, 0.0)
        self.air_time = np.where(filt, 0.0, self.air_time)
        self.qacc = (qd - self.prev_qd) / self.dt
        self.prev_qd = qd.copy()

    def get_state(self) -> dict[str, np.ndarray]:
        """Its arrays, the sensor readings and the motors' last torques (exact continuation)."""
        out = {name: getattr(self, name).copy() for name in self.STATE}
        out["sensordata"] = self._env.stepper.sensordata.copy()
        out["last_torque"] = self._env.act.last_torque.copy()
        return out

    def set_state(self, state: dict[str, np.ndarray]) -> None:
        for name in self.STATE:
            setattr(self, name, np.array(state[name]))
        self._env.stepper.sensordata[:] = state["sensordata"]
        self._env.act.last_torque = np.array(state["last_torque"])


def deploy_fields(env: Any) -> dict[str, Any]:
    """``policy.json``'s fields of a legged task (the export contract): the joints in the order
    of the actions and joint observations, their default positions, ``target = default +
    action_scale * action``, the PD gains the robot's drivers run, and the motor model."""
    lg, motors = env.legged, env.act.motors
    return {
        "joint_names": list(env.task.actuated),
        "default_joint_pos": [float(x) for x in lg.default],
        "action_scale": [float(x) for x in lg.scale],
        "kp": [float(x) for x in motors.kp],
        "kd": [float(x) for x in motors.kd],
        "actuator": {
            "kind": "joint_motors+networks" if env.cfg.actuator_networks else "joint_motors",
            **env.cfg.motors.model_dump(),
            "networks": dict(env.cfg.actuator_networks),
        },
    }


def _by_pattern(table: dict[str, float], name: str) -> float:
    value = first_match(table, name)
    if value is None:
        raise InputError("config", "action_scale_rad", f"no pattern matches joint {name!r}")
    return float(value)
