"""The term functions a task is made of (mjlab's manager-based style, on numpy batches).

Every term is a small named function of a :class:`StepView`: what one control step left
behind for the whole batch, (N, ...) arrays. A term says what it reads in its docstring and
writes nothing; the manager (:mod:`sim2real.learn.envs.manager`) calls it and does the writing
(the observation frame, the weighted reward sum, the termination flags).

- observation terms ``(view) -> (N,)``: one scalar of the policy frame, from the *measured*
  joint state (noise and bias applied) or the previous action; the ``privileged`` group
  applies the same functions to the noiseless state;
- reward terms ``(view) -> (N,)``: the unweighted value, the config's weight multiplies it;
  a penalty returns a negative value so every weight is >= 0;
- termination terms ``(view) -> (N,) bool``: the episode ends by the task (no bootstrap).

A term that needs per-environment constants of the (randomized) model is a class with
``update_rows(env, rows)``, called whenever the rows' parameters are written (e.g.
:class:`Energy`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np


def wrap(angle: np.ndarray) -> np.ndarray:
    """Angle wrapped to [-pi, pi)."""
    return (angle + np.pi) % (2 * np.pi) - np.pi


@dataclass
class StepView:
    """What the terms read after a step. ``q``, ``qd``: (N, J) of the task's joints (true
    state, or the measured one for observation terms); ``err``: (N, G) distance to the goal
    of the goal joints (wrapped for hinges); ``action``: (N, A) the clipped action;
    ``in_band``: (N,) every goal joint within the success band; ``terminated``: (N,) the
    termination terms' verdict on this step (reward terms only); ``commands``: (N, C) the
    episode's commands (the task's order); ``base``, ``legged``: a legged task's own."""

    q: np.ndarray
    qd: np.ndarray
    err: np.ndarray
    action: np.ndarray
    in_band: np.ndarray
    env: object = None
    terminated: np.ndarray | None = None
    commands: np.ndarray | None = None
    base: object = None
    """A legged task's :class:`~sim2real.learn.envs.legged.BaseState` (measured for the
    observation terms, true otherwise); None for a fixed base."""
    legged: object = None
    """A legged task's :class:`~sim2real.learn.envs.legged.Legged` (feet, qacc, torques)."""

    @cached_property
    def wrapped(self) -> np.ndarray:
        """(N, J) ``q`` wrapped to [-pi, pi) (computed once per view)."""
        return wrap(self.q)


ObsFn = Callable[[StepView], np.ndarray]


# -- observation terms (joint k of the task's joints) ------------------------------------------
def joint_angle(k: int) -> ObsFn:
    """Reads q[:, k]: the angle wrapped to [-pi, pi) [rad]."""
    return lambda v: v.wrapped[:, k]


def joint_pos(k: int) -> ObsFn:
    """Reads q[:, k]: the position as is [rad or m]."""
    return lambda v: v.q[:, k]


def joint_cos(k: int, wrapped: bool = True) -> ObsFn:
    """Reads q[:, k]: cos of the angle (of the wrapped angle, as the robot computes it)."""
    if wrapped:
        return lambda v: np.cos(v.wrapped[:, k])
    return lambda v: np.cos(v.q[:, k])


def joint_sin(k: int, wrapped: bool = True) -> ObsFn:
    """Reads q[:, k]: sin of the angle (of the wrapped angle, as the robot computes it)."""
    if wrapped:
        return lambda v: np.sin(v.wrapped[:, k])
    return lambda v: np.sin(v.q[:, k])


def joint_vel(k: int) -> ObsFn:
    """Reads qd[:, k]: the velocity [rad/s or m/s]."""
    return lambda v: v.qd[:, k]


def prev_action(k: int = 0) -> ObsFn:
    """Reads action[:, k]: the previous action, in [-1, 1]."""
    return lambda v: v.action[:, k]


def command(k: int) -> ObsFn:
    """Reads commands[:, k]: the episode's command k (the robot's operator gives it)."""
    return lambda v: v.commands[:, k]


# -- reward terms ------------------------------------------------------------------------------
def velocity_near_goal(v: StepView) -> np.ndarray:
    """Reads qd, err: minus the summed squared joint speeds, weighted by how close every goal
    joint is to its goal (prod (1 + cos err) / 2): speed is penalised near the goal only."""
    near = np.prod((1.0 + np.cos(v.err)) / 2.0, axis=1)
    return -(np.sum(v.qd**2, axis=1) * near)


def action_sq(v: StepView) -> np.ndarray:
    """Reads action: minus the summed squared action."""
    return -np.sum(v.action**2, axis=1)


def action_rate(v: StepView) -> np.ndarray:
    """Reads action and the environment's previous action: minus the summed squared change of
    the action since the last step (legged_gym's smoothness term; a policy that chatters
    against its own delayed feedback pays for it)."""
    return -np.sum((v.action - v.env.prev_action) ** 2, axis=1)


def in_band(v: StepView) -> np.ndarray:
    """Reads in_band: 1 per step every goal joint is within the success band."""
    return v.in_band.astype(float)


def terminated(v: StepView) -> np.ndarray:
    """Reads terminated: minus 1 on the step an episode ends by the task (a penalty)."""
    return -v.terminated.astype(float)


def angle_score(v: StepView) -> np.ndarray:
    """Reads err: the mean over goal joints of 1 - (err / pi)^2 (1 at the goal, 0 opposite)."""
    return np.mean(1.0 - (v.err / np.pi) ** 2, axis=1)


def joint_pos_sq(k: int) -> Callable[[StepView], np.ndarray]:
    """Reads q[:, k]: minus its square (e.g. keep a cart near the centre of its track)."""
    return lambda v: -(v.q[:, k] ** 2)


def tracking_sq(k: int, c: int) -> Callable[[StepView], np.ndarray]:
    """Reads q[:, k], commands[:, c]: minus the squared distance of joint k to command c."""
    return lambda v: -((v.q[:, k] - v.commands[:, c]) ** 2)


class Energy:
    """Reads q, qd of the task's hinges and each environment's model: energy shaping of a
    hanging chain of one or two parallel hinges (a pendulum, a pendubot or an acrobot; a
    cart-pole's pole, in the cart's frame), ``max(0, 1 - |E / E_goal - 1|)`` (0 hanging at
    rest, 1 at the energy of the goal at rest). With ``phi_j`` the absolute angle of link j
    (the sum of the hinge angles up to j, 0 hanging)::

        E = qd^T (M0 + Mc cos q[1]) qd / 2 + sum_j A_j (1 - cos phi_j)

    exact for links whose centres of mass lie on their axes (the built-in models). ``M0``,
    ``Mc`` (the mass matrix with the elbow at 90 and 0 degrees) and ``A`` (the gravity torques
    with the links horizontal) are read from MuJoCo per environment whenever its parameters
    are drawn: the randomized masses, inertias and armatures count, the step costs a few numpy
    operations."""

    def __init__(self, num_envs: int) -> None:
        self.num_envs = num_envs
        self.cols = None  # the hinges' columns of q
        self.gravity, self.m0, self.mc = None, None, None  # (N, J), (N, J, J), (N, J, J)
        self.goal_energy = np.ones(num_envs)

    def update_rows(self, env, rows: np.ndarray) -> None:
        import mujoco

        from sim2real.core.errors import InputError

        task, models = env.task, env.stepper.models
        hinges = task.hinges if task.hinges is not None else task.joints
        cols = np.array([task.joints.index(j) for j in hinges], dtype=int)
        qadr, dof = env.qadr[cols], env.dof[cols]
        kinds = models[0].jnt_type[models[0].dof_jntid[dof]]
        if not 1 <= len(cols) <= 2 or np.any(kinds != mujoco.mjtJoint.mjJNT_HINGE):
            raise InputError(
                "config", "reward.energy", "energy shaping takes a chain of 1 or 2 hinges"
            )
        if self.cols is None:
            nj = len(cols)
            self.cols = cols
            self.gravity = np.ones((self.num_envs, nj))
            self.m0, self.mc = np.ones((self.num_envs, nj, nj)), np.zeros((self.num_envs, nj, nj))
        d = mujoco.MjData(models[0])
        goal = np.cumsum([task.goal.get(j, 0.0) for j in hinges])
        for i in rows:
            self.m0[i], bias = _mass_and_gravity(models[i], d, qadr, dof, elbow=np.pi / 2)
            if len(cols) == 1:
                self.gravity[i] = bias
            else:  # links horizontal and straight: the gravity torques are [A1 + A2, A2]
                m_straight, bias = _mass_and_gravity(models[i], d, qadr, dof, elbow=0.0)
                self.mc[i] = m_straight - self.m0[i]
                self.gravity[i] = [bias[0] - bias[1], bias[1]]
            self.goal_energy[i] = float(np.sum(self.gravity[i] * (1.0 - np.cos(goal))))

    def energy(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """(N,) the hinges' energy above hanging at rest [J] of the task's joint states (N, J)."""
        q, qd = q[:, self.cols], qd[:, self.cols]
        if q.shape[1] == 1:
            return 0.5 * self.m0[:, 0, 0] * qd[:, 0] ** 2 + self.gravity[:, 0] * (
                1.0 - np.cos(q[:, 0])
            )
        m = self.m0 + self.mc * np.cos(q[:, 1])[:, None, None]
        kinetic = 0.5 * np.einsum("ni,nij,nj->n", qd, m, qd)
        return kinetic + np.sum(self.gravity * (1.0 - np.cos(np.cumsum(q, axis=1))), axis=1)

    def __call__(self, v: StepView) -> np.ndarray:
        return np.maximum(0.0, 1.0 - np.abs(self.energy(v.q, v.qd) / self.goal_energy - 1.0))


def _mass_and_gravity(model, d, qadr, dof, elbow: float) -> tuple[np.ndarray, np.ndarray]:
    """The hinges' mass matrix and |gravity torques| at rest, the first link horizontal, the
    second (if any) at ``elbow``, every other joint at 0."""
    import mujoco

    d.qpos[:] = 0.0
    d.qvel[:] = 0.0
    d.qpos[qadr[0]] = np.pi / 2
    if len(qadr) == 2:
        d.qpos[qadr[1]] = elbow
    mujoco.mj_forward(model, d)
    full = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, d, full)
    return full[np.ix_(dof, dof)], np.abs(d.qfrc_bias[dof])


# -- termination terms -------------------------------------------------------------------------
def joint_beyond(k: int, limit: float) -> Callable[[StepView], np.ndarray]:
    """Reads q[:, k]: true where |q| >= limit (e.g. a cart at the end of its track)."""
    return lambda v: np.abs(v.q[:, k]) >= limit


def speed_above(limit: float) -> Callable[[StepView], np.ndarray]:
    """Reads qd: true where any joint turns at ``limit`` or faster (a bench's safety stop)."""
    return lambda v: np.any(np.abs(v.qd) >= limit, axis=1)
