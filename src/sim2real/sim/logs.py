"""Robot logs read reliably: CSV or JSON through a :class:`LogMapping`, validated at the
boundary (missing columns, NaN rows, non-monotonic or duplicated time, gaps, jitter, units
that look like degrees) and resampled onto a uniform grid (the model timestep)."""

from __future__ import annotations

import csv
import difflib
import json
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from sim2real.core.errors import InputError
from sim2real.sim.log_time import stamp_hint, time_s, with_stamp_pair
from sim2real.sim.mapping import LogMapping

DEG_PER_RAD = 180.0 / np.pi
MAX_JOINT_SPEED_RAD_S = 100.0
"""Faster than a robot joint turns (955 rpm): a log's positions and velocities in degrees."""
GAP_STEPS = 5
"""An interval over this many median steps is a gap no segment crosses (``max_gap_s`` default)."""
MAX_MEDIAN_STEP_S = 0.2
"""A log whose samples lie further apart than this (5 Hz) is no robot log: another time unit."""


@dataclass
class RobotLog:
    """A validated log. ``time_s`` (N,) increasing [s]; ``qpos`` / ``qvel`` (N, J) per joint in
    ``joints`` order [rad, rad/s]; ``ctrl`` (N, A) per actuator in ``actuators`` order;
    ``valid`` (N,) False on samples inside gaps; ``notes``: what validation found and did."""

    source: str
    time_s: np.ndarray
    qpos: np.ndarray
    qvel: np.ndarray
    ctrl: np.ndarray
    joints: list[str]
    actuators: list[str]
    valid: np.ndarray
    notes: list[str] = field(default_factory=list)
    meta: dict = field(default_factory=dict)
    dt_s: float | None = None
    """Uniform sample interval after :func:`resample_log`, else None."""

    @property
    def duration_s(self) -> float:
        return float(self.time_s[-1] - self.time_s[0])


def _read_csv(path: Path) -> tuple[dict[str, np.ndarray], dict]:
    try:
        with path.open(newline="", encoding="utf-8-sig") as f:  # -sig: a BOM is not a name
            lines = f.read().splitlines()
        # a semicolon or tab separated file (spreadsheet exports in many locales)
        first = next((line for line in lines if not line.lstrip().startswith("#")), "")
        delimiter = next((d for d in ";\t" if "," not in first and d in first), ",")
        rows = _drop_comment_lines(list(csv.reader(lines, delimiter=delimiter)))
    except UnicodeDecodeError as err:
        raise InputError(
            path, None, f"not a text (CSV) file: {err.reason} at byte {err.start}"
        ) from None
    except csv.Error as err:
        raise InputError(path, None, f"not valid CSV: {err}") from None
    if not rows:
        raise InputError(path, None, "empty file")
    header = [h.strip() for h in rows[0]]
    body = rows[1:]
    cols: dict[str, np.ndarray] = {}
    for k, name in enumerate(header):
        cols[name] = np.array([_num(r[k]) if k < len(r) else np.nan for r in body], dtype=float)
    twice = sorted({name for name in header if header.count(name) > 1})
    return cols, {"columns_given_twice": twice} if twice else {}


def _drop_comment_lines(rows: list[list[str]]) -> list[list[str]]:
    """Leading ``# ...`` lines (units, notes) above the header go; a ``#``-line right above the
    numbers is the header itself."""
    while len(rows) > 1 and rows[0] and rows[0][0].lstrip().startswith("#"):
        if rows[1] and all(np.isfinite(_num(cell)) for cell in rows[1]):
            break
        rows = rows[1:]
    return rows


def _num(value: object) -> float:
    if isinstance(value, bool):
        return float(value)
    if value is None:
        return np.nan
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("true", "false"):
            return float(text == "true")
        try:
            return float(text)
        except ValueError:
            return np.nan
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return np.nan


def _read_json(path: Path, records_key: str | None) -> tuple[dict[str, np.ndarray], dict]:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError as err:
        raise InputError(
            path, None, f"not a text (JSON) file: {err.reason} at byte {err.start}"
        ) from None
    except json.JSONDecodeError as err:
        raise InputError(path, None, f"not valid JSON: {err}") from None
    meta = {}
    if isinstance(data, dict):
        meta = {k: v for k, v in data.items() if isinstance(v, str | int | float | bool)}
        key = records_key or next((k for k, v in data.items() if isinstance(v, list)), None)
        if key is None or key not in data:
            raise InputError(path, records_key or "records", "no list of samples found")
        data = data[key]
    if isinstance(data, dict):  # columns: {name: [values]}
        return {k: np.array([_num(v) for v in vals]) for k, vals in data.items()}, meta
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise InputError(path, records_key, "expected a list of per-sample records")
    names = list(dict.fromkeys(k for r in data for k in r))
    return {n: np.array([_num(r.get(n)) for r in data]) for n in names}, meta


def read_log(path: str | Path, mapping: LogMapping) -> RobotLog:
    """Read, check and clean a log (not resampled). Raises ``InputError`` for a missing file or
    column, too few usable rows, or disordered time under ``time_order: strict``."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, None, "log not found")
    if path.suffix.lower() == ".json":
        cols, meta = _read_json(path, mapping.records)
    else:
        cols, meta = _read_csv(path)
    stamped = with_stamp_pair(mapping, list(cols), path)
    notes: list[str] = []
    if stamped is not mapping:
        notes.append(f"time = {stamped.time[0]} + {stamped.time[1]} x 1e-9 (no 'time' column)")
        mapping = stamped
    for column, where in mapping.columns().items():
        if column not in cols:
            close = difflib.get_close_matches(column, cols, n=3, cutoff=0.5)
            hint = f"; close matches: {', '.join(close)}" if close else ""
            raise InputError(
                path,
                column,
                f"column mapped as {where} does not exist{hint} "
                f"(columns: {', '.join(list(cols)[:20])})",
            )
    twice = set(meta.pop("columns_given_twice", ())) & set(mapping.columns())
    if twice:  # which one is meant? (a CSV reader would silently take the last)
        name = sorted(twice)[0]
        raise InputError(path, name, "the header names this column twice: rename one")
    t = time_s(cols, mapping)
    time_field = ", ".join(mapping.time_columns())
    unit = 1.0 / DEG_PER_RAD if mapping.position_unit == "deg" else 1.0
    joints = list(mapping.joints)
    qpos = np.stack([cols[c.position] * c.sign * unit for c in mapping.joints.values()], 1)
    has_vel = [c.velocity is not None for c in mapping.joints.values()]
    qvel = np.stack(
        [
            cols[c.velocity] * c.sign * unit if c.velocity else np.zeros_like(t)
            for c in mapping.joints.values()
        ],
        1,
    )
    acts = list(mapping.actuators)
    ctrl = np.stack(
        [
            cols[a.column] * a.scale * (cols[a.multiply_by] if a.multiply_by else 1.0)
            for a in mapping.actuators.values()
        ]
        or [np.zeros_like(t)],
        1,
    )[:, : len(acts)]
    for k, a in enumerate(mapping.actuators.values()):
        if a.despike:
            ctrl[:, k], n_spikes = despike(ctrl[:, k])
            notes.append(f"{n_spikes} spikes of {a.column} replaced by the local median (Hampel)")
    usable = np.ones(t.size, dtype=bool)
    if mapping.valid_if:
        usable = np.nan_to_num(cols[mapping.valid_if]) != 0
        notes.append(f"{int((~usable).sum())} samples with {mapping.valid_if} = 0 excluded")
    # NaN rows
    good = np.isfinite(t) & np.isfinite(qpos).all(1) & np.isfinite(qvel).all(1)
    good &= np.isfinite(ctrl).all(1)
    if not good.all():
        bad = np.flatnonzero(~good)
        if mapping.bad_rows == "error":
            row = bad[0]
            culprit = next(
                (c for c in mapping.columns() if not np.isfinite(cols[c][row])), "a product"
            )
            raise InputError(
                path,
                f"row {row + 1}",
                f"{bad.size} rows with NaN or a non-number in a mapped column, the first in "
                f"{culprit} (bad_rows: drop in the mapping drops them)",
            )
        notes.append(f"dropped {bad.size} rows with NaN or non-numbers (first: row {bad[0] + 1})")
        t, qpos, qvel, ctrl = t[good], qpos[good], qvel[good], ctrl[good]
        usable = usable[good]
    if t.size < 10:
        raise InputError(path, time_field, f"only {t.size} usable rows (need at least 10)")
    # time order
    dt = np.diff(t)
    n_dup, n_back = int((dt == 0).sum()), int((dt < 0).sum())
    if n_dup or n_back:
        first = int(np.flatnonzero(dt <= 0)[0]) + 2
        what = f"{n_dup} duplicated and {n_back} decreasing timestamps (first at row {first})"
        if mapping.time_order == "strict":
            hint = stamp_hint(mapping, list(cols))
            raise InputError(path, time_field, f"time is not strictly increasing: {what}{hint}")
        order = np.argsort(t, kind="stable")
        t, qpos, qvel, ctrl = t[order], qpos[order], qvel[order], ctrl[order]
        usable = usable[order]
        keep = np.concatenate([[True], np.diff(t) > 0])
        t, qpos, qvel, ctrl = t[keep], qpos[keep], qvel[keep], ctrl[keep]
        usable = usable[keep]
        notes.append(f"{what}: sorted by time, kept the first of each duplicated time")
    t = t - t[0]
    dt = np.diff(t)
    med = float(np.median(dt))
    if med > MAX_MEDIAN_STEP_S:
        why = (
            f"median step {med:g} s: a robot log samples faster than {1 / MAX_MEDIAN_STEP_S:g} Hz "
            "(time in milliseconds? time_scale_s: 0.001 in the mapping)"
        )
        raise InputError(path, time_field, why)
    jitter = float(np.std(dt) / med)
    notes.append(
        f"{t.size} samples over {t[-1]:.3f} s, median interval {1e3 * med:.2f} ms, "
        f"jitter {100 * jitter:.0f} % (std / median)"
    )
    max_gap = mapping.max_gap_s or GAP_STEPS * med
    gaps = np.flatnonzero(dt > max_gap)
    valid = usable
    for g in gaps:
        notes.append(f"gap of {dt[g]:.3f} s at t = {t[g]:.3f} s: no segment crosses it")
    if not all(has_vel):
        for j in np.flatnonzero(~np.asarray(has_vel)):
            qvel[:, j] = np.gradient(qpos[:, j], t)
        notes.append("velocity differentiated from position where no velocity column is mapped")
    _check_units(path, mapping, joints, t, qpos, qvel, has_vel, notes)
    log = RobotLog(str(path), t, qpos, qvel, ctrl, joints, acts, valid, notes, meta)
    log.meta["gap_starts_s"] = [float(t[g]) for g in gaps]
    log.meta["gap_ends_s"] = [float(t[g + 1]) for g in gaps]
    return log


def despike(x: np.ndarray, half_window: int = 7, n_sigma: float = 4.0) -> tuple[np.ndarray, int]:
    """Hampel filter on (N,) samples: values more than ``n_sigma`` robust sigmas (1.4826 MAD)
    from the median of the ``2 half_window + 1`` samples around, and whose second difference is
    more than ``n_sigma`` robust sigmas of all second differences (so the extremes of a smooth
    signal are kept), are replaced by that median. NaN stay NaN. Returns the cleaned copy and
    the number replaced."""
    from scipy.ndimage import median_filter

    finite = np.isfinite(x)
    filled = np.where(finite, x, np.interp(np.arange(x.size), np.flatnonzero(finite), x[finite]))
    size = 2 * half_window + 1
    med = median_filter(filled, size=size, mode="nearest")
    mad = 1.4826 * median_filter(np.abs(filled - med), size=size, mode="nearest")
    bad = finite & (np.abs(filled - med) > n_sigma * np.maximum(mad, 1e-9))
    second = np.abs(filled - 0.5 * (np.roll(filled, 1) + np.roll(filled, -1)))
    second[[0, -1]] = 0.0
    bad &= second > n_sigma * 1.4826 * max(float(np.median(second)), 1e-12)
    return np.where(bad, med, x), int(bad.sum())


def _check_units(path, mapping, joints, t, qpos, qvel, has_vel, notes) -> None:
    """Warn when a position (or velocity) in radians looks like degrees."""
    for j, name in enumerate(joints):
        q, v = qpos[:, j], qvel[:, j]
        msg = None
        if has_vel[j] and np.ptp(q) > 0.05:
            dq = np.gradient(q, t)
            moving = np.abs(v) > 0.1 * np.abs(v).max()
            if moving.sum() > 10:
                ratio = float(np.median(dq[moving] / v[moving]))
                if 40 < ratio < 80:
                    msg = f"position of {name} looks like degrees (d/dt position = {ratio:.0f} x velocity)"
                elif 1 / 80 < ratio < 1 / 40:
                    msg = f"velocity of {name} looks like degrees/s (= {1 / ratio:.0f} x d/dt position)"
        if msg is None and np.abs(q).max() > 2 * np.pi * 20:
            msg = f"position of {name} reaches {np.abs(q).max():.0f}: looks like degrees, not rad"
        if msg is None and np.abs(v).max() > MAX_JOINT_SPEED_RAD_S:  # both in degrees
            msg = (f"velocity of {name} reaches {np.abs(v).max():.0f} rad/s (position and velocity "
                   "both in degrees?)")  # fmt: skip
        if msg and mapping.position_unit == "rad":
            notes.append(f"warning: {msg}; set position_unit: deg in the mapping if so")
            warnings.warn(
                f"{path}: {msg}; set position_unit: deg in the mapping if so", stacklevel=3
            )


def resample_log(log: RobotLog, dt_s: float, command_resample: str = "linear") -> RobotLog:
    """Resample onto t = 0, dt, 2 dt... by linear interpolation of positions and velocities and
    linear (or zero-order-hold) interpolation of the commands; samples less than one original
    interval from a gap's edges are marked invalid."""
    grid = np.arange(0.0, log.time_s[-1] + 1e-12, dt_s)

    def lin(a: np.ndarray) -> np.ndarray:
        return np.stack([np.interp(grid, log.time_s, a[:, k]) for k in range(a.shape[1])], 1)

    if command_resample == "zoh":
        idx = np.clip(np.searchsorted(log.time_s, grid, side="right") - 1, 0, log.time_s.size - 1)
        ctrl = log.ctrl[idx]
    else:
        ctrl = lin(log.ctrl)
    valid = np.interp(grid, log.time_s, log.valid.astype(float)) > 0.999
    for a, b in zip(log.meta.get("gap_starts_s", []), log.meta.get("gap_ends_s", []), strict=True):
        valid &= ~((grid > a) & (grid < b))
    note = (
        f"resampled to {1e3 * dt_s:.2f} ms: positions and velocities linearly interpolated, "
        f"commands {'held (zero-order)' if command_resample == 'zoh' else 'linearly interpolated'}"
    )
    return replace(
        log,
        time_s=grid,
        qpos=lin(log.qpos),
        qvel=lin(log.qvel),
        ctrl=ctrl,
        valid=valid,
        notes=[*log.notes, note],
        dt_s=dt_s,
    )


REPEAT_SHIFT = 50
"""Samples one log may be cut at either end and still be found a copy of another."""


def first_repeat(positions: list[np.ndarray]) -> tuple[int, int] | None:
    """(i, j), i < j, of the first two logs whose positions are the same samples (one of them
    cut by up to ``REPEAT_SHIFT`` samples at either end: a copy with a sample dropped was
    judged as a hold-out of its own fit), else None."""
    for j, q in enumerate(positions):
        for i, other in enumerate(positions[:j]):
            if _same_samples(q, other) or _same_samples(other, q):
                return i, j
    return None


def _same_samples(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``b`` is ``a`` with up to ``REPEAT_SHIFT`` samples cut at either end."""
    if len(b) > len(a) or len(a) - len(b) > 2 * REPEAT_SHIFT or len(b) < 2:
        return False
    for k in range(min(REPEAT_SHIFT, len(a) - len(b)) + 1):
        if np.allclose(a[k : k + len(b)], b, rtol=0, atol=1e-9):
            return True
    return False


def refuse_repeated_logs(logs: list[RobotLog], held_out: int = 0) -> None:
    """InputError when one recording is given twice (the same samples on the model's grid:
    a copy, a time-shifted or resampled one): fitted twice it weighs double, and as a hold-out
    of its own fit its error is a training error. ``held_out``: how many of the last logs are
    the hold-out, for the message."""
    pair = first_repeat([log.qpos for log in logs])
    if pair is not None:
        i, j = pair
        role = "held out and fitted" if i < len(logs) - held_out <= j else "given twice"
        raise InputError(logs[j].source, None, f"the same recording as {logs[i].source}: {role}")
