"""Frame numbers from file names, and their ranges for messages."""

from __future__ import annotations

import re
from pathlib import Path


def ranges(ids: list[int], limit: int = 10) -> str:
    """'3, 5-7, 12' for [3, 5, 6, 7, 12]; at most ``limit`` groups, then the count."""
    groups: list[str] = []
    start = prev = ids[0]
    for i in [*ids[1:], None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        groups.append(str(start) if start == prev else f"{start}-{prev}")
        if i is not None:
            start = prev = i
    text = ", ".join(groups[:limit])
    return text + (f", ... ({len(ids)} in all)" if len(groups) > limit else "")


def frame_number(path: Path) -> int | None:
    found = re.findall(r"\d+", path.stem)
    return int(found[-1]) if found else None


def numbered(paths: list[Path]) -> tuple[list[int], list[Path], bool]:
    """(ids, paths) sorted by the number in each name, and whether the names gave the ids
    (else 0, 1, ... in the given order)."""
    numbers = [frame_number(p) for p in paths]
    if all(n is not None for n in numbers) and len(set(numbers)) == len(numbers):
        order = sorted(range(len(paths)), key=lambda k: numbers[k])
        return [numbers[k] for k in order], [paths[k] for k in order], True
    return list(range(len(paths))), list(paths), False
