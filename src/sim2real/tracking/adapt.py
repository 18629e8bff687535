"""Trajectory adaptation: re-express a taught robot trajectory for where the part really is.

Frames and conventions (all poses are 4×4 rigid transforms, ``T_a_b`` maps b-coordinates
into frame a; metres):

- ``T_base_cam``: the hand-eye calibration, the camera's pose in the robot base frame.
- ``T_cam_part_taught``: the part's pose **in the camera frame** when the trajectory was
  taught (same convention as the tracker's ``T_cam_part``, OpenCV camera axes).
- ``T_cam_part_observed``: the part's pose in the camera frame now (from the tracker).
- Waypoints ``W = T_base_tool``: taught in the robot base frame.

Each waypoint keeps its pose relative to the part::

    T_base_part_taught = T_base_cam @ T_cam_part_taught
    T_base_part_obs    = T_base_cam @ T_cam_part_observed
    W_adapted          = T_base_part_obs @ inv(T_base_part_taught) @ W

so ``inv(T_base_part_obs) @ W_adapted == inv(T_base_part_taught) @ W``. A robot must never
move on a lost track: ``observed_pose_from_jsonl`` raises ``AdaptRefused`` when the
tracker's last record is not ``tracking`` or its score is below the threshold.

Trajectory CSV: a header line, then one waypoint per row. The columns ``x y z qx qy qz qw``
(position in metres, unit quaternion scalar-last, robot base frame) are found by name, in any
order; any other column is passed through verbatim.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from sim2real.core.atomic import atomic_path
from sim2real.core.errors import InputError
from sim2real.core.pose import check_metres, check_rigid, invert_pose, make_pose, quat_to_matrix
from sim2real.core.pose_records import PoseRecord, last_pose_record

POSE_COLUMNS = ("x", "y", "z", "qx", "qy", "qz", "qw")
"""Required trajectory columns: position [m] and unit quaternion (scalar last), base frame."""

QUAT_NORM_TOL = 1e-3
"""A waypoint quaternion whose norm differs from 1 by more than this is rejected, not fixed."""


class AdaptRefused(Exception):  # noqa: N818 (a refusal, not an error)
    """The observed pose must not be used to move a robot (lost track, low score).

    Not an ``InputError``: the input is well formed, the answer is "do not move". The CLI
    prints ``refused: <reason>`` and exits with code 3.
    """

    def __init__(self, reason: str):
        self.reason = " ".join(reason.split())
        super().__init__(self.reason)


@dataclass(frozen=True)
class Trajectory:
    """Waypoints in the robot base frame, with the CSV's other columns kept verbatim.

    ``columns``: header names in file order. ``cells``: the rows as read, (N, len(columns))
    strings; the pose columns in it are superseded by ``position_m`` and ``quat_xyzw``.
    ``position_m``: (N, 3) float64, metres, base frame. ``quat_xyzw``: (N, 4) float64 unit
    quaternions, scalar last.
    """

    columns: tuple[str, ...]
    cells: tuple[tuple[str, ...], ...]
    position_m: np.ndarray
    quat_xyzw: np.ndarray

    def __len__(self) -> int:
        return len(self.position_m)

    def poses(self) -> np.ndarray:
        """(N, 4, 4) float64 ``T_base_waypoint``."""
        return np.stack(
            [
                make_pose(quat_to_matrix(*q), p)
                for p, q in zip(self.position_m, self.quat_xyzw, strict=True)
            ]
        ).reshape(-1, 4, 4)


def _column_index(header: list[str], path: Path) -> dict[str, int]:
    names = [h.strip().lower() for h in header]
    index: dict[str, int] = {}
    for name in POSE_COLUMNS:
        hits = [i for i, n in enumerate(names) if n == name]
        if len(hits) > 1:
            raise InputError(path, name, f"column '{name}' appears {len(hits)} times in the header")
        if hits:
            index[name] = hits[0]
    missing = [n for n in POSE_COLUMNS if n not in index]
    if missing:
        raise InputError(
            path,
            "header",
            f"missing column(s) {', '.join(missing)}: a trajectory needs x y z qx qy qz qw "
            f"(metres, unit quaternion scalar-last); found {', '.join(h.strip() for h in header)}",
        )
    return index


def read_trajectory(path: str | Path) -> Trajectory:
    """Read a trajectory CSV (see the module doc). Raises ``InputError`` naming the file, the
    row (1 = first row after the header) and the column for: an unreadable or empty file,
    missing pose columns, a row with the wrong number of cells, a non-numeric or non-finite
    pose value, a quaternion whose norm is not 1 within ``QUAT_NORM_TOL``."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, None, f"cannot read trajectory ({exc})") from exc
    rows = [r for r in csv.reader(text.splitlines()) if any(c.strip() for c in r)]
    if not rows:
        raise InputError(path, None, "empty file: expected a header with x y z qx qy qz qw")
    header, body = rows[0], rows[1:]
    index = _column_index(header, path)
    if not body:
        raise InputError(path, None, "no waypoints after the header")
    values = np.empty((len(body), len(POSE_COLUMNS)))
    for r, row in enumerate(body, start=1):
        if len(row) != len(header):
            raise InputError(
                path, f"row {r}", f"{len(row)} cells, the header has {len(header)} columns"
            )
        for c, name in enumerate(POSE_COLUMNS):
            cell = row[index[name]].strip()
            try:
                v = float(cell)
            except ValueError:
                raise InputError(path, f"row {r}, {name}", f"not a number: {cell!r}") from None
            if not math.isfinite(v):
                raise InputError(path, f"row {r}, {name}", f"value is not finite: {cell!r}")
            values[r - 1, c] = v
        norm = float(np.linalg.norm(values[r - 1, 3:]))
        if abs(norm - 1.0) > QUAT_NORM_TOL:
            raise InputError(
                path,
                f"row {r}, qx qy qz qw",
                f"quaternion has norm {norm:.6g}, must be 1 within {QUAT_NORM_TOL:g} "
                "(not normalised silently: check the column order and units)",
            )
    quat = values[:, 3:] / np.linalg.norm(values[:, 3:], axis=1, keepdims=True)
    return Trajectory(
        columns=tuple(header),
        cells=tuple(tuple(row) for row in body),
        position_m=values[:, :3].copy(),
        quat_xyzw=quat,
    )


def _quat_near(R: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """(4,) unit quaternion (scalar last) of R, with the sign that is closer to ``reference``
    (q and -q are the same rotation; keeping the input's hemisphere keeps continuity)."""
    from scipy.spatial.transform import Rotation

    q = Rotation.from_matrix(R).as_quat()
    q /= np.linalg.norm(q)
    return -q if float(np.dot(q, reference)) < 0 else q


def part_displacement(
    T_cam_part_taught: np.ndarray, T_cam_part_observed: np.ndarray
) -> tuple[float, float]:
    """(translation in metres, rotation in degrees) of the part from its taught to its
    observed pose: the distance between the two origins and the angle of the relative
    rotation. Both frames are the camera's, so the figures hold in any fixed frame."""
    dt = float(np.linalg.norm(T_cam_part_observed[:3, 3] - T_cam_part_taught[:3, 3]))
    R = T_cam_part_observed[:3, :3] @ T_cam_part_taught[:3, :3].T
    cos = float(np.clip((np.trace(R) - 1.0) / 2.0, -1.0, 1.0))
    return dt, math.degrees(math.acos(cos))


def adapt_trajectory(
    traj: Trajectory,
    T_base_cam: np.ndarray,
    T_cam_part_taught: np.ndarray,
    T_cam_part_observed: np.ndarray,
) -> Trajectory:
    """Re-express waypoints taught for the part at ``T_cam_part_taught`` for the part at
    ``T_cam_part_observed``.

    ``T_base_cam``: (4, 4) camera pose in the robot base frame (hand-eye calibration).
    ``T_cam_part_taught`` / ``T_cam_part_observed``: (4, 4) part poses **in the camera frame**
    (the tracker's ``T_cam_part``), at teaching time and now. Each waypoint ``W`` (base
    frame) becomes ``T_base_cam @ T_cam_part_observed @ inv(T_cam_part_taught) @
    inv(T_base_cam) @ W``, i.e. it keeps its pose relative to the part. Output quaternions
    are unit, with the sign closest to the input waypoint's (same hemisphere). Extra columns
    are kept verbatim. Raises ``InputError`` for a pose that is not rigid.
    """
    T_base_cam = check_rigid(T_base_cam, None, "T_base_cam")
    taught = check_rigid(T_cam_part_taught, None, "T_cam_part_taught")
    observed = check_rigid(T_cam_part_observed, None, "T_cam_part_observed")
    T_base_part_taught = T_base_cam @ taught
    T_base_part_obs = T_base_cam @ observed
    delta = T_base_part_obs @ invert_pose(T_base_part_taught)  # base frame -> base frame
    W = traj.poses()
    adapted = delta[None] @ W
    quat = np.stack(
        [_quat_near(a[:3, :3], q) for a, q in zip(adapted, traj.quat_xyzw, strict=True)]
    )
    return replace(traj, position_m=adapted[:, :3, 3].copy(), quat_xyzw=quat.reshape(-1, 4))


def observed_pose_from_jsonl(path: str | Path, min_score: float) -> tuple[np.ndarray, PoseRecord]:
    """``(T_cam_part, record)`` of the LAST record of a tracker's ``poses.jsonl``
    (``core.pose_records``).

    Raises ``AdaptRefused`` when that record's status is not ``tracking`` (``lost`` and
    ``recovered`` are refused) or its score is below ``min_score``. Raises ``InputError``
    naming the line for a malformed record or one without a score. Only the last non-blank
    line is read: a half-written line from a live tracker is an error, never a pose.
    """
    if not math.isfinite(min_score):
        raise InputError(None, "min_score", f"must be a finite number, got {min_score!r}")
    record, line = last_pose_record(path)
    if record.status != "tracking":
        raise AdaptRefused(
            f"the last frame ({record.frame}) of {path} has status '{record.status}', "
            "not 'tracking'"
        )
    if record.score is None:
        raise InputError(path, f"line {line}, score", "missing: needed to decide whether to adapt")
    if record.score < min_score:
        raise AdaptRefused(
            f"the last frame ({record.frame}) of {path} has score {record.score:.3g}, below the "
            f"threshold {min_score:g}"
        )
    return check_metres(record.T_cam_part, path, f"line {line}, T_cam_part"), record


def _format_float(v: float) -> str:
    return repr(float(v))  # shortest text that reads back to the same float


def write_trajectory(traj: Trajectory, path: str | Path) -> None:
    """Write ``traj`` as CSV, atomically, with the input's header and column order; pose
    columns with full float precision, other cells exactly as read."""
    index = {h.strip().lower(): i for i, h in enumerate(traj.columns)}
    pose_cols = [index[name] for name in POSE_COLUMNS]
    with atomic_path(path) as tmp, tmp.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(traj.columns)
        for row, p, q in zip(traj.cells, traj.position_m, traj.quat_xyzw, strict=True):
            out = list(row)
            for col, v in zip(pose_cols, (*p, *q), strict=True):
                out[col] = _format_float(v)
            writer.writerow(out)
