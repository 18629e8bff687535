"""Reading JSON files with errors that name the file and the line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sim2real.core.errors import InputError


def read_json(path: str | Path) -> Any:
    """The parsed content of a JSON file; InputError for an unreadable or malformed one."""
    path = Path(path)
    try:
        return json.loads(path.read_text())
    except OSError as exc:
        raise InputError(path, None, f"cannot read file ({exc.strerror})") from exc
    except json.JSONDecodeError as exc:
        raise InputError(path, None, f"not valid JSON ({exc.msg}, line {exc.lineno})") from exc
