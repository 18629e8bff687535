"""The BAM authors' published fits (``published-params/m1..m6.json``) as our configs.

Their names map to ours (``kt`` -> ``kt_Nm_A``, ``alpha`` -> ``stribeck_alpha``, ...);
``q_offset`` (an angle offset of their bench) is not an actuator property and is returned apart.
Their XL330 firmware constants (error gain 0.002877 duty/rad/kp, max PWM 1) are our defaults.
"""

from __future__ import annotations

import json
from pathlib import Path

from sim2real.actuators.models import DCServoConfig
from sim2real.core.errors import InputError
from sim2real.sim.friction import BAM_MODELS

RENAME = {
    "kt": "kt_Nm_A",
    "R": "R_ohm",
    "armature": "armature_kgm2",
    "friction_base": "friction_base_Nm",
    "friction_viscous": "friction_viscous_Nms_rad",
    "friction_stribeck": "friction_stribeck_Nm",
    "dtheta_stribeck": "dtheta_stribeck_rad_s",
    "alpha": "stribeck_alpha",
}
IGNORED = {"model", "actuator", "q_offset"}


def load_published(path: str | Path) -> tuple[DCServoConfig, float]:
    """(config, q_offset_rad) from one BAM parameter JSON."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise InputError(path, None, f"cannot read: {err}") from None
    model = data.get("model")
    if model not in BAM_MODELS:
        raise InputError(path, "model", f"expected one of {sorted(BAM_MODELS)}, got {model!r}")
    params = {RENAME.get(k, k): float(v) for k, v in data.items() if k not in IGNORED}
    cfg = DCServoConfig(friction=BAM_MODELS[model], params=params)
    try:
        cfg.param_space()
    except InputError as err:
        raise InputError(path, err.field, err.message) from None
    return cfg, float(data.get("q_offset", 0.0))
