"""The tracker's output, one schema: ``poses.jsonl``, one JSON object per frame,
``{"frame", "status", "score", "T_cam_part", "ms"}``. Written by ``sim2real track run``, read by
``track eval``, ``adapt`` and the reports, all through this module.

- ``frame``: the frame id (int >= 0), unique in a file;
- ``status``: ``tracking`` (the pose is trustworthy), ``recovered`` (found again this frame) or
  ``lost`` (do not move a robot on it);
- ``score``: share of the visible model points that agree with the frame, 0..1 (null: none);
- ``T_cam_part``: 4x4 row-major, part -> camera, metres (may be null on a lost frame);
- ``ms``: time spent on the frame [ms] (null: not measured);
- ``refused`` (only on some lost frames): the bars the frame's best pose missed, of ``score``,
  ``outline``, ``outline_returns``, ``support``, ``in_image``, ``pose_spread`` (the evidence
  does not pin the pose); absent when the tracker had no pose to judge;
- ``noise_mm`` (optional): the frame's depth noise std where the part was expected [mm]
  (``tracking.depth_noise``), which the tracker's tolerances widen to.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import (
    ConfigDict,
    Field,
    ValidationError,
    field_serializer,
    field_validator,
    model_validator,
)

from sim2real.core.atomic import write_text_atomic
from sim2real.core.errors import InputError
from sim2real.core.pose import check_rigid
from sim2real.core.strict import StrictModel, validation_error

Status = Literal["tracking", "lost", "recovered"]
STATUSES: tuple[str, ...] = ("tracking", "lost", "recovered")
REPORTED: tuple[str, ...] = ("tracking", "recovered")
"""Statuses that report a pose as found."""


def _number_or_none(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("expected a number, not a boolean")
    if isinstance(value, float) and math.isnan(value):
        return None  # json.dumps writes NaN for a float nan: no value
    return value


class PoseRecord(StrictModel):
    """One frame of a track (see the module doc)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    frame: int = Field(ge=0, strict=True, description="frame id (>= 0)")
    status: Status = Field(description="tracking, recovered or lost")
    score: float | None = Field(None, ge=0, le=1, description="share of agreeing points [1]")
    T_cam_part: np.ndarray | None = Field(
        None, description="(4, 4) float64 rigid transform, part -> camera, metres"
    )
    ms: float | None = Field(None, ge=0, description="time spent on the frame [ms]")
    refused: tuple[str, ...] | None = Field(
        None, description="a lost frame's best pose: the bars it missed (see the module doc)"
    )
    noise_mm: float | None = Field(
        None, ge=0, description="the frame's depth noise std where the part was expected [mm]"
    )

    @field_validator("score", "ms", "noise_mm", mode="before")
    @classmethod
    def _numbers(cls, value: Any) -> Any:
        return _number_or_none(value)

    @field_validator("T_cam_part", mode="before")
    @classmethod
    def _rigid(cls, value: Any) -> np.ndarray | None:
        if value is None:
            return None
        try:
            T = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"not a numeric 4x4 matrix ({exc})") from None
        try:
            return check_rigid(T, None, None)
        except InputError as exc:
            raise ValueError(exc.message) from None

    @model_validator(mode="after")
    def _pose_when_found(self) -> PoseRecord:
        if self.T_cam_part is None and self.status != "lost":
            raise ValueError("T_cam_part missing (only a lost frame may omit it)")
        return self

    @field_serializer("T_cam_part")
    def _as_list(self, T: np.ndarray | None) -> list | None:
        return None if T is None else np.round(T, 7).tolist()

    @property
    def found(self) -> bool:
        """Whether the record reports the part as found (tracking or recovered)."""
        return self.status in REPORTED

    def to_json(self) -> str:
        """One line of ``poses.jsonl`` (no newline)."""
        data = self.model_dump(mode="json")
        for optional in ("refused", "noise_mm"):
            if data[optional] is None:
                del data[optional]
        return json.dumps(data)


def _parse_line(line: str, path: Path, n: int) -> PoseRecord:
    where = f"line {n}"
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(path, where, f"not valid JSON ({exc.msg}, column {exc.colno})") from None
    if not isinstance(data, dict):
        raise InputError(path, where, "expected a JSON object with frame, status and T_cam_part")
    try:
        return PoseRecord.model_validate(data)
    except ValidationError as exc:
        err = validation_error(exc, path)
        field = err.field or "T_cam_part"  # the one record-level rule is about the pose
        raise InputError(path, f"{where}, {field}", err.message) from None


def _lines(path: str | Path) -> tuple[Path, list[tuple[int, str]]]:
    path = Path(path)
    if not path.is_file():
        raise InputError(path, None, "poses file not found")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, None, f"cannot read poses ({exc})") from None
    numbered = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if not numbered:
        raise InputError(path, None, "no pose records: the file is empty")
    return path, numbered


def read_pose_records(path: str | Path) -> list[PoseRecord]:
    """Every record of a ``poses.jsonl``, in file order; InputError naming the line for a
    malformed one or a frame id that appears twice."""
    path, numbered = _lines(path)
    records, seen = [], set()
    for n, line in numbered:
        rec = _parse_line(line, path, n)
        if rec.frame in seen:
            raise InputError(path, f"line {n}, frame", f"frame {rec.frame} appears twice")
        seen.add(rec.frame)
        records.append(rec)
    return records


def last_pose_record(path: str | Path) -> tuple[PoseRecord, int]:
    """The last record of a ``poses.jsonl`` and its line number: a half-written last line from
    a live tracker is an error, never a pose. The line before it is read too: a last frame id
    not above the one before means two trackers write the file or a track was appended to an
    older one, and the last line may be another track's."""
    path, numbered = _lines(path)
    n, line = numbered[-1]
    record = _parse_line(line, path, n)
    if len(numbered) > 1:
        n_before, line_before = numbered[-2]
        before = _parse_line(line_before, path, n_before)
        if record.frame <= before.frame:
            raise InputError(
                path,
                f"line {n}, frame",
                f"frame {record.frame} follows frame {before.frame} (line {n_before}): two "
                "tracks in one file? start a new poses file",
            )
    return record, n


def write_pose_records(path: str | Path, records: list[PoseRecord]) -> None:
    """Write ``records`` as ``poses.jsonl`` (atomically)."""
    write_text_atomic(path, "".join(r.to_json() + "\n" for r in records))
