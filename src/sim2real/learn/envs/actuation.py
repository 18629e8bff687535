"""The action's way into the physics (the action manager of
:class:`~sim2real.learn.envs.manager.ManagerVecEnv`): the command ``action * limit`` of each
actuated joint through a delay line at substep resolution, then either straight to the MuJoCo
actuators (``ctrl``: the ``mujoco.rollout`` fast path) or through an actuator model (a runtime
of :mod:`sim2real.actuators.models`, one call per substep for the whole batch) into
``qfrc_applied``; the state-dependent smooth friction of the model's extras joins either.

An actuator model whose torque depends on the joint state only (a PD servo, a DC servo or a
torque motor without friction, a network) is evaluated for the whole batch from the batch's
joint states at every substep, and the batch advances one substep per ``mujoco.rollout`` call
(``nsub`` calls a control step, no Python loop over environments). One whose torque depends
on its commands only (a torque motor without friction) has all its substep torques computed
first and keeps the single rollout call. A friction model (BAM's stiction) needs MuJoCo's bias
force and the joint's inertia at every substep, which ``mujoco.rollout`` does not return: it
is evaluated between MuJoCo's two half-steps, and the physics then steps in Python,
environment by environment."""

from __future__ import annotations

from typing import Any

import numpy as np

from sim2real.sim.vecstep import BatchExtras, VecStepper


class Actuation:
    """Delay line and actuator model of ``num_envs`` environments for the joints
    ``act_qadr`` / ``act_dof`` driven by the actuators ``act_index``."""

    def __init__(
        self,
        stepper: VecStepper,
        act: tuple[np.ndarray, np.ndarray, np.ndarray],
        nsub: int,
        timestep: float,
        max_delay_s: float,
        actuator_cfg: Any | None,
        actuator_values: dict[str, np.ndarray],
    ) -> None:
        self.stepper, self.nsub, self.timestep = stepper, nsub, timestep
        self.act_qadr, self.act_dof, self.act_index = act
        self.num_envs = stepper.num
        self.base_armature = stepper.base.dof_armature[self.act_dof].copy()
        self.runtime = None if actuator_cfg is None else actuator_cfg.build(actuator_values)
        self.hist_len = nsub + int(np.ceil(max_delay_s / timestep)) + 1
        self._sub_idx = self.hist_len - nsub + np.arange(nsub)[None, :]
        self._rows_col = np.arange(self.num_envs)[:, None]
        self.friction = False  # a state-dependent friction term in the extras (set by the env)
        self.alloc()

    def alloc(self) -> None:
        self.torque_hist = np.zeros((self.num_envs, self.hist_len, len(self.act_index)))
        self.delay_sub = np.zeros(self.num_envs, dtype=int)

    def reset(self) -> None:
        self.alloc()
        if self.runtime is not None:
            self.runtime.reset()

    def reset_rows(self, rows: np.ndarray) -> None:
        self.torque_hist[rows] = 0.0
        if self.runtime is not None:
            self.runtime.reset_rows(rows)

    def armature(self, actuator_values: dict[str, np.ndarray]) -> np.ndarray:
        """(N,) armature the actuator model adds to its joint (its parameters updated)."""
        if self.runtime is None:
            return np.zeros(self.num_envs)
        self.runtime.p.update(actuator_values)
        return np.broadcast_to(self.runtime.armature_kgm2, (self.num_envs,))

    def set_delays(self, delay_s: np.ndarray) -> None:
        """(N,) command delays [s], rounded to substeps."""
        top = self.hist_len - self.nsub
        self.delay_sub = np.clip(np.round(delay_s / self.timestep).astype(int), 0, top)

    def delayed(self, command: np.ndarray) -> np.ndarray:
        """Push ``command`` (N, A) into the delay line: (N, nsub, A) what each substep applies."""
        nsub, hist = self.nsub, self.torque_hist
        hist[:, :-nsub] = hist[:, nsub:]  # newest last
        hist[:, -nsub:] = command[:, None, :]
        return hist[self._rows_col, self._sub_idx - self.delay_sub[:, None]]

    def step(self, command: np.ndarray, qfrc: np.ndarray, extras: BatchExtras) -> None:
        """Advance the physics by one control step under ``command`` (N, A) and the external
        generalised forces ``qfrc`` (N, nsub, nv)."""
        nsub = self.nsub
        delayed = self.delayed(command)
        ctrl = np.zeros((self.num_envs, nsub, self.stepper.nu))
        friction = self.friction
        if self.runtime is not None and self.open_loop and not friction:
            # the model's torque depends on the commands only: all substeps' torques first,
            # then the rollout fast path with them as applied forces
            qfrc[:, :, self.act_dof[0]] += self._open_loop_torques(delayed[:, :, 0])
            self.stepper.step(ctrl, qfrc, None, states=False)
            return
        if self.runtime is not None:
            torque = self._actuator_feedback(delayed[:, :, 0], extras, friction)
        else:
            ctrl[:, :, self.act_index] = delayed
            if not friction:
                self.stepper.step(ctrl, qfrc, None, states=False)
                return
            torque = lambda k, qpos, qvel, tau_ext=None, inertia=None: extras.friction_torque(qvel)  # noqa: E731
        if self.needs_dynamics:
            self.stepper.step(ctrl, qfrc, torque, states=False)  # mj_step1 / mj_step2 each
        else:
            self._step_by_substeps(ctrl, qfrc, torque)

    @property
    def open_loop(self) -> bool:
        """The actuator model's torque depends on its commands only (a torque motor without
        friction: lag, gain, saturation, delay), never on the joint state."""
        from sim2real.actuators.models import TorqueMotor

        return isinstance(self.runtime, TorqueMotor) and self.runtime.friction == "none"

    @property
    def needs_dynamics(self) -> bool:
        """The model's friction needs the joint's other torques and inertia at every substep
        (BAM's stiction: what would stop the joint), which only the per-environment path reads
        from MuJoCo."""
        return getattr(self.runtime, "friction", "none") != "none"

    def _step_by_substeps(self, ctrl: np.ndarray, qfrc: np.ndarray, torque) -> None:
        """One rollout call per substep, ``torque(k, qpos, qvel)`` (N, nv) computed for the
        whole batch from the joint states in between (``ctrl`` (N, nsub, nu), ``qfrc`` (N,
        nsub, nv))."""
        st = self.stepper
        for k in range(self.nsub):
            # summed in the per-environment path's order: the same physics to rounding
            applied = qfrc[:, k] + torque(k, st.qpos, st.qvel)
            st.step(ctrl[:, k : k + 1], applied[:, None], None, states=False)

    def _open_loop_torques(self, command: np.ndarray) -> np.ndarray:
        """(N, nsub) torques of an open-loop actuator model for the substeps' commands."""
        from sim2real.actuators.models import ActuatorState

        state, zero = ActuatorState(dt_s=self.timestep), np.zeros(self.num_envs)
        out = np.empty_like(command)
        for k in range(command.shape[1]):
            out[:, k] = self.runtime.torque(command[:, k], zero, zero, state)
        return out

    def _actuator_feedback(self, command: np.ndarray, extras: BatchExtras, friction: bool):
        from sim2real.actuators.models import ActuatorState

        runtime, dof, qadr = self.runtime, int(self.act_dof[0]), int(self.act_qadr[0])
        state = ActuatorState(dt_s=self.timestep)

        def feedback(k, qpos, qvel, tau_ext=None, inertia=None):
            if tau_ext is not None:  # the per-environment path (friction models need them)
                state.tau_ext_Nm = tau_ext[:, dof]
                state.inertia_kgm2 = inertia[:, dof]
            tau = np.zeros_like(qvel)
            tau[:, dof] = runtime.torque(command[:, k], qpos[:, qadr], qvel[:, dof], state)
            if friction:
                tau += extras.friction_torque(qvel)
            return tau

        return feedback
