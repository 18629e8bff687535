"""Files given where another kind belongs (``--reality``, ``--dr``), recognised by their shape:
what they are and how to use them, instead of a field-by-field refusal of a file that was never
meant to be one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

DFKI_KEYS = {"m1", "m2", "l1", "l2", "r1", "r2", "I1", "I2", "Ir", "gr", "b1", "b2", "cf1", "cf2"}
"""The plant parameters of the DFKI double pendulum's ``model_parameters.yml``."""


def misplaced_file(data: Any, path: str | Path, what: str) -> str | None:
    """Why ``data`` (read from ``path``, given as a ``what``) is another kind of file and what
    to do with it; None when it is not one this module knows."""
    if not isinstance(data, dict):
        return None
    params = data.get("params")
    if (
        isinstance(params, list)
        and params
        and all(isinstance(p, dict) and "value" in p and "nominal" not in p for p in params)
    ):  # sysid fit's <stem>.params.yaml: values with their uncertainty, not a prior
        path = Path(path)
        xml = path.with_name(path.name.removesuffix(".params.yaml") + ".xml")
        return (
            f"this is sysid fit's parameter summary, not a {what}: put `model: {xml}` in a "
            f"reality (or an --env-config) for the fitted model; the fit's "
            f"{path.with_name('dr.yaml')} randomizes around it (policy train --dr)"
        )
    if len(DFKI_KEYS & set(data)) >= 10:
        return (
            f"a DFKI model_parameters.yml (the double pendulum's identified plant), not a {what}: "
            "write a reality with `model: double-pendulum-dfki` and params (r1 = 0.3 m; another "
            "r1: see pendubot-dfki-1.0) m1_kg = m1, "
            "I1_com_kg_m2 = I1 - m1 r1^2, m2_kg = m2, com2_z_m = -r2, I2_com_kg_m2 = I2 - m2 r2^2, "
            "armature2_kg_m2 = Ir gr^2, damping1_Nm_s = b1, damping2_Nm_s = b2, "
            "frictionloss1_Nm = cf1, frictionloss2_Nm = cf2, as the shipped pendubot-dfki-1.0, "
            "-2.0 and -2.1 do (sim2real/learn/configs/realities/; --reality pendubot-dfki-2.0 "
            "runs one)"
        )
    return None
