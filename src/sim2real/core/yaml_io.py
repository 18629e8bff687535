"""Reading YAML files, with errors that name the file (validation: ``core.strict``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

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


def read_yaml_mapping(path: str | Path, what: str = "file") -> dict[str, Any]:
    """The mapping at the top of a YAML file; InputError for anything else (or an empty file)."""
    data = read_yaml(path, what)
    if not isinstance(data, dict):
        kind = "an empty file" if data is None else type(data).__name__
        raise InputError(path, None, f"expected a YAML mapping at the top level, got {kind}")
    return data
