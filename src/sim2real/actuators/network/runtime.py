"""The network actuator at run time (numpy), vectorised over environments; the error feature
it shares with the training."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np


def error_feature(cfg, error_rad, kp_fw, vin_V):
    """The network's first input from the position error [rad]: the error itself, times the
    firmware gain (``error_times_kp``), or the firmware law's motor voltage [V]
    (``motor_voltage``); broadcasts."""
    if cfg.motor_voltage:
        duty = cfg.error_gain_duty_rad * np.asarray(kp_fw, dtype=float) * error_rad
        return np.clip(duty, -cfg.max_pwm, cfg.max_pwm) * np.asarray(vin_V, dtype=float)
    if cfg.error_times_kp:
        return error_rad * np.asarray(kp_fw, dtype=float)
    return error_rad


class ActuatorNet:
    """Runtime network actuator, vectorised over the broadcast shape of its inputs.

    Keeps a ring of the last samples of (error feature, velocity), one per call; before
    ``history`` samples were seen, the missing older ones repeat the first. ``reset()``
    empties it (and a change of input shape or of step does)."""

    def __init__(self, cfg, armature_kgm2: Any = None):
        self.cfg = cfg
        self.net = cfg.network()
        self._armature = cfg.armature_kgm2 if armature_kgm2 is None else armature_kgm2
        self.buf: np.ndarray | None = None
        self.pos = 0
        self._dt_loop: float | None = None
        self._warned = False
        self._fresh: np.ndarray | None = None  # rows whose history restarts at the next call

    @property
    def armature_kgm2(self):
        return self._armature

    def reset(self) -> None:
        self.buf = None
        self.pos = 0
        self._fresh = None

    def reset_rows(self, rows) -> None:
        """Forget the history of the environments ``rows`` (axis 0 of the inputs): their next
        sample fills their whole history, as after ``reset()``."""
        rows = np.atleast_1d(np.asarray(rows, dtype=int))
        self._fresh = rows if self._fresh is None else np.union1d(self._fresh, rows)

    def _lags(self, dt_s: float) -> np.ndarray:
        """Lags of the ``history`` inputs (oldest first) in loop steps."""
        ratio = self.cfg.dt_s / dt_s
        if abs(ratio - 1.0) > 1e-9 and not self._warned:
            warnings.warn(
                f"actuator network trained at dt {self.cfg.dt_s:g} s runs in a loop at "
                f"{dt_s:g} s: its history is resampled (linear interpolation)",
                stacklevel=3,
            )
            self._warned = True
        return np.round(np.arange(self.cfg.history - 1, -1, -1) * ratio, 9)

    def observe(self, command, q, qd, state) -> np.ndarray:
        """Store this step's sample and return the network input ``(M, 2H)`` (M = the
        broadcast size of the inputs), oldest sample first."""
        e = error_feature(self.cfg, np.asarray(command, dtype=float) - q, state.kp_fw, state.vin_V)
        e, v = np.broadcast_arrays(e, np.asarray(qd, dtype=float))
        sample = np.stack([e.ravel(), v.ravel()], axis=-1)  # (M, 2)
        lags = self._lags(state.dt_s)
        if self.buf is None or self.buf.shape[1:] != sample.shape or self._dt_loop != state.dt_s:
            k = int(np.ceil(lags[0])) + 2
            self.buf = np.repeat(sample[None], k, axis=0)
            self.pos, self._dt_loop = 0, state.dt_s
        k = self.buf.shape[0]
        self.pos = (self.pos + 1) % k
        self.buf[self.pos] = sample
        if self._fresh is not None:
            self.buf[:, self._fresh] = sample[self._fresh]
            self._fresh = None
        i0 = np.floor(lags).astype(int)
        f = (lags - i0)[:, None, None]
        a = self.buf[(self.pos - i0) % k]
        b = self.buf[(self.pos - i0 - 1) % k]
        hist = (1.0 - f) * a + f * b  # (H, M, 2)
        return np.concatenate([hist[:, :, 0].T, hist[:, :, 1].T], axis=1)

    def torque(self, command, q, qd, state):
        """Joint torque [N m], the broadcast shape of the inputs; 0 where torque is off."""
        shape = np.broadcast_shapes(np.shape(command), np.shape(q), np.shape(qd))
        tau = self.net(self.observe(command, q, qd, state)).reshape(shape)
        return np.where(state.enabled, tau, 0.0)
