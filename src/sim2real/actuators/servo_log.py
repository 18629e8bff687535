"""Reading a servo bench log (the BAM JSON format): constants of the bench and, per sample,
time, goal position (the command), measured position and whether torque was enabled.

Format: ``mass`` [kg], ``length`` [m], ``kp`` (firmware gain, one per file), ``vin`` [V],
``entries``: list of ``{timestamp [s], goal_position [rad], position [rad], torque_enable}``;
optional per sample: ``speed`` [rad/s], ``input_volts`` [V], ``load`` (the servo's PWM output);
optional in the header: ``bench`` (the bench's name, default ``servo-bam-xl330``) and
``simulated`` (true for logs simulated from a model, not recorded).

Supply voltage: the median of the measured ``input_volts`` over the torque-enabled samples
when the log has them, else the header's ``vin`` (BAM's recorder writes its ``--vin`` option
there, 7.4 V by default, not a measurement; the XL330 logs here read 7.3 V).

``load``: BAM's XL330 recorder logs the servo's Present PWM, either as a duty ratio in
[-1, 1] (newer recorder) or as the raw register (older recorder, these logs: uint16 two's
complement, 885 = 100 % on Dynamixel X servos, and resampled, so values interpolated across
the wrap are out of range and dropped). :func:`decode_duty` turns either into a duty ratio.
"""

from __future__ import annotations

import contextlib
import json
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sim2real.core.errors import InputError
from sim2real.sim.logs import GAP_STEPS, MAX_MEDIAN_STEP_S, first_repeat


@dataclass
class ServoLog:
    """One bench log; arrays are ``(T,)``."""

    path: Path
    mass_kg: float
    length_m: float
    kp_fw: float
    vin_V: float
    t_s: np.ndarray
    goal_rad: np.ndarray
    q_rad: np.ndarray
    qd_rad_s: np.ndarray
    enabled: np.ndarray
    trajectory: str = ""
    duty: np.ndarray | None = None
    """``(T,)`` measured PWM duty ratio (NaN where unusable), None without a ``load`` column."""
    vin_header_V: float | None = None
    """The header's ``vin`` (None if absent); ``vin_V`` is the measured one when present."""
    bench: str = "servo-bam-xl330"
    """The bench the log comes from (header ``bench``; BAM's logs have none: the XL330's)."""
    simulated: bool = False
    """Header ``simulated``: the log was simulated, not recorded on hardware."""

    @property
    def dt_s(self) -> float:
        return float(np.median(np.diff(self.t_s)))


def _number(path: Path, field: str, value: object) -> float:
    if isinstance(value, str):  # "200": a number another tool wrote as text
        with contextlib.suppress(ValueError):
            value = float(value)
    if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value):
        raise InputError(path, field, f"expected a finite number, got {value!r}")
    return float(value)


def _positive(path: Path, field: str, value: object) -> float:
    number = _number(path, field, value)
    if not number > 0:
        raise InputError(path, field, f"expected a value > 0, got {number:g}")
    return number


def _flag(path: Path, field: str, value: object) -> bool:
    """A JSON boolean, 0 / 1, or "true" / "false" ("false" is not truthy here)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise InputError(path, field, f"expected true or false, got {value!r}")


PWM_FULL_SCALE = 885
"""Dynamixel X-series PWM register value of a 100 % duty cycle (PWM Limit's maximum)."""


def decode_duty(load: np.ndarray) -> np.ndarray | None:
    """Duty ratio ``(T,)`` from a ``load`` column: kept as is when every value is within
    [-1, 1]; else raw PWM register values (uint16 two's complement, or signed) divided by
    ``PWM_FULL_SCALE``, NaN where out of range; None when the column fits neither."""
    x = np.asarray(load, dtype=float)
    finite = x[np.isfinite(x)]
    if finite.size == 0:
        return None
    if np.all(np.abs(finite) <= 1.0 + 1e-9):
        return x
    if np.abs(finite).max() > 65535:
        return None
    x = np.where(x > 32767, x - 65536, x)  # uint16 two's complement (signed values pass)
    duty = x / PWM_FULL_SCALE
    return np.where(np.abs(duty) <= 1.0 + 1e-9, duty, np.nan)


def read_servo_log(path: str | Path) -> ServoLog:
    """Read and check one log; bad input raises ``InputError(path, field)``."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, None, "log not found")
    try:
        data = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        why = f"not valid JSON ({err}): a servo log is BAM's JSON (a header and 'entries')"
        raise InputError(path, None, why) from None
    if not isinstance(data, dict):
        raise InputError(path, None, "expected a JSON object with 'entries'")
    for key in ("mass", "length", "kp", "entries"):
        if key not in data:
            raise InputError(path, key, "missing field")
    kp = data["kp"]
    if isinstance(kp, list):
        if len(set(kp)) != 1:
            raise InputError(path, "kp", f"mixed gains in one file: {sorted(set(kp))}")
        kp = kp[0]
    kp = _positive(path, "kp", kp)
    entries = data["entries"]
    if not isinstance(entries, list) or len(entries) < 2:
        raise InputError(path, "entries", "expected a list of at least 2 samples")
    cols: dict[str, list[float]] = {k: [] for k in ("timestamp", "goal_position", "position")}
    speed, enabled, volts, load = [], [], [], []
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            raise InputError(path, f"entries[{i}]", "expected an object")
        for key, col in cols.items():
            if key not in e:
                raise InputError(path, f"entries[{i}].{key}", "missing field")
            col.append(_number(path, f"entries[{i}].{key}", e[key]))
        if "kp" in e and _number(path, f"entries[{i}].kp", e["kp"]) != kp:
            raise InputError(
                path, f"entries[{i}].kp", f"mixed gains in one file: {e['kp']} and {kp}"
            )
        if "torque_enable" not in e:
            raise InputError(path, f"entries[{i}].torque_enable", "missing field")
        enabled.append(_flag(path, f"entries[{i}].torque_enable", e["torque_enable"]))
        speed.append(_number(path, f"entries[{i}].speed", e["speed"]) if "speed" in e else np.nan)
        if "input_volts" in e:
            volts.append(_number(path, f"entries[{i}].input_volts", e["input_volts"]))
        if "load" in e:
            load.append(_number(path, f"entries[{i}].load", e["load"]))
    t = np.array(cols["timestamp"])
    bad = np.flatnonzero(np.diff(t) <= 0)
    if bad.size:
        i = int(bad[0]) + 1
        raise InputError(
            path, f"entries[{i}].timestamp", f"timestamps not increasing ({t[i - 1]} then {t[i]})"
        )
    median = float(np.median(np.diff(t)))
    if "dt" in data:  # the header's step against the timestamps' (milliseconds as seconds...)
        stated = _positive(path, "dt", data["dt"])
        if not 0.5 < median / stated < 2.0:
            why = f"the timestamps step {median:g} s, the header's dt says {stated:g} s"
            raise InputError(path, "entries[].timestamp", why + " (timestamps in another unit?)")
    if median > MAX_MEDIAN_STEP_S:  # with no dt (or a dt in ms too) a replay stepped 5 s
        why = f"the timestamps step {median:g} s: milliseconds? servo logs are in seconds"
        raise InputError(path, "entries[].timestamp", why)
    gaps = np.flatnonzero(np.diff(t) > GAP_STEPS * median)
    if gaps.size:  # replayed as one step, with no reset of the state
        warnings.warn(
            f"{path}: {gaps.size} gap(s) in the timestamps (the first {t[gaps[0] + 1] - t[gaps[0]]:.3g}"
            f" s at {t[gaps[0]]:.3g} s): two runs in one file? the replay steps across it",
            stacklevel=2,
        )
    en = np.array(enabled)
    if not en.any():
        raise InputError(path, "torque_enable", "torque disabled in every sample: nothing to fit")
    header = _number(path, "vin", data["vin"]) if "vin" in data else None
    if len(volts) == len(entries):
        vin = float(np.median(np.array(volts)[en]))
        if not vin > 0:
            raise InputError(path, "entries[].input_volts", f"median {vin:g} V is not > 0")
    elif header is not None:
        vin = header
    else:
        raise InputError(path, "vin", "missing field (and no entries[].input_volts)")
    if not vin > 0:
        raise InputError(path, "vin", f"expected a supply voltage > 0 V, got {vin:g}")
    qd = np.array(speed)
    if np.isnan(qd).any():
        qd = np.gradient(np.array(cols["position"]), t)
    return ServoLog(
        path=path,
        mass_kg=_positive(path, "mass", data["mass"]),
        length_m=_positive(path, "length", data["length"]),
        kp_fw=kp,
        vin_V=vin,
        t_s=t,
        goal_rad=np.array(cols["goal_position"]),
        q_rad=np.array(cols["position"]),
        qd_rad_s=qd,
        enabled=en,
        trajectory=str(data.get("trajectory", "")),
        duty=decode_duty(np.array(load)) if len(load) == len(entries) else None,
        vin_header_V=header,
        bench=str(data.get("bench", "servo-bam-xl330")),
        simulated=bool(data.get("simulated", False)),
    )


def read_logs(paths: list[Path]) -> list[ServoLog]:
    """Every log of ``paths``, checked (``InputError`` naming the file and field)."""
    if not paths:
        raise InputError("--logs", None, "no log given")
    logs = [read_servo_log(p) for p in paths]
    pair = first_repeat([log.q_rad for log in logs])  # weighs double, judges itself held out
    if pair is not None:
        i, j = pair
        raise InputError(logs[j].path, None, f"the same recording as {logs[i].path}: given twice")
    return logs


def split_logs(logs: list[ServoLog], holdout_kp: float | None):
    """(train, holdout) logs: those at firmware gain ``holdout_kp`` are held out."""
    if holdout_kp is None:
        return logs, []
    train = [log for log in logs if log.kp_fw != holdout_kp]
    hold = [log for log in logs if log.kp_fw == holdout_kp]
    if not hold:
        gains = sorted({log.kp_fw for log in logs})
        raise InputError("--holdout-kp", None, f"no log at kp {holdout_kp:g} (logs: {gains})")
    if not train:
        raise InputError("--holdout-kp", None, f"every log is at kp {holdout_kp:g}: none left")
    return train, hold


def check_steps(logs: list[ServoLog]) -> None:
    dts = [log.dt_s for log in logs]
    if max(dts) - min(dts) > 1e-6:  # name both: which one is odd, the files cannot say
        other = logs[int(np.argmax(np.abs(np.array(dts) - dts[0])))]
        why = f"time step {logs[0].dt_s:g} s differs from {other.dt_s:g} s in {other.path}"
        raise InputError(logs[0].path, "timestamp", why)
