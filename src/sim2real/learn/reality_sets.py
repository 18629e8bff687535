"""Which shipped worlds judge a task, and for what: ``configs/<slug>.realities.yaml`` lists
the *validation* realities (they choose among training seeds) and the *evaluation* ones (they
report transfer). Kept apart on purpose: a seed chosen on the worlds that report it would
report its own selection.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import Field, ValidationError, model_validator

from sim2real.core.errors import InputError
from sim2real.core.strict import StrictModel, validation_error
from sim2real.core.yaml_io import read_yaml

CONFIG_DIR = Path(__file__).parent / "configs"


class RealitySets(StrictModel):
    """A task's validation and evaluation worlds (shipped names or YAML paths)."""

    validation: list[str] = Field(
        default_factory=list, description="worlds that choose among training seeds"
    )
    evaluation: list[str] = Field(
        default_factory=list, description="worlds that report transfer (never used to choose)"
    )

    @model_validator(mode="after")
    def _disjoint(self) -> RealitySets:
        both = sorted(set(self.validation) & set(self.evaluation))
        if both:
            raise ValueError(f"{', '.join(both)}: in both validation and evaluation")
        return self


def env_slug(env_id: str) -> str:
    """'sim2real/PendulumSwingup-v0' -> 'pendulum_swingup' (the name of its config files)."""
    name = env_id.split("/")[-1]
    name = re.sub(r"-v\d+$", "", name)
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def reality_sets_path(env_id: str) -> Path:
    return CONFIG_DIR / f"{env_slug(env_id)}.realities.yaml"


def reality_sets(env_id: str) -> RealitySets:
    """The task's shipped sets (both empty when it ships none)."""
    path = reality_sets_path(env_id)
    if not path.is_file():
        return RealitySets()
    return read_reality_sets(path)


def read_reality_sets(path: str | Path) -> RealitySets:
    path = Path(path)
    data = read_yaml(path, "reality sets") or {}
    if not isinstance(data, dict):
        raise InputError(path, None, "expected a mapping with 'validation' and 'evaluation'")
    try:
        return RealitySets.model_validate(data)
    except ValidationError as err:
        raise validation_error(err, path) from None
