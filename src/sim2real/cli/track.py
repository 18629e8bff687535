"""``sim2real track ...``: synthetic sequences, tracking and evaluation (thin shells)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sim2real.cli.frame_options import MeshUnit
from sim2real.core.errors import InputError

app = typer.Typer(
    help="Part tracking: generate test sequences, track a part, evaluate the track.",
    no_args_is_help=True,
)

MOTION_CHOICES = ("smooth", "fast", "occluded", "leave-view")
LOW_RETURNS = 0.5
"""Below this share of the part's visible pixels with a return, ``track synth`` warns."""


@app.command("synth")
def synth_cmd(
    mesh: Annotated[Path, typer.Argument(help="The part's mesh (OBJ, STL, PLY...).")],
    out: Annotated[Path, typer.Option("--out", help="Folder for the BOP-like sequence.")],
    motion: Annotated[
        str, typer.Option("--motion", help="smooth, fast, occluded or leave-view.")
    ] = "smooth",
    frames: Annotated[int, typer.Option("--frames", help="Number of frames (30 Hz).")] = 100,
    seed: Annotated[
        int, typer.Option("--seed", min=0, help="Seed of the motion and the noise (>= 0).")
    ] = 0,
    sensor: Annotated[
        str | None, typer.Option("--sensor", help="Sensor preset (intrinsics and noise).")
    ] = None,
    profile: Annotated[
        Path | None, typer.Option("--profile", help="Noise profile YAML (overrides the preset's).")
    ] = None,
    camera: Annotated[
        Path | None,
        typer.Option("--camera", help="Camera intrinsics file (overrides the preset's)."),
    ] = None,
    mesh_unit: MeshUnit = "auto",
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace a sequence already in --out.")
    ] = False,
) -> None:
    """Render a depth sequence of MESH moving in front of a sensor, with ground truth
    (depth/, scene_camera.json, camera.json, scene_gt.json, visible.json, synth.json)."""
    from sim2real.models.part import load_part
    from sim2real.sensors.render_run import resolve_sensor
    from sim2real.tracking.synth import synthesize_sequence

    if motion not in MOTION_CHOICES:
        raise InputError(
            None,
            "--motion",
            f"unknown motion {motion!r}; choose one of {', '.join(MOTION_CHOICES)}",
        )
    if frames < 1:
        raise InputError(None, "--frames", f"need at least 1 frame, got {frames}")
    from sim2real.core.atomic import check_writable

    check_writable(out, "--out", folder=True)
    old = sorted((out / "depth").glob("*.png")) if (out / "depth").is_dir() else []
    if old and not overwrite:
        raise InputError(
            out, "--out", f"already holds a sequence ({len(old)} frames): pass --overwrite"
        )
    part = load_part(mesh, mesh_unit).mesh
    intrinsics, noise = resolve_sensor(camera, sensor, profile)
    seq = synthesize_sequence(
        part, motion=motion, frames=frames, seed=seed, profile=noise, camera=intrinsics
    )
    seq.write(out)
    gone = int((seq.visible < 0.05).sum())
    typer.echo(
        f"wrote {out}: {len(seq)} frames of '{motion}' at {intrinsics.width}x{intrinsics.height} "
        f"({seq.profile_name}), part {1000 * seq.diameter_m:.0f} mm across at "
        f"{seq.distance_m:.2f} m; peaks {seq.peak_speed_m_s:.2f} m/s, "
        f"{seq.peak_turn_deg_s:.0f} deg/s; visible {seq.visible.min():.0%}..{seq.visible.max():.0%}"
        f", {gone} frames out of view; {seq.render_ms:.0f} ms/frame"
    )
    returns = seq.median_returns
    if returns is not None and returns < LOW_RETURNS:
        typer.echo(
            f"warning: the sensor returns depth on only {returns:.0%} of the part's visible "
            "pixels (median frame): the part is too dark, steep or near for it to be tracked "
            "from depth",
            err=True,
        )


@app.command("eval")
def eval_cmd(
    poses: Annotated[Path, typer.Argument(help="The tracker's poses.jsonl.")],
    gt: Annotated[
        Path, typer.Option("--gt", help="BOP scene_gt.json (or the sequence folder holding it).")
    ],
    mesh: Annotated[Path, typer.Option("--mesh", help="The part's mesh.")],
    symmetry: Annotated[
        str | None,
        typer.Option(
            "--symmetry",
            help="auto (the mesh's own rotations, detected), none, axis:z, axis:0,0,1@x,y,z, "
            "discrete:z:4, or a BOP models_info JSON/YAML.",
        ),
    ] = None,
    obj_id: Annotated[
        int | None, typer.Option("--obj-id", help="Object id in scene_gt.json / models_info.")
    ] = None,
    visible: Annotated[
        Path | None,
        typer.Option("--visible", help="visible.json (default: beside scene_gt.json, if there)."),
    ] = None,
    mesh_unit: MeshUnit = "auto",
    out: Annotated[Path | None, typer.Option("--out", help="Write the evaluation as JSON.")] = None,
) -> None:
    """Score a track against ground truth: ADD / ADD-S, recall and AUC, status honesty."""
    from sim2real.core.atomic import check_writable, write_text_atomic
    from sim2real.models.part import load_part
    from sim2real.models.symmetry_detect import resolve_symmetry
    from sim2real.tracking.evaluation import evaluate_track_files

    if out is not None:
        check_writable(out, "--out")
    part = load_part(mesh, mesh_unit)
    sym = resolve_symmetry(symmetry, part.mesh.vertices, part.mesh.faces, obj_id=obj_id)
    evaluation = evaluate_track_files(poses, gt, part, sym, obj_id=obj_id, visible=visible)
    if out is not None:
        write_text_atomic(out, evaluation.to_json())
    for line in evaluation.summary_lines():
        typer.echo(line)
    if out is not None:
        typer.echo(f"wrote {out}")


# ---- `track run` -------------------------------------------------------------------------
from sim2real.cli.track_run import run_cmd  # noqa: E402 - registered after the commands above

app.command("run")(run_cmd)
