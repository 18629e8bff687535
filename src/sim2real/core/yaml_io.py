"""Reading YAML files and validating them with pydantic, with errors that name the file and
the field (the one place for what every config loader needs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from sim2real.core.errors import InputError


def read_yaml(path: str | Path, what: str = "file") -> Any:
    """The parsed content of a YAML file; InputError when it is missing ("<what> not found"),
    unreadable or not valid YAML."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, None, f"{what} not found")
    try:
        return yaml.safe_load(path.read_text())
    except OSError as exc:
        raise InputError(path, None, f"cannot read {what} ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise InputError(path, None, f"not valid YAML: {exc}") from None


def validation_error(err: ValidationError, source: str | Path | None) -> InputError:
    """The first problem pydantic found, as an InputError naming its dotted field path."""
    first = err.errors()[0]
    field = ".".join(str(x) for x in first["loc"]) or None
    return InputError(source, field, first["msg"].removeprefix("Value error, "))
