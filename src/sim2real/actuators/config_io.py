"""Writing an actuator configuration as YAML (any kind: physical models and networks)."""

from __future__ import annotations

from pathlib import Path

import yaml

from sim2real.core.atomic import write_text_atomic


def save_actuator(cfg, path: str | Path, extra: dict | None = None) -> None:
    """Write ``{actuator: cfg, **extra}`` as YAML, atomically."""
    doc = {"actuator": cfg.model_dump(mode="json"), **(extra or {})}
    write_text_atomic(path, yaml.safe_dump(doc, sort_keys=False))
