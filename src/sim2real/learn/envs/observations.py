"""The observation manager of :class:`~sim2real.learn.envs.manager.ManagerVecEnv`: the policy
frame's terms evaluated on the *measured* joint state (observation noise and bias of each
environment), stacked over ``history`` frames oldest first; the ``privileged`` group: the task's
privileged terms on the noiseless state, ``push_active``, ``goal_start`` (with
``goal_start_fall_rad`` only: the episode started at the goal, so it ends if it falls), the
commands and every parameter relative to its nominal value. A legged task's terms also read the
base (its angular velocity and gravity with the noise of ``ang_vel_noise_rad_s`` /
``gravity_noise``). Each value fed is ``raw * scale`` of a named term (the export contract of
``policy.json``)."""

from __future__ import annotations

import numpy as np

from sim2real.learn.envs.task import Task, TaskConfig
from sim2real.learn.envs.terms import StepView
from sim2real.learn.vec import ObsGroup, ObsTerm


class Observations:
    """The groups of ``task`` under ``cfg`` for an environment whose parameters are ``names``."""

    def __init__(self, task: Task, cfg: TaskConfig, names: list[str]) -> None:
        policy = cfg.policy_terms()
        scale = {
            n: cfg.scale(s.scale_key) if s.scale_key else 1.0 for n, s in task.observations.items()
        }
        self.funcs = [task.observations[n].func for n in policy]
        self.scales = np.array([scale[n] for n in policy])
        self.priv = [s.func for s in task.privileged.values()]
        self.priv_scales = np.array(
            [cfg.scale(s.scale_key) if s.scale_key else 1.0 for s in task.privileged.values()]
        )
        # the critic must know which episodes end when they fall (goal_start_fall_rad)
        self.goal_start = cfg.goal_start_fall_rad is not None
        self.groups = {
            "policy": ObsGroup(tuple(ObsTerm(n, float(scale[n])) for n in policy), cfg.history),
            "privileged": ObsGroup(
                (
                    *(
                        ObsTerm(n, float(s))
                        for n, s in zip(task.privileged, self.priv_scales, strict=True)
                    ),
                    ObsTerm("push_active"),
                    *((ObsTerm("goal_start"),) if self.goal_start else ()),
                    *(ObsTerm(f"command.{c}") for c in cfg.command_ranges()),
                    *(ObsTerm(f"param.{n}") for n in names),
                ),
                1,
                deployable=False,
            ),
        }

    def measure(self, env, rows: np.ndarray) -> np.ndarray:
        """(len(rows), terms) raw policy frame of ``env``'s rows from the measured state."""
        rows_ = rows[:, None]
        q = env.stepper.qpos[rows_, env.qadr]
        qd = env.stepper.qvel[rows_, env.dof]
        be, nj = env.batch_extras, q.shape[1]
        noise = env.streams.noise(rows)
        bias_q, bias_qd = env.values[rows_, env.bias_q], env.values[rows_, env.bias_qvel]
        qm = q + bias_q + noise[:, :nj] * be.pos_noise_rad[rows_, env.dof]
        qdm = qd + bias_qd + noise[:, nj : 2 * nj] * be.vel_noise_rad_s[rows_, env.dof]
        # observation terms read the measured state, the action and the commands only
        view = StepView(qm, qdm, None, env.prev_action[rows], None, env, None, env.commands[rows])
        if env.legged is not None:  # the base as its IMU measures it
            cfg, k = env.cfg, 2 * nj
            base = env.legged.base(env.stepper.qpos[rows], env.stepper.qvel[rows])
            base.ang_vel_b = base.ang_vel_b + noise[:, k : k + 3] * cfg.ang_vel_noise_rad_s
            base.gravity_b = base.gravity_b + noise[:, k + 3 : k + 6] * cfg.gravity_noise
            view.base, view.legged = base, env.legged
        return np.stack([f(view) for f in self.funcs], axis=1)

    def observe(self, env) -> dict[str, np.ndarray]:
        """Both groups of every environment of ``env``, float32."""
        policy = (env.history * self.scales).reshape(env.num_envs, -1)
        view = StepView(
            env.stepper.qpos[:, env.qadr], env.stepper.qvel[:, env.dof], None, None, None, env
        )
        if env.legged is not None:
            view.base = env.legged.base(env.stepper.qpos, env.stepper.qvel)
            view.legged = env.legged
        state = np.stack([f(view) for f in self.priv], axis=1) * self.priv_scales
        params = (env.values - env.nominal) / env.param_ref
        flags = [(env.push_left > 0)[:, None]]
        if self.goal_start:
            flags.append(env.started_at_goal[:, None])
        privileged = np.concatenate([state, *flags, env.commands, params], axis=1)
        return {"policy": policy.astype(np.float32), "privileged": privileged.astype(np.float32)}
