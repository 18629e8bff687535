"""The servo firmware's control law identified from the logged PWM (``load``) column.

A Dynamixel X servo in position mode (XL330 here) drives its motor with the duty cycle
``d = clip(error_gain * kp * (goal - q), -max_pwm, max_pwm)``: a pure proportional law on
the position it reads. The firmware's units give ``error_gain = (4096 / 2 pi) / (256 * 885)
= 0.0028774`` duty per rad per unit of kp (encoder pulses per rad, the gain's 1/256 scaling,
885 = 100 % PWM), the value BAM found with an oscilloscope (Duclusaud et al. 2025). When the
logs carry the PWM the servo applied, both constants are measured instead of assumed:

- ``error_gain_duty_rad``: median of ``d / (kp (goal - q))`` over unsaturated samples with a
  clear duty (5 % to 90 % of ``max_pwm``);
- ``max_pwm``: the largest duty reached where the proportional law asks for more;
  not pinned (the default kept, and said so) when no sample saturates;
- limiter check: the share of unsaturated samples whose duty falls short of the law by more
  than 10 % (a current limiter acting on the PWM would show there).

``duty_mae`` judges the law on other logs (held-out gains) by the same measure.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim2real.actuators.params import SPECS
from sim2real.actuators.servo_log import ServoLog

MIN_SAMPLES = 50
"""Fewer usable samples than this and a constant is not pinned by the logs."""


@dataclass
class FirmwareLaw:
    """The proportional law's constants and where they come from (``source`` per constant:
    ``"logs"`` or ``"default"``), with the evidence: samples used, the law's duty MAE on the
    fitting logs, the share of samples below the law (a limiter)."""

    error_gain_duty_rad: float
    max_pwm: float
    source: dict[str, str]
    samples: int = 0
    saturated_samples: int = 0
    duty_mae: float | None = None
    below_law_fraction: float | None = None

    def values(self) -> dict[str, float]:
        return {"error_gain_duty_rad": self.error_gain_duty_rad, "max_pwm": self.max_pwm}

    def summary(self) -> str:
        if self.samples == 0:
            return (
                f"firmware law: error gain {self.error_gain_duty_rad:.6g} duty/rad/kp, max PWM "
                f"{self.max_pwm:g} (defaults: the logs have no PWM column)"
            )
        return (
            f"firmware law from the logs' PWM ({self.samples} samples): error gain "
            f"{self.error_gain_duty_rad:.6g} duty/rad/kp ({self.source['error_gain_duty_rad']}), "
            f"max PWM {self.max_pwm:.3g} ({self.source['max_pwm']}, {self.saturated_samples} "
            f"saturated samples), duty MAE {self.duty_mae:.4f}, "
            f"{100 * (self.below_law_fraction or 0.0):.1f} % of samples below the law"
        )


def _samples(logs: list[ServoLog]):
    """(duty, kp * error) over torque-enabled samples with a measured duty."""
    d, u = [], []
    for log in logs:
        if log.duty is None:
            continue
        ok = log.enabled & np.isfinite(log.duty)
        d.append(log.duty[ok])
        u.append(log.kp_fw * (log.goal_rad - log.q_rad)[ok])
    if not d:
        return np.empty(0), np.empty(0)
    return np.concatenate(d), np.concatenate(u)


def law_duty(u: np.ndarray, error_gain: float, max_pwm: float) -> np.ndarray:
    """The law's duty for ``u = kp * (goal - q)`` (rad)."""
    return np.clip(error_gain * u, -max_pwm, max_pwm)


def identify_firmware(logs: list[ServoLog]) -> FirmwareLaw:
    """The proportional law of ``logs`` (see the module docstring); the defaults of
    :mod:`sim2real.actuators.params` where the logs cannot pin a constant."""
    gain0, pwm0 = SPECS["error_gain_duty_rad"][0], SPECS["max_pwm"][0]
    d, u = _samples(logs)
    if d.size == 0:
        return FirmwareLaw(gain0, pwm0, {"error_gain_duty_rad": "default", "max_pwm": "default"})
    source = {"error_gain_duty_rad": "default", "max_pwm": "default"}
    pwm_seen = float(np.abs(d).max())
    # samples the law asks more than any duty seen: saturated (with the default gain)
    sat = np.abs(gain0 * u) > 1.05 * max(pwm_seen, 1e-9)
    n_sat = int(sat.sum())
    max_pwm = pwm0
    if n_sat >= MIN_SAMPLES // 5 and pwm_seen > 0:
        max_pwm = float(np.percentile(np.abs(d[sat]), 90))
        source["max_pwm"] = "logs"
    clear = (np.abs(d) > 0.05 * max_pwm) & (np.abs(d) < 0.9 * max_pwm) & (d * u > 0) & ~sat
    gain = gain0
    if clear.sum() >= MIN_SAMPLES:
        gain = float(np.median(d[clear] / u[clear]))
        source["error_gain_duty_rad"] = "logs"
    law = FirmwareLaw(gain, max_pwm, source, samples=int(d.size), saturated_samples=n_sat)
    law.duty_mae = duty_mae(law, logs)
    unsat = np.abs(gain * u) < 0.9 * max_pwm
    short = np.abs(d) < 0.9 * np.abs(gain * u)
    big = np.abs(gain * u) > 0.1 * max_pwm
    law.below_law_fraction = float((short & unsat & big).sum() / max((unsat & big).sum(), 1))
    return law


def duty_mae(law: FirmwareLaw, logs: list[ServoLog]) -> float | None:
    """Mean absolute duty error of ``law`` on the logs' measured duty (None without it)."""
    d, u = _samples(logs)
    if d.size == 0:
        return None
    return float(np.mean(np.abs(law_duty(u, law.error_gain_duty_rad, law.max_pwm) - d)))
