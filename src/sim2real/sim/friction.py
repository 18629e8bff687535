"""Joint friction, one family for the whole toolkit: the smooth torque law of the simulated
joints (``smooth_friction_torque``: identification, the learning environments) and the BAM
friction models M1 to M6 of the actuators (Duclusaud et al., ICRA 2025, arXiv 2410.08650),
both built on the same Stribeck factor.

Smooth law (a torque): ``tau_f = -(Fc sgn + Fv qd + Fs s(qd) sgn)``, ``sgn = (2/pi)
atan(qd / v_s)`` a smooth sign (the published DFKI model's ``Fc atan(100 qd)`` is v_s = 0.01
rad/s), ``s = stribeck_coeff(qd, v_st, 2)``.

BAM models: friction is a *budget* (N m, >= 0) that the actuator spends opposing motion (see
:func:`sim2real.actuators.models.apply_friction`):

- M1 ``coulomb-viscous``: ``f = friction_base + friction_viscous |qd|``
- M2 ``stribeck``: adds ``friction_stribeck * s`` with ``s = exp(-|qd / dtheta_stribeck|^alpha)``
  (1 at rest, 0 when moving fast)
- M3 ``load-dependent``: adds ``load_friction_base * |tau_ext - tau_m|`` (gearbox torque)
- M4 ``load-dependent-stribeck``: M3 plus ``(friction_stribeck + load_friction_stribeck
  |tau_ext - tau_m|) * s``
- M5 ``directional``: base + Stribeck + ``|lfe tau_ext - lfm tau_m|`` + ``s |lfes tau_ext -
  lfms tau_m|`` (motor and external sides weighted apart)
- ``smooth``: the smooth law's budget, ``f = friction_base |sgn| + friction_viscous |qd|`` with
  ``sgn = (2/pi) atan(qd / v_s)``, ``v_s = friction_smooth_vel_rad_s``: no friction at rest,
  so nothing sticks (the model the identification and the environments use, as an actuator)
- M6 ``quadratic``: M5 plus ``s (lfe_quad tau_ext^2 when |tau_m| > |tau_ext| else lfm_quad
  tau_m^2)`` where the motor and the load push against each other (opposite signs), as in
  BAM's ``Model.compute_frictions``

All functions broadcast over numpy arrays (any shape).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

FrictionKind = Literal[
    "none",
    "coulomb-viscous",
    "stribeck",
    "load-dependent",
    "load-dependent-stribeck",
    "directional",
    "quadratic",
    "smooth",
]

_STRIBECK = ["friction_stribeck_Nm", "dtheta_stribeck_rad_s", "stribeck_alpha"]
_M5 = ["load_friction_motor", "load_friction_external"]
_M5S = ["load_friction_motor_stribeck", "load_friction_external_stribeck"]

FRICTION_PARAMS: dict[str, list[str]] = {
    "none": [],
    "coulomb-viscous": ["friction_base_Nm", "friction_viscous_Nms_rad"],
    "stribeck": ["friction_base_Nm", "friction_viscous_Nms_rad", *_STRIBECK],
    "load-dependent": ["friction_base_Nm", "friction_viscous_Nms_rad", "load_friction_base"],
    "load-dependent-stribeck": [
        "friction_base_Nm",
        "friction_viscous_Nms_rad",
        "load_friction_base",
        *_STRIBECK,
        "load_friction_stribeck",
    ],
    "directional": ["friction_base_Nm", "friction_viscous_Nms_rad", *_STRIBECK, *_M5, *_M5S],
    "quadratic": [
        "friction_base_Nm",
        "friction_viscous_Nms_rad",
        *_STRIBECK,
        *_M5,
        *_M5S,
        "load_friction_motor_quad",
        "load_friction_external_quad",
    ],
    "smooth": ["friction_base_Nm", "friction_viscous_Nms_rad", "friction_smooth_vel_rad_s"],
}
"""Parameters of each friction model, in order."""

BAM_MODELS: dict[str, str] = {
    "m1": "coulomb-viscous",
    "m2": "stribeck",
    "m3": "load-dependent",
    "m4": "load-dependent-stribeck",
    "m5": "directional",
    "m6": "quadratic",
}


def stribeck_coeff(qd, dtheta_s, alpha):
    """``exp(-|qd / dtheta_s|^alpha)``: 1 at rest, towards 0 when moving (same shape as qd)."""
    return np.exp(-(np.abs(np.asarray(qd) / dtheta_s) ** alpha))


def smooth_sign(qd, smooth_vel_rad_s):
    """``(2/pi) atan(qd / v_s)``: the sign of ``qd``, smoothed over a few ``v_s``."""
    return (2.0 / np.pi) * np.arctan(np.asarray(qd, dtype=float) / smooth_vel_rad_s)


def friction_budget(kind: str, p: dict, tau_m, tau_ext, qd):
    """Friction magnitude (N m, >= 0) that model ``kind`` can oppose motion with.

    ``p``: parameter values (scalars or arrays broadcasting with the others); ``tau_m`` motor
    torque (N m), ``tau_ext`` external torque on the joint (gravity, N m), ``qd`` (rad/s).
    """
    qd = np.asarray(qd, dtype=float)
    zero = np.zeros(np.broadcast_shapes(qd.shape, np.shape(tau_m), np.shape(tau_ext)))
    if kind == "none":
        return zero
    if kind == "smooth":
        sgn = smooth_sign(qd, p["friction_smooth_vel_rad_s"])
        return (
            zero + p["friction_base_Nm"] * np.abs(sgn) + p["friction_viscous_Nms_rad"] * np.abs(qd)
        )
    f = zero + p["friction_base_Nm"] + p["friction_viscous_Nms_rad"] * np.abs(qd)
    s = 0.0
    if "friction_stribeck_Nm" in FRICTION_PARAMS[kind]:
        s = stribeck_coeff(qd, p["dtheta_stribeck_rad_s"], p["stribeck_alpha"])
        f = f + p["friction_stribeck_Nm"] * s
    if kind in ("load-dependent", "load-dependent-stribeck"):
        gearbox = np.abs(tau_ext - tau_m)
        f = f + p["load_friction_base"] * gearbox
        if kind == "load-dependent-stribeck":
            f = f + p["load_friction_stribeck"] * gearbox * s
    if kind in ("directional", "quadratic"):
        f = f + np.abs(p["load_friction_external"] * tau_ext - p["load_friction_motor"] * tau_m)
        f = f + s * np.abs(
            p["load_friction_external_stribeck"] * tau_ext
            - p["load_friction_motor_stribeck"] * tau_m
        )
        if kind == "quadratic":
            drive = np.abs(tau_m) > np.abs(tau_ext)
            quad = np.where(
                drive,
                p["load_friction_external_quad"] * np.asarray(tau_ext) ** 2,
                p["load_friction_motor_quad"] * np.asarray(tau_m) ** 2,
            )
            opposed = np.sign(tau_ext) != np.sign(tau_m)
            f = f + s * np.where(opposed, quad, 0.0)
    return f


def smooth_friction_torque(
    qvel, coulomb_Nm, viscous_Nm_s, stribeck_Nm, stribeck_vel_rad_s, smooth_vel_rad_s
) -> np.ndarray:
    """Friction torque [N m] of the smooth law at joint velocities ``qvel`` [rad/s]; every
    argument broadcasts (per dof, per environment)."""
    qvel = np.asarray(qvel, dtype=float)
    sgn = smooth_sign(qvel, smooth_vel_rad_s)
    strib = stribeck_Nm * stribeck_coeff(qvel, np.maximum(stribeck_vel_rad_s, 1e-9), 2.0) * sgn
    return -(coulomb_Nm * sgn + viscous_Nm_s * qvel + strib)
