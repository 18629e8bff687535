"""The actuator models' parameters: one table of names (with units), nominal values, bounds
and scales, from which each model's :class:`~sim2real.params.space.ParamSpace` is built.

Nominal values are those of a Dynamixel XL330 (the BAM authors' fitted M1 model, Duclusaud et
al. 2025) so a fit starts from a plausible servo; bounds are wide enough for other small
servos. ``error_gain_duty_rad`` is the firmware's PWM duty per radian of position error per
unit of firmware ``kp``: (4096 / 2 pi) / (256 * 885) for a Dynamixel X servo (encoder pulses
per rad over the gain's 1/256 scaling and the 885 counts of 100 % PWM), BAM's 0.0028774.
"""

from __future__ import annotations

from math import pi

from sim2real.params.space import Param, ParamSpace

# name: (nominal, lower, upper, scale, description)
SPECS: dict[str, tuple[float, float, float, str, str]] = {
    # ideal PD position servo
    "kp_Nm_rad_per_fw": (0.0041, 1e-4, 0.05, "log", "stiffness per unit of firmware kp"),
    "kd_Nms_rad": (0.04, 1e-4, 0.5, "log", "damping of the PD servo"),
    "tau_max_Nm": (0.7, 0.05, 5.0, "log", "torque saturation"),
    # DC motor and the servo's proportional controller
    "kt_Nm_A": (0.387, 0.05, 2.0, "log", "torque constant (= back-EMF constant, V s/rad)"),
    "R_ohm": (4.0, 0.5, 20.0, "log", "winding resistance"),
    "error_gain_duty_rad": (4096 / (2 * pi * 256 * 885), 0.001, 0.01, "log", "duty/rad/kp"),
    "max_pwm": (1.0, 0.2, 1.0, "linear", "duty-cycle limit (fraction of vin)"),
    # firmware current limit; off by default (100 A): the XL330's 1.75 A register value, fixed
    # or fitted, made the hold-out gain's MAE 3x worse on the BAM bench logs
    "max_current_A": (100.0, 0.2, 100.0, "log", "firmware current limit"),
    # torque per ampere falling with the current (magnetic saturation): kt I / (1 + c |I|)
    "kt_droop_per_A": (0.0, 0.0, 2.0, "linear", "torque-constant droop per ampere"),
    # torque-controlled motor (current loop): command in N m
    "torque_gain": (1.0, 0.5, 1.5, "linear", "delivered / commanded torque"),
    "motor_tau_max_Nm": (6.0, 0.1, 50.0, "log", "motor torque saturation"),
    "torque_time_constant_s": (0.0, 0.0, 0.05, "linear", "first-order lag of the torque"),
    # shared
    "armature_kgm2": (0.0018, 1e-5, 0.02, "log", "reflected rotor inertia"),
    "delay_s": (0.0, 0.0, 0.03, "linear", "command delay"),
    # friction family (BAM M1-M6); load terms are dimensionless, quadratic ones 1/(N m)
    "friction_base_Nm": (0.0128, 0.0, 0.2, "linear", "Coulomb friction"),
    "friction_viscous_Nms_rad": (0.0037, 0.0, 0.1, "linear", "viscous friction"),
    "friction_stribeck_Nm": (0.01, 0.0, 0.2, "linear", "extra static friction at rest"),
    "dtheta_stribeck_rad_s": (1.0, 0.01, 10.0, "log", "Stribeck velocity"),
    # the smooth law's sign width; the DFKI pendulum's published model atan(100 qd): 0.01 rad/s
    "friction_smooth_vel_rad_s": (0.01, 1e-3, 1.0, "log", "smooth-sign velocity"),
    "stribeck_alpha": (1.5, 0.5, 10.0, "log", "Stribeck curve exponent"),
    "load_friction_base": (0.05, 0.0, 1.0, "linear", "friction per N m of gearbox torque"),
    "load_friction_stribeck": (0.05, 0.0, 1.0, "linear", "load friction added at rest"),
    "load_friction_motor": (0.1, 0.0, 1.0, "linear", "load friction, motor side"),
    "load_friction_external": (0.05, 0.0, 1.0, "linear", "load friction, external side"),
    "load_friction_motor_stribeck": (0.01, 0.0, 1.0, "linear", "motor-side, at rest"),
    "load_friction_external_stribeck": (0.05, 0.0, 1.0, "linear", "external-side, at rest"),
    "load_friction_motor_quad": (0.005, 0.0, 1.0, "linear", "quadratic, backdriven (1/N m)"),
    "load_friction_external_quad": (0.005, 0.0, 1.0, "linear", "quadratic, driven (1/N m)"),
}

# parameters that are kept at their nominal value unless a config frees them
FIXED_BY_DEFAULT = {
    "max_pwm",
    "error_gain_duty_rad",
    "max_current_A",
    "kt_droop_per_A",
    "current_clip_A",
    "current_tanh_A",
}


def param_space(
    names: list[str],
    values: dict[str, float] | None = None,
    free: set[str] | frozenset[str] = frozenset(),
    fixed: set[str] | frozenset[str] = frozenset(),
) -> ParamSpace:
    """ParamSpace of the given parameters (targets ``actuator.<name>``), nominal values
    replaced by ``values`` where given (a value outside the table's bounds widens them: a
    motor unlike the XL330 is taken as given, never clipped); ``FIXED_BY_DEFAULT`` ones not
    in ``free``, and those in ``fixed``, have lower == upper == their value."""
    values = values or {}
    params = []
    for name in names:
        nominal, lo, hi, scale, desc = SPECS[name]
        v = float(values.get(name, nominal))
        if (name in FIXED_BY_DEFAULT and name not in free) or name in fixed:
            lo = hi = v
            scale = "linear"
        lo, hi = min(lo, v), max(hi, v)
        params.append(
            Param(
                name=name,
                target=f"actuator.{name}",
                nominal=v,
                bounds=(lo, hi),
                scale=scale,  # type: ignore[arg-type]
                description=desc,
            )
        )
    return ParamSpace(params=params)
