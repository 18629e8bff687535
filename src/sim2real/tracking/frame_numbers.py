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


_TIMESTAMP = re.compile(r"\d+\.\d+")
PAIRING_S = 0.02
"""Colour and depth frames named by their timestamps pair when this close (TUM's
``associate.py`` default)."""


def timestamps(paths: list[Path]) -> list[float] | None:
    """Seconds of names that are decimal timestamps (TUM RGB-D: ``1305031102.175304.png``),
    else None: their last digits are microseconds, no frame number."""
    if paths and all(_TIMESTAMP.fullmatch(p.stem) for p in paths):
        return [float(p.stem) for p in paths]
    return None


def pair_by_time(depth: list[float], color: list[float]) -> list[int | None]:
    """For each depth stamp the index of its colour image: nearest first, each image once,
    within ``PAIRING_S`` (None where none is)."""
    import numpy as np

    d, c = np.asarray(depth), np.asarray(color)
    gaps = np.abs(d[:, None] - c[None, :])
    pairs: list[int | None] = [None] * len(d)
    used: set[int] = set()
    for flat in np.argsort(gaps, axis=None):
        i, j = divmod(int(flat), len(c))
        if gaps[i, j] > PAIRING_S:
            break
        if pairs[i] is None and j not in used:
            pairs[i] = j
            used.add(j)
    return pairs


def frame_number(path: Path) -> int | None:
    found = re.findall(r"\d+", path.stem)
    return int(found[-1]) if found else None


def numbered(paths: list[Path]) -> tuple[list[int], list[Path], bool]:
    """(ids, paths) sorted by the number in each name, and whether the names gave the ids
    (else 0, 1, ... in the given order, or in time order for timestamp names)."""
    stamps = timestamps(paths)
    if stamps is not None:
        order = sorted(range(len(paths)), key=lambda k: stamps[k])
        return list(range(len(paths))), [paths[k] for k in order], False
    numbers = [frame_number(p) for p in paths]
    if all(n is not None for n in numbers) and len(set(numbers)) == len(numbers):
        order = sorted(range(len(paths)), key=lambda k: numbers[k])
        return [numbers[k] for k in order], [paths[k] for k in order], True
    return list(range(len(paths))), list(paths), False
