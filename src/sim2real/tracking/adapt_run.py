"""The ``adapt`` job: read a taught trajectory and the poses (text, pose files or a tracker's
``poses.jsonl``), refuse a lost or low-score track, and re-express the waypoints."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sim2real.core.pose import parse_pose
from sim2real.core.pose_records import PoseRecord
from sim2real.tracking.adapt import (
    Trajectory,
    adapt_trajectory,
    observed_pose_from_jsonl,
    part_displacement,
    read_trajectory,
    write_trajectory,
)


@dataclass(frozen=True)
class Adaptation:
    """The adapted trajectory; ``record``: the tracker's record the observed pose came from
    (None for a pose given directly)."""

    trajectory: Trajectory
    T_cam_part_taught: np.ndarray
    T_cam_part_observed: np.ndarray
    record: PoseRecord | None

    def write(self, out: str | Path) -> None:
        write_trajectory(self.trajectory, out)

    def summary_line(self, out: str | Path) -> str:
        dt_m, dr_deg = part_displacement(self.T_cam_part_taught, self.T_cam_part_observed)
        n = len(self.trajectory)
        source = ""
        if self.record is not None and self.record.score is not None:
            source = f" (frame {self.record.frame}, score {self.record.score:.3g})"
        return (
            f"adapted {n} waypoint{'s' if n != 1 else ''} -> {out}; part moved "
            f"{dt_m * 1000:.1f} mm, {dr_deg:.2f} deg from taught to observed{source}"
        )


def adapt_from_inputs(
    trajectory: str | Path,
    taught_pose: str,
    observed: str,
    camera_pose: str,
    *,
    min_score: float = 0.5,
    rpy_deg: bool = False,
) -> Adaptation:
    """Poses as ``parse_pose`` reads them (text, 16 numbers or a pose file); ``observed`` may
    be a tracker's ``poses.jsonl``, whose last record must be ``tracking`` with a score of
    at least ``min_score`` (else ``AdaptRefused``: do not move)."""
    traj = read_trajectory(trajectory)
    T_cam_part_taught = parse_pose(taught_pose, rpy_deg=rpy_deg, field="--taught-pose")
    T_base_cam = parse_pose(camera_pose, rpy_deg=rpy_deg, field="--camera-pose")
    record = None
    if Path(observed.strip()).suffix.lower() == ".jsonl":
        T_cam_part_observed, record = observed_pose_from_jsonl(observed.strip(), min_score)
    else:
        T_cam_part_observed = parse_pose(observed, rpy_deg=rpy_deg, field="--observed")
    adapted = adapt_trajectory(traj, T_base_cam, T_cam_part_taught, T_cam_part_observed)
    return Adaptation(adapted, T_cam_part_taught, T_cam_part_observed, record)
