"""Reading a servo bench log (the BAM JSON format): constants of the bench and, per sample,
time, goal position (the command), measured position and whether torque was enabled.

Format: ``mass`` [kg], ``length`` [m], ``kp`` (firmware gain, one per file), ``vin`` [V]
(optional: else the mean of ``input_volts``), ``entries``: list of ``{timestamp [s],
goal_position [rad], position [rad], torque_enable}`` (``speed`` [rad/s] optional).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sim2real.core.errors import InputError


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

    @property
    def dt_s(self) -> float:
        return float(np.median(np.diff(self.t_s)))


def _number(path: Path, field: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value):
        raise InputError(path, field, f"expected a finite number, got {value!r}")
    return float(value)


def read_servo_log(path: str | Path) -> ServoLog:
    """Read and check one log; bad input raises ``InputError(path, field)``."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, None, "log not found")
    try:
        data = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise InputError(path, None, f"not valid JSON: {err}") from None
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
    kp = _number(path, "kp", kp)
    entries = data["entries"]
    if not isinstance(entries, list) or len(entries) < 2:
        raise InputError(path, "entries", "expected a list of at least 2 samples")
    cols: dict[str, list[float]] = {k: [] for k in ("timestamp", "goal_position", "position")}
    speed, enabled, volts = [], [], []
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
        enabled.append(bool(e["torque_enable"]))
        speed.append(float(e.get("speed", np.nan)))
        if "input_volts" in e:
            volts.append(float(e["input_volts"]))
    t = np.array(cols["timestamp"])
    bad = np.flatnonzero(np.diff(t) <= 0)
    if bad.size:
        i = int(bad[0]) + 1
        raise InputError(
            path, f"entries[{i}].timestamp", f"timestamps not increasing ({t[i - 1]} then {t[i]})"
        )
    en = np.array(enabled)
    if not en.any():
        raise InputError(path, "torque_enable", "torque disabled in every sample: nothing to fit")
    if "vin" in data:
        vin = _number(path, "vin", data["vin"])
    elif volts:
        vin = float(np.mean(volts))
    else:
        raise InputError(path, "vin", "missing field (and no entries[].input_volts)")
    qd = np.array(speed)
    if np.isnan(qd).any():
        qd = np.gradient(np.array(cols["position"]), t)
    return ServoLog(
        path=path,
        mass_kg=_number(path, "mass", data["mass"]),
        length_m=_number(path, "length", data["length"]),
        kp_fw=kp,
        vin_V=vin,
        t_s=t,
        goal_rad=np.array(cols["goal_position"]),
        q_rad=np.array(cols["position"]),
        qd_rad_s=qd,
        enabled=en,
        trajectory=str(data.get("trajectory", "")),
    )
