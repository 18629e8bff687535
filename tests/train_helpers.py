"""Small training fixtures shared by the learning tests (``tests/`` is on pytest's
``pythonpath``)."""

from __future__ import annotations

import yaml


def mass_friction_dr(path, friction: list[float]) -> str:
    """A pendulum randomization YAML at ``path``: mass 0.5-0.6 kg, Coulomb friction over
    ``friction`` [N m], both absolute, per episode; its path."""
    terms = [
        {"name": "mass", "target": "mass_kg", "mode": "reset", "distribution": "uniform",
         "range": [0.5, 0.6], "operation": "absolute"},
        {"name": "friction", "target": "frictionloss_Nm", "mode": "reset",
         "distribution": "uniform", "range": friction, "operation": "absolute"},
    ]  # fmt: skip
    path.write_text(yaml.safe_dump({"terms": terms}))
    return str(path)
