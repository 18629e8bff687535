"""Vectorised stepping of N per-environment MuJoCo model copies: the physics under a batched
learning environment.

Each environment owns a model copy (its own masses, friction, gains...) and a state row of the
``(N, nstate)`` full-physics state array. One :meth:`VecStepper.step` advances every
environment by ``nsub`` simulator substeps under per-substep controls ``ctrl`` (N, nsub, nu) and
generalised forces ``qfrc`` (N, nsub, nv).

- Fast path (open-loop within the control step): one ``mujoco.rollout`` call over the N model
  copies, a persistent thread pool when ``nthread > 0``.
- Python path, when a torque in the loop needs MuJoCo's bias force or mass matrix (a BAM
  friction model of an actuator): per substep, ``mj_step1`` on every copy, the extra torque
  computed for the whole batch at once from the gathered joint states, then ``mj_step2``.
  (A torque of the joint state alone steps by one-substep rollout calls instead:
  :class:`~sim2real.learn.envs.actuation.Actuation`.)

The constraint solver's warm start is zeroed at every call in both paths, so a step depends
only on the state rows and the controls (exact continuation after restoring a state).

With ``sensors=True`` the model's sensor readings of the last substep are kept in
``sensordata`` (N, nsensordata) (what a legged task reads of its feet: positions, touch).
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import mujoco
import numpy as np
from mujoco import rollout

STATE_SPEC = mujoco.mjtState.mjSTATE_FULLPHYSICS
CTRL_SPEC = mujoco.mjtState.mjSTATE_CTRL | mujoco.mjtState.mjSTATE_QFRC_APPLIED

FeedbackTorque = Callable[[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]
"""(substep, qpos (N, nq), qvel (N, nv), tau_ext (N, nv), inertia (N, nv)) -> (N, nv) torque
added to ``qfrc_applied``: ``tau_ext`` is minus MuJoCo's bias force (gravity, Coriolis) and
``inertia`` the diagonal of the mass matrix (armature included), both at the substep's start."""


class VecStepper:
    """N model copies of ``base`` stepped together."""

    def __init__(
        self, base: mujoco.MjModel, num: int, *, nthread: int = 0, sensors: bool = False
    ) -> None:
        self.base = base
        self.sensors = bool(sensors)
        self.sensordata = np.zeros((num, base.nsensordata))
        self.num = num
        self.models = [copy.copy(base) for _ in range(num)]
        self.nthread = max(0, int(nthread))
        self._pool = rollout.Rollout(nthread=self.nthread)
        self._datas = [mujoco.MjData(base) for _ in range(max(1, self.nthread))]
        self._env_datas: list[mujoco.MjData] | None = None  # python path, made on first use
        self.nstate = mujoco.mj_stateSize(base, STATE_SPEC)
        state0 = np.zeros(self.nstate)
        mujoco.mj_getState(base, self._datas[0], state0, STATE_SPEC)
        self.state0 = state0
        self.state = np.tile(state0, (num, 1))
        self._warm = np.zeros((num, base.nv))
        self.nq, self.nv, self.nu = base.nq, base.nv, base.nu
        # diagonal of the sparse mass matrix ``d.M`` (CSR lower triangle: diagonal last in a row)
        self._mdiag = np.asarray(base.M_rowadr, dtype=int) + np.asarray(base.M_rownnz) - 1

    # -- state layout ------------------------------------------------------------------------
    @property
    def qpos(self) -> np.ndarray:
        """(N, nq) view."""
        return self.state[:, 1 : 1 + self.nq]

    @property
    def qvel(self) -> np.ndarray:
        """(N, nv) view."""
        return self.state[:, 1 + self.nq : 1 + self.nq + self.nv]

    def reset_rows(self, rows: np.ndarray, qpos: np.ndarray, qvel: np.ndarray) -> None:
        """Reset the states of ``rows`` to time 0 and the given ``qpos`` / ``qvel``."""
        self.state[rows] = self.state0
        self.state[rows, 1 : 1 + self.nq] = qpos
        self.state[rows, 1 + self.nq : 1 + self.nq + self.nv] = qvel

    # -- stepping ----------------------------------------------------------------------------
    def step(
        self,
        ctrl: np.ndarray,
        qfrc: np.ndarray,
        feedback: FeedbackTorque | None = None,
        *,
        states: bool = True,
    ) -> np.ndarray | None:
        """Advance all environments by ``ctrl.shape[1]`` substeps; returns the (N, nsub,
        nstate) states after each substep (the last one is also in ``self.state``), or None
        with ``states=False`` (the Python path then skips reading the states in between)."""
        if feedback is None:
            out = self._step_rollout(ctrl, qfrc)
            return out if states else None
        return self._step_python(ctrl, qfrc, feedback, states)

    def _step_rollout(self, ctrl: np.ndarray, qfrc: np.ndarray) -> np.ndarray:
        controls = np.concatenate([ctrl, qfrc], axis=2)
        out = np.empty((self.num, controls.shape[1], self.nstate))
        sens = np.empty((self.num, controls.shape[1], self.base.nsensordata))
        self._pool.rollout(
            self.models,
            self._datas,
            self.state,
            controls,
            control_spec=CTRL_SPEC,
            initial_warmstart=self._warm,
            state=out,
            sensordata=sens if self.sensors else None,
            skip_checks=True,
            nstep=controls.shape[1],
        )
        self.state[:] = out[:, -1]
        if self.sensors:
            self.sensordata[:] = sens[:, -1]
        return out

    def _step_python(
        self, ctrl: np.ndarray, qfrc: np.ndarray, feedback: FeedbackTorque, states: bool
    ) -> np.ndarray | None:
        if self._env_datas is None:
            self._env_datas = [mujoco.MjData(self.base) for _ in range(self.num)]
        pairs, mdiag = list(zip(self.models, self._env_datas, strict=True)), self._mdiag
        step1, step2, get_state = mujoco.mj_step1, mujoco.mj_step2, mujoco.mj_getState
        nsub = ctrl.shape[1]
        out = np.empty((self.num, nsub, self.nstate)) if states else None
        qpos = np.empty((self.num, self.nq))
        qvel = np.empty((self.num, self.nv))
        bias = np.empty((self.num, self.nv))
        inertia = np.empty((self.num, self.nv))
        for i, (m, d) in enumerate(pairs):
            mujoco.mj_setState(m, d, self.state[i], STATE_SPEC)
            d.qacc_warmstart[:] = 0.0
        for k in range(nsub):
            for i, (m, d) in enumerate(pairs):
                step1(m, d)
                qpos[i], qvel[i], bias[i], inertia[i] = d.qpos, d.qvel, d.qfrc_bias, d.M[mdiag]
            applied = qfrc[:, k] + feedback(k, qpos, qvel, -bias, inertia)
            for i, (m, d) in enumerate(pairs):
                d.ctrl[:], d.qfrc_applied[:] = ctrl[i, k], applied[i]
                step2(m, d)
                if self.sensors and k == nsub - 1:
                    self.sensordata[i] = d.sensordata
                if states:
                    get_state(m, d, out[i, k], STATE_SPEC)
        if states:
            self.state[:] = out[:, -1]
        else:
            for i, (m, d) in enumerate(pairs):
                get_state(m, d, self.state[i], STATE_SPEC)
        return out

    def close(self) -> None:
        self._pool.close()


class BatchExtras:
    """The :class:`~sim2real.sim.extra.ExtraTerms` of N environments stacked into arrays, so
    friction torques, offsets, delays and observation noise are computed for the batch at once.
    Per-dof arrays are (N, nv), ``delay_s`` and ``smooth_vel_rad_s`` (N,)."""

    def __init__(self, extras: list) -> None:
        from sim2real.sim.extra import PER_DOF_TERMS

        self._names = PER_DOF_TERMS
        for name in PER_DOF_TERMS:
            setattr(self, name, np.stack([getattr(e, name) for e in extras]).astype(float))
        self.delay_s = np.array([e.delay_s for e in extras], dtype=float)
        self.smooth_vel_rad_s = np.array([e.smooth_vel_rad_s for e in extras], dtype=float)

    def update_rows(self, rows: np.ndarray, extras: list) -> None:
        """Copy the terms of ``extras[i]`` for each ``i`` in ``rows``."""
        for i in rows:
            e = extras[i]
            for name in self._names:
                getattr(self, name)[i] = getattr(e, name)
            self.delay_s[i] = e.delay_s
            self.smooth_vel_rad_s[i] = e.smooth_vel_rad_s

    @property
    def state_dependent(self) -> bool:
        return bool(
            np.any(self.coulomb_Nm) or np.any(self.viscous_Nm_s) or np.any(self.stribeck_Nm)
        )

    def friction_torque(self, qvel: np.ndarray) -> np.ndarray:
        """(N, nv) velocities -> (N, nv) friction torque, as ``ExtraTerms.friction_torque``."""
        from sim2real.sim.friction import smooth_friction_torque

        return smooth_friction_torque(
            qvel, self.coulomb_Nm, self.viscous_Nm_s, self.stribeck_Nm,
            self.stribeck_vel_rad_s, self.smooth_vel_rad_s[:, None],
        )  # fmt: skip
