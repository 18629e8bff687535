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


def read_jsonl(path: str | Path) -> list[tuple[int, Any]]:
    """(line number, parsed object) of every non-blank line of a JSON-lines file; InputError
    naming the line for one that is not JSON, the file for one that cannot be read."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, None, f"cannot read file ({exc})") from exc
    out = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append((n, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise InputError(
                path, f"line {n}", f"not valid JSON ({exc.msg}, column {exc.colno})"
            ) from None
    return out
