"""The firmware law from the logs' PWM column: decoding the column, recovering a known law
from synthetic duty, the defaults without the column, and the real XL330 logs (whose law
must match the firmware's units, 4096 / (2 pi 256 885), on a gain it was not fitted to)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sim2real.actuators.firmware import duty_mae, identify_firmware
from sim2real.actuators.params import SPECS
from sim2real.actuators.servo_log import ServoLog, decode_duty, read_servo_log


def test_decode_duty_ratio_raw_register_and_garbage():
    ratio = np.array([0.0, 0.5, -1.0, 0.25])
    assert decode_duty(ratio) is not None and np.array_equal(decode_duty(ratio), ratio)
    # raw uint16 register: 885 = 100 %, 65535 = -1 count; 30000 is a value resampled across
    # the wrap (between -1 and +1 counts): unusable
    raw = np.array([885.0, 442.5, 65535.0 - 884.0, 30000.0, 65535.0])
    duty = decode_duty(raw)
    assert duty[:3] == pytest.approx([1.0, 0.5, -1.0]) and np.isnan(duty[3])
    assert duty[4] == pytest.approx(-1 / 885)
    assert decode_duty(np.array([1e6, 2.0])) is None
    assert decode_duty(np.array([np.nan])) is None


def _log(kp: float, u_rad: np.ndarray, duty: np.ndarray | None) -> ServoLog:
    n = len(u_rad)
    return ServoLog(
        path=Path(f"kp{kp:g}.json"), mass_kg=0.49, length_m=0.1, kp_fw=kp, vin_V=7.4,
        t_s=np.arange(n) * 0.005, goal_rad=u_rad, q_rad=np.zeros(n), qd_rad_s=np.zeros(n),
        enabled=np.ones(n, bool), duty=duty,
    )  # fmt: skip


def test_known_law_recovered_and_judged_on_another_gain():
    rng = np.random.default_rng(0)
    gain, pwm = 0.0025, 0.8  # not the defaults
    err = rng.uniform(-2.0, 2.0, 2000)  # goal - q [rad]
    fit_log = _log(400.0, err, np.clip(gain * 400.0 * err, -pwm, pwm))
    law = identify_firmware([fit_log])
    assert law.error_gain_duty_rad == pytest.approx(gain, rel=1e-9)
    assert law.max_pwm == pytest.approx(pwm)
    assert law.source == {"error_gain_duty_rad": "logs", "max_pwm": "logs"}
    assert law.duty_mae == pytest.approx(0.0, abs=1e-12) and law.below_law_fraction == 0.0
    other = _log(100.0, err, np.clip(gain * 100.0 * err, -pwm, pwm))
    assert duty_mae(law, [other]) == pytest.approx(0.0, abs=1e-12)
    # a current limiter capping the duty at 0.3 in a quarter of the samples (at rest, where
    # no back-EMF opens its window) while the others reach the law: samples below the law
    at_rest = rng.random(len(err)) < 0.25
    capped = np.where(at_rest, np.clip(fit_log.duty, -0.3, 0.3), fit_log.duty)
    limited = identify_firmware([_log(400.0, err, capped)])
    assert limited.max_pwm == pytest.approx(pwm) and limited.below_law_fraction > 0.1


def test_without_pwm_column_the_defaults_are_kept_and_said():
    law = identify_firmware([_log(200.0, np.linspace(-1, 1, 100), None)])
    assert law.error_gain_duty_rad == SPECS["error_gain_duty_rad"][0]
    assert law.max_pwm == 1.0 and law.samples == 0 and "defaults" in law.summary()


def test_real_xl330_law(real_data):
    folder = real_data / "servo-bam-xl330" / "processed"
    logs = [read_servo_log(p) for p in sorted(folder.glob("*.json"))]
    assert all(log.duty is not None for log in logs)
    assert all(log.vin_V == pytest.approx(7.3) and log.vin_header_V == 7.4 for log in logs)
    train = [log for log in logs if log.kp_fw != 400]
    law = identify_firmware(train)
    units = 4096 / (2 * np.pi * 256 * 885)  # pulses/rad over 256 x full-scale PWM
    assert law.error_gain_duty_rad == pytest.approx(units, rel=0.01)
    assert law.source["error_gain_duty_rad"] == "logs"
    assert law.max_pwm == pytest.approx(1.0, abs=0.01) and law.below_law_fraction < 0.01
    held = [log for log in logs if log.kp_fw == 400]  # saturates; never seen by the fit
    assert duty_mae(law, held) < 0.01
