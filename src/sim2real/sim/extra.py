"""Terms MuJoCo lacks, applied by the wrapper at every step: action delay, a Coulomb + viscous +
Stribeck joint friction torque, a constant torque offset, and observation noise.

The action delay shifts the logged controls by a fractional number of timesteps
(:func:`delayed_controls`, band-limited). Friction torque on a dof with velocity qd [rad/s]
(opposing the motion):

    tau_f = -(Fc (2/pi) atan(qd / v_s) + Fv qd + Fs exp(-(qd / v_st)^2) (2/pi) atan(qd / v_s))

with Fc = ``coulomb_Nm``, Fv = ``viscous_Nm_s``, Fs = ``stribeck_Nm`` (excess of static over
Coulomb friction), v_st = ``stribeck_vel_rad_s`` and the smoothing velocity v_s =
``smooth_vel_rad_s`` (0.01 rad/s: the published DFKI model's ``Fc atan(100 qd)`` is this term
with Fc_here = Fc_published * pi / 2).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sim2real.sim.friction import smooth_friction_torque

PER_DOF_TERMS = (
    "coulomb_Nm",
    "viscous_Nm_s",
    "stribeck_Nm",
    "stribeck_vel_rad_s",
    "offset_Nm",
    "pos_noise_rad",
    "vel_noise_rad_s",
)
"""The (nv,) arrays of ``ExtraTerms``, in the order they are copied and written."""


@dataclass
class ExtraTerms:
    """Per-dof arrays have shape (nv,)."""

    nv: int
    delay_s: float = 0.0
    smooth_vel_rad_s: float = 0.01
    coulomb_Nm: np.ndarray = field(default=None)  # type: ignore[assignment]
    viscous_Nm_s: np.ndarray = field(default=None)  # type: ignore[assignment]
    stribeck_Nm: np.ndarray = field(default=None)  # type: ignore[assignment]
    stribeck_vel_rad_s: np.ndarray = field(default=None)  # type: ignore[assignment]
    offset_Nm: np.ndarray = field(default=None)  # type: ignore[assignment]
    pos_noise_rad: np.ndarray = field(default=None)  # type: ignore[assignment]
    vel_noise_rad_s: np.ndarray = field(default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        for name in ("coulomb_Nm", "viscous_Nm_s", "stribeck_Nm", "offset_Nm"):
            if getattr(self, name) is None:
                setattr(self, name, np.zeros(self.nv))
        for name in ("pos_noise_rad", "vel_noise_rad_s"):
            if getattr(self, name) is None:
                setattr(self, name, np.zeros(self.nv))
        if self.stribeck_vel_rad_s is None:
            self.stribeck_vel_rad_s = np.full(self.nv, 0.1)

    def copy(self) -> ExtraTerms:
        return ExtraTerms(
            self.nv,
            self.delay_s,
            self.smooth_vel_rad_s,
            *(getattr(self, n).copy() for n in PER_DOF_TERMS),
        )

    @property
    def state_dependent(self) -> bool:
        """True when a friction term needs the state at each step (so the wrapper steps in
        Python instead of handing the open-loop controls to ``mujoco.rollout``)."""
        return bool(
            np.any(self.coulomb_Nm) or np.any(self.viscous_Nm_s) or np.any(self.stribeck_Nm)
        )

    def friction_torque(self, qvel: np.ndarray) -> np.ndarray:
        """(..., nv) joint velocities [rad/s] -> (..., nv) friction torque [N m]
        (``sim.friction.smooth_friction_torque``)."""
        return smooth_friction_torque(
            qvel, self.coulomb_Nm, self.viscous_Nm_s, self.stribeck_Nm,
            self.stribeck_vel_rad_s, self.smooth_vel_rad_s,
        )  # fmt: skip

    def observe(
        self, qpos: np.ndarray, qvel: np.ndarray, rng: np.random.Generator | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Add observation noise to (..., nv) hinge/slide positions and velocities."""
        if rng is None or not (np.any(self.pos_noise_rad) or np.any(self.vel_noise_rad_s)):
            return qpos, qvel
        return (
            qpos + rng.standard_normal(qpos.shape) * self.pos_noise_rad,
            qvel + rng.standard_normal(qvel.shape) * self.vel_noise_rad_s,
        )

    def to_dict(self, dof_names: list[str]) -> dict:
        """Non-zero terms keyed by dof (joint) name, for the sidecar YAML."""
        out: dict = {"delay_s": float(self.delay_s), "smooth_vel_rad_s": self.smooth_vel_rad_s}
        for name in PER_DOF_TERMS:
            arr = getattr(self, name)
            out[name] = {n: float(v) for n, v in zip(dof_names, arr, strict=True)}
        return out

    @classmethod
    def from_dict(cls, data: dict, dof_names: list[str]) -> ExtraTerms:
        out = cls(len(dof_names))
        out.delay_s = float(data.get("delay_s", 0.0))
        out.smooth_vel_rad_s = float(data.get("smooth_vel_rad_s", 0.01))
        for name, per in data.items():
            if isinstance(per, dict) and hasattr(out, name):
                arr = getattr(out, name)
                for joint, value in per.items():
                    if joint in dof_names:
                        arr[dof_names.index(joint)] = float(value)
        return out


def delayed_controls(ctrl: np.ndarray, hist: int, steps: int, delay_steps: float) -> np.ndarray:
    """Controls delayed by a fractional number of steps, band-limited.

    ``ctrl``: (B, hist + steps [+ tail], nu), where index ``hist`` is the control of the first
    simulated step, the ``hist`` entries before it are earlier controls of the same log and an
    optional tail holds later ones. Returns (B, steps, nu): u(t - delay).

    The shift is the exact band-limited one (a phase ramp on the FFT of the window, after
    removing the straight line through its first and last samples, which is shifted exactly):
    an integer delay is a plain shift and a linear signal is shifted exactly. Linear
    interpolation between samples would average noise at fractional delays only, which ripples
    the fit's cost with one local minimum per timestep. Needs ``delay_steps <= hist``."""
    if delay_steps <= 0:
        return ctrl[:, hist : hist + steps]
    if delay_steps > hist:
        raise ValueError(
            f"delay of {delay_steps:.3g} steps needs at least as many earlier controls"
        )
    n = ctrl.shape[1]
    if n < 2:
        return ctrl[:, hist : hist + steps]
    t = np.arange(n)[None, :, None] / (n - 1)
    first, last = ctrl[:, :1], ctrl[:, -1:]
    wave = ctrl - (first + (last - first) * t)
    phase = np.exp(-2j * np.pi * np.fft.rfftfreq(n) * delay_steps)[None, :, None]
    shifted = np.fft.irfft(np.fft.rfft(wave, axis=1) * phase, n=n, axis=1)
    out = shifted + first + (last - first) * (t - delay_steps / (n - 1))
    return out[:, hist : hist + steps]
