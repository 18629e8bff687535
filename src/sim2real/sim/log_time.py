"""The time of a log's samples: one column times ``time_scale_s``, or a [seconds, nanoseconds]
pair (ROS 2 CSV exports split ``header.stamp`` into ``header.stamp.sec`` and
``header.stamp.nanosec``), found by itself when the log has no ``time`` column."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sim2real.core.errors import InputError
from sim2real.sim.mapping import LogMapping

SEC, NANOSEC = "sec", "nanosec"


def stamp_pairs(columns: list[str]) -> list[list[str]]:
    """Every [<prefix>sec, <prefix>nanosec] pair of ``columns``, in their order."""
    prefixes = [c.removesuffix(NANOSEC) for c in columns if c.endswith(NANOSEC)]
    return [[p + SEC, p + NANOSEC] for p in prefixes if p + SEC in columns]


def with_stamp_pair(mapping: LogMapping, columns: list[str], path: Path) -> LogMapping:
    """``mapping`` reading time from the log's one sec/nanosec pair when it maps the default
    ``time`` and the log has no such column; unchanged otherwise (a missing column is said
    later). Several pairs: an InputError asking which."""
    if mapping.time != "time" or "time" in columns:
        return mapping
    pairs = stamp_pairs(columns)
    if len(pairs) > 1:
        names = "; ".join(", ".join(p) for p in pairs)
        why = f"no column 'time' and several sec/nanosec pairs ({names}): give time: [sec, nanosec]"
        raise InputError(path, "time", why)
    return mapping.model_copy(update={"time": pairs[0]}) if pairs else mapping


def time_s(cols: dict[str, np.ndarray], mapping: LogMapping) -> np.ndarray:
    """(N,) float64 seconds: the time column x ``time_scale_s``, or a pair's seconds relative
    to their first finite value plus nanoseconds x 1e-9 (absolute seconds since 1970 would
    keep only ~0.2 microseconds once the nanoseconds are added)."""
    if isinstance(mapping.time, str):
        return cols[mapping.time] * mapping.time_scale_s
    sec, nanosec = (np.asarray(cols[c], dtype=np.float64) for c in mapping.time)
    finite = sec[np.isfinite(sec)]
    return (sec - (finite[0] if finite.size else 0.0)) + nanosec * 1e-9


def stamp_hint(mapping: LogMapping, columns: list[str]) -> str:
    """A hint for repeated times read from the seconds of a sec/nanosec pair, else ''."""
    pair = next((p for p in stamp_pairs(columns) if p[0] == mapping.time), None)
    return f" (seconds only: give time: [{', '.join(pair)}])" if pair else ""
