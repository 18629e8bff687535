"""``sim2real adapt``: re-express a taught trajectory for the part's observed pose."""

from __future__ import annotations

from pathlib import Path

import typer

POSE_FORMS = "'x y z qx qy qz qw', 16 numbers of a 4x4, or a pose file"


def adapt_cmd(
    traj: Path = typer.Argument(
        ...,
        metavar="TRAJ.csv",
        help="Taught trajectory CSV: columns x y z qx qy qz qw (metres, unit quaternion "
        "scalar-last, robot base frame) in any order; other columns are passed through.",
    ),
    taught_pose: str = typer.Option(
        ...,
        "--taught-pose",
        help="T_cam_part when the trajectory was taught: the part's pose in the CAMERA frame "
        f"(as the tracker reports it): {POSE_FORMS}.",
    ),
    observed: str = typer.Option(
        ...,
        "--observed",
        help=f"T_cam_part now, in the camera frame: a pose ({POSE_FORMS}) or a tracker's "
        "poses.jsonl (its last line is used; refused unless 'tracking' with score >= "
        "--min-score).",
    ),
    camera_pose: str = typer.Option(
        ...,
        "--camera-pose",
        help=f"T_base_cam: the camera's pose in the robot base frame (hand-eye calibration): {POSE_FORMS}.",
    ),
    out: Path = typer.Option(..., "--out", help="Adapted trajectory CSV (same columns)."),
    min_score: float = typer.Option(
        0.5,
        "--min-score",
        min=0.0,
        max=1.0,
        help="Lowest tracker score accepted from a poses.jsonl (scores lie in 0..1).",
    ),
    rpy_deg: bool = typer.Option(
        False, "--rpy-deg", help="Read 6-number poses as x y z roll pitch yaw, in degrees."
    ),
) -> None:
    """Re-express waypoints taught for the part at --taught-pose for the part at --observed.

    Each waypoint W (base frame) becomes T_base_cam @ T_cam_part_observed @
    inv(T_cam_part_taught) @ inv(T_base_cam) @ W: it keeps its pose relative to the part.
    Exit code 3, nothing written, when the observed pose comes from a lost or low-score track.
    """
    from sim2real.core.atomic import check_writable
    from sim2real.tracking.adapt import AdaptRefused
    from sim2real.tracking.adapt_run import adapt_from_inputs

    check_writable(out, "--out")
    try:
        adaptation = adapt_from_inputs(
            traj, taught_pose, observed, camera_pose, min_score=min_score, rpy_deg=rpy_deg
        )
    except AdaptRefused as refusal:
        typer.echo(f"refused: {refusal.reason}", err=True)
        raise typer.Exit(code=3) from None
    adaptation.write(out)
    typer.echo(adaptation.summary_line(out))
