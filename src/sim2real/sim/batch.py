"""Batched simulation of many parameter sets at once on ``mujoco.rollout`` (one model per
trajectory, several threads): the workhorse of identification and randomization.

Open-loop terms (action delay, constant torque offset) are folded into the controls handed to
``mujoco.rollout`` (``ctrl`` and ``qfrc_applied``), so they cost nothing per step. When a
state-dependent extra friction term is non-zero, those trajectories are stepped in Python with
the torque computed at every step (exact, but about 5x slower).

A trajectory is *unstable* when its state turns non-finite, a speed exceeds ``max_speed``, or
MuJoCo reset it after a warning (its time stops advancing by one timestep a step); MuJoCo's
warnings are caught while simulating (so none lands in a ``MUJOCO_LOG.TXT``) and counted in
``warnings``. Unstable trajectories are reported, never raised.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import mujoco
import numpy as np
from mujoco import rollout

from sim2real.core.cores import usable_cores
from sim2real.params.space import ParamSpace
from sim2real.sim.extra import ExtraTerms, delayed_controls
from sim2real.sim.model import SimModel

_SPEC = mujoco.mjtState.mjSTATE_FULLPHYSICS
_CTRL_SPEC = mujoco.mjtState.mjSTATE_CTRL | mujoco.mjtState.mjSTATE_QFRC_APPLIED


@dataclass
class BatchResult:
    """``qpos`` (B, T + 1, nq) and ``qvel`` (B, T + 1, nv): index 0 is the initial state, index
    t the state after t steps; ``unstable`` (B,) bool; ``warnings``: MuJoCo warnings raised."""

    qpos: np.ndarray
    qvel: np.ndarray
    unstable: np.ndarray
    warnings: int


class BatchSimulator:
    """Simulates trajectories of a :class:`SimModel` under parameter sets of ``space``."""

    def __init__(
        self,
        sim: SimModel,
        space: ParamSpace,
        *,
        nthread: int | None = None,
        max_speed: float = 500.0,
    ) -> None:
        self.sim = sim
        self.space = space
        self.handles = sim.resolve(space)
        self.nthread = max(1, nthread or usable_cores())
        self.max_speed = max_speed
        self._pool: list[mujoco.MjModel] = []
        self._extras: list[ExtraTerms] = []
        m = sim.model
        self._datas = [mujoco.MjData(m) for _ in range(self.nthread)]
        self.nstate = mujoco.mj_stateSize(m, _SPEC)
        self._state0 = np.zeros(self.nstate)
        mujoco.mj_getState(m, self._datas[0], self._state0, _SPEC)

    def prepare(self, values: np.ndarray) -> tuple[list[mujoco.MjModel], list[ExtraTerms]]:
        """(C, P) values -> C model copies (pooled, reused between calls) and their extras."""
        values = np.atleast_2d(np.asarray(values, dtype=float))
        while len(self._pool) < len(values):
            self._pool.append(copy.copy(self.sim.model))
            self._extras.append(self.sim.extras.copy())
        for c, v in enumerate(values):
            self._extras[c] = self.sim.extras.copy()
            SimModel.apply(self._pool[c], self._extras[c], self.handles, v)
        return self._pool[: len(values)], self._extras[: len(values)]

    def run(
        self,
        values: np.ndarray,
        qpos0: np.ndarray,
        qvel0: np.ndarray,
        ctrl: np.ndarray,
        *,
        owner: np.ndarray | None = None,
        hist: int = 0,
        steps: int | None = None,
        rng: np.random.Generator | None = None,
    ) -> BatchResult:
        """Simulate B trajectories.

        values: (C, P) parameter sets; ``owner`` (B,) int says which set drives each trajectory
        (default: C == B, one each). qpos0 (B, nq), qvel0 (B, nv): initial states.
        ctrl: (B, hist + T [+ tail], nu) controls in the actuators' units, the ``hist`` entries
        before the first simulated step being earlier controls (used by the action delay, which
        needs delay <= hist steps) and an optional tail later ones (give ``steps``). With ``rng``,
        the observation noise of each set (``extra.pos_noise`` / ``extra.vel_noise``) is added
        to the returned states after index 0 (hinge and slide joints, whose qpos and dof
        addresses coincide in models without free or ball joints)."""
        values = np.atleast_2d(np.asarray(values, dtype=float))
        qpos0, qvel0 = np.atleast_2d(qpos0), np.atleast_2d(qvel0)
        ctrl = np.asarray(ctrl, dtype=float)
        if ctrl.ndim == 2:
            ctrl = ctrl[None]
        B = qpos0.shape[0]
        owner = np.arange(B) if owner is None else np.asarray(owner, dtype=int)
        if ctrl.shape[0] == 1 and B > 1:
            ctrl = np.broadcast_to(ctrl, (B, *ctrl.shape[1:]))
        T = ctrl.shape[1] - hist if steps is None else steps
        models, extras = self.prepare(values)
        m0 = self.sim.model
        nu, nv, nq = m0.nu, m0.nv, m0.nq
        controls = np.zeros((B, T, nu + nv))
        for c in np.unique(owner):
            rows = np.flatnonzero(owner == c)
            delay_steps = extras[c].delay_s / models[c].opt.timestep
            controls[rows, :, :nu] = delayed_controls(ctrl[rows], hist, T, delay_steps)
            controls[rows, :, nu:] = extras[c].offset_Nm
        state0 = np.tile(self._state0, (B, 1))
        state0[:, 1 : 1 + nq] = qpos0
        state0[:, 1 + nq : 1 + nq + nv] = qvel0
        caught: list[str] = []
        previous = mujoco.get_mju_user_warning()
        mujoco.set_mju_user_warning(caught.append)  # count them; no MUJOCO_LOG.TXT in the cwd
        try:
            state = self._simulate(models, extras, owner, state0, controls)
        finally:
            mujoco.set_mju_user_warning(previous)
        qpos = np.concatenate([qpos0[:, None], state[:, :, 1 : 1 + nq]], axis=1)
        qvel = np.concatenate([qvel0[:, None], state[:, :, 1 + nq : 1 + nq + nv]], axis=1)
        dts = np.array([models[c].opt.timestep for c in owner])
        unstable = self._unstable(state[:, :, 0], qpos, qvel, dts)
        if rng is not None and nq == nv:
            for c in np.unique(owner):
                rows = np.flatnonzero(owner == c)
                qpos[rows, 1:], qvel[rows, 1:] = extras[c].observe(
                    qpos[rows, 1:], qvel[rows, 1:], rng
                )
        return BatchResult(qpos, qvel, unstable, len(caught))

    def _simulate(self, models, extras, owner, state0, controls) -> np.ndarray:
        B, T = controls.shape[:2]
        stepped = np.array([extras[c].state_dependent for c in owner], dtype=bool)
        state = np.empty((B, T, self.nstate))
        fast = np.flatnonzero(~stepped)
        if fast.size:
            state[fast] = rollout.rollout(
                [models[owner[b]] for b in fast],
                self._datas,
                state0[fast],
                controls[fast],
                control_spec=_CTRL_SPEC,
            )[0]
        for b in np.flatnonzero(stepped):
            state[b] = self._step_python(models[owner[b]], extras[owner[b]], state0[b], controls[b])
        return state

    def _step_python(
        self, model: mujoco.MjModel, extras: ExtraTerms, state0: np.ndarray, controls: np.ndarray
    ) -> np.ndarray:
        d = self._datas[0]
        mujoco.mj_setState(model, d, state0, _SPEC)
        nu = model.nu
        out = np.empty((controls.shape[0], self.nstate))
        for t in range(controls.shape[0]):
            d.ctrl[:] = controls[t, :nu]
            d.qfrc_applied[:] = controls[t, nu:] + extras.friction_torque(d.qvel)
            mujoco.mj_step(model, d)
            mujoco.mj_getState(model, d, out[t], _SPEC)
        d.qfrc_applied[:] = 0.0
        return out

    def _unstable(
        self, time: np.ndarray, qpos: np.ndarray, qvel: np.ndarray, dts: np.ndarray
    ) -> np.ndarray:
        finite = np.isfinite(qpos).all(axis=(1, 2)) & np.isfinite(qvel).all(axis=(1, 2))
        fast = np.abs(np.nan_to_num(qvel, nan=np.inf)).max(axis=(1, 2)) > self.max_speed
        step = np.diff(time, axis=1) if time.shape[1] > 1 else np.zeros((time.shape[0], 0))
        reset = (np.abs(step - dts[:, None]) > 0.5 * dts[:, None]).any(axis=1)
        return ~finite | fast | reset
