"""``sim2real depth ...``: depth-sensor simulation."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sim2real.cli.frame_options import DepthScale, Encoding, MeshUnit
from sim2real.core.errors import InputError

app = typer.Typer(help="Depth sensors: render what a real depth camera sees.", no_args_is_help=True)


@app.command("render")
def render_cmd(
    meshes: list[Path] = typer.Argument(
        None, help="Mesh files (OBJ, STL, PLY...), one --pose each."
    ),
    pose: list[str] = typer.Option(
        [], "--pose", help="T_cam_part: '--pose \"x y z qx qy qz qw\"', 16 numbers, or a pose file."
    ),
    rpy_deg: bool = typer.Option(
        False, "--rpy-deg", help="Read 6-number poses as x y z roll pitch yaw, in degrees."
    ),
    scene: Path | None = typer.Option(
        None, "--scene", help="Scene YAML listing meshes and poses instead."
    ),
    camera: Path | None = typer.Option(
        None, "--camera", help="Camera intrinsics file (JSON, YAML, XML)."
    ),
    sensor: str | None = typer.Option(
        None, "--sensor", help="Sensor preset (intrinsics and noise)."
    ),
    profile: Path | None = typer.Option(
        None, "--profile", help="Noise profile YAML (overrides the preset's)."
    ),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the noise (>= 0)."),
    plane: bool = typer.Option(False, "--plane", help="Add a table under the first part."),
    mesh_unit: MeshUnit = "auto",
    out: Path = typer.Option(
        ..., "--out", help="Output: .png (uint16), .tif, .npy (metres), .ply/.pcd."
    ),
) -> None:
    """Render what a depth sensor sees of MESHES at their poses."""
    from sim2real.core.atomic import check_writable
    from sim2real.core.pose import parse_pose
    from sim2real.models.part import load_part, read_part_mesh
    from sim2real.sensors.render_run import OUTPUT_SUFFIXES, render_job, resolve_sensor
    from sim2real.sensors.scene import load_scene_yaml, make_scene

    if out.suffix.lower() not in OUTPUT_SUFFIXES:
        raise InputError(
            out,
            "--out",
            f"unknown output type '{out.suffix}'; use one of {', '.join(OUTPUT_SUFFIXES)}",
        )
    check_writable(out, "--out")
    if scene is not None:
        if meshes:
            raise InputError(scene, "--scene", "give either --scene or MESH arguments, not both")
        the_scene = load_scene_yaml(scene, read_part_mesh)
    else:
        if not meshes:
            raise InputError(None, "MESH", "give at least one mesh (or --scene)")
        poses = [parse_pose(p, rpy_deg=rpy_deg, field=f"--pose[{i}]") for i, p in enumerate(pose)]
        parts = [load_part(m, mesh_unit) for m in meshes]
        the_scene = make_scene(
            [p.mesh for p in parts], poses, plane=plane, returns=[p.returns for p in parts]
        )
    intrinsics, noise = resolve_sensor(camera, sensor, profile)
    run = render_job(the_scene, intrinsics, noise, seed)
    run.write(out)
    typer.echo(f"wrote {out}: {run.summary_line()}")


@app.command("presets")
def presets_cmd() -> None:
    """List the built-in sensor presets."""
    from sim2real.sensors.presets import get_preset, preset_names

    for name in preset_names():
        p = get_preset(name)
        c = p.camera
        typer.echo(
            f"{name:20s} {c.width}x{c.height} fx={c.fx:.1f} baseline={p.profile.baseline_m:.3f} m  {p.profile.source[:60]}"
        )


def load_parts(meshes: list[Path], poses: list[str], mesh_unit: str, rpy_deg: bool):
    from sim2real.core.pose import parse_pose
    from sim2real.models.part import load_part

    if len(meshes) != len(poses):
        raise InputError(
            None, "--pose", f"{len(meshes)} --mesh but {len(poses)} --pose: give one pose per mesh"
        )
    return [
        (load_part(m, mesh_unit).mesh, parse_pose(p, rpy_deg=rpy_deg, field=f"--pose[{i}]"))
        for i, (m, p) in enumerate(zip(meshes, poses, strict=True))
    ]


# Options shared by the commands that read real frames (Annotated aliases: one definition each).
Frames = Annotated[
    list[Path],
    typer.Option(
        "--frames",
        help="Real depth frames (images in their own encoding, or organised point clouds); several may follow one --frames.",
    ),
]
CameraFile = Annotated[
    Path | None, typer.Option("--camera", help="Camera intrinsics of the frames.")
]
Meshes = Annotated[
    list[Path], typer.Option("--mesh", help="A known part in the frames (one --pose each).")
]
PartPoses = Annotated[
    list[str], typer.Option("--pose", help="T_cam_part of each --mesh (refined by ICP).")
]
Planes = Annotated[bool, typer.Option("--planes/--no-planes", help="Find planes in the frames.")]
RpyDeg = Annotated[
    bool, typer.Option("--rpy-deg", help="Read 6-number poses as x y z roll pitch yaw, in degrees.")
]
ReportDir = Annotated[
    Path | None, typer.Option("--report", help="Folder for an HTML report with plots.")
]


@app.command("calibrate")
def calibrate_cmd(
    frames: Frames,
    out: Annotated[Path, typer.Option("--out", help="The calibrated profile (YAML).")],
    camera: CameraFile = None,
    mesh: Meshes = [],  # noqa: B006 - typer reads, never mutates, the default
    pose: PartPoses = [],  # noqa: B006
    planes: Planes = True,
    base_profile: Annotated[
        str | None,
        typer.Option(
            "--base-profile",
            help="Preset or profile YAML to start from (default: the preset whose simulation "
            "of the found planes is closest to the frames).",
        ),
    ] = None,
    holdout_frames: Annotated[
        int,
        typer.Option(
            "--holdout-frames",
            min=0,
            help="Hold out every k-th frame (at least one) and judge the profile on them; "
            "with one frame, every 2nd plane. 0: no hold-out.",
        ),
    ] = 3,
    encoding: Encoding = "auto",
    depth_scale: DepthScale = None,
    mesh_unit: MeshUnit = "auto",
    rpy_deg: RpyDeg = False,
    name: Annotated[
        str | None, typer.Option("--name", help="Name of the calibrated profile.")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed (>= 0).")] = 0,
    report: ReportDir = None,
) -> None:
    """Fit a noise profile to real frames of ordinary scenes (planes) and known parts, and
    judge it on data it was not fitted to."""
    import time

    from sim2real.core.atomic import check_writable
    from sim2real.sensors.calibration_run import run_calibration
    from sim2real.sensors.profile import save_profile

    if out.suffix.lower() not in (".yaml", ".yml"):
        raise InputError(out, "--out", "the profile is written as YAML: use a .yaml name")
    check_writable(out, "--out")
    if report is not None:
        check_writable(report, "--report", folder=True)
    started = time.perf_counter()
    run = run_calibration(
        frames,
        camera,
        parts=load_parts(mesh, pose, mesh_unit, rpy_deg),
        planes=planes,
        base_profile=base_profile,
        encoding=encoding,
        depth_scale=depth_scale,
        name=name,
        seed=seed,
        holdout_every=holdout_frames,
    )
    save_profile(run.profile, out)
    for line in run.summary_lines():
        typer.echo(line)
    typer.echo(f"wrote {out} ({len(run.references)} frames, {time.perf_counter() - started:.1f} s)")
    if report is not None:
        from sim2real.sensors.calibration_report import write_calibration_report

        typer.echo(f"report: {write_calibration_report(report, run)}")


@app.command("gap")
def gap_cmd(
    frames: Frames,
    profile: Annotated[
        list[str], typer.Option("--profile", help="Presets or profile YAMLs to compare (repeat).")
    ],
    out: Annotated[Path, typer.Option("--out", help="The metrics (JSON).")],
    camera: CameraFile = None,
    mesh: Meshes = [],  # noqa: B006
    pose: PartPoses = [],  # noqa: B006
    planes: Planes = True,
    encoding: Encoding = "auto",
    depth_scale: DepthScale = None,
    mesh_unit: MeshUnit = "auto",
    rpy_deg: RpyDeg = False,
    seeds: Annotated[
        int, typer.Option("--seeds", min=1, help="Simulations per frame and profile.")
    ] = 3,
    holdout: Annotated[
        bool,
        typer.Option(
            "--holdout/--no-holdout",
            help="Judge a calibrated profile only on the frames (or held-out planes) it was "
            "not fitted to (its validation record).",
        ),
    ] = True,
    report: ReportDir = None,
) -> None:
    """Measure the sim-to-real gap of each profile on real frames."""
    import json

    from rich.console import Console
    from rich.table import Table

    from sim2real.core.atomic import check_writable, write_text_atomic
    from sim2real.sensors.gap_run import run_gap

    if out.suffix.lower() != ".json":
        raise InputError(out, "--out", "the metrics are written as JSON: use a .json name")
    check_writable(out, "--out")
    if report is not None:
        check_writable(report, "--report", folder=True)
    gap, refs = run_gap(
        frames,
        camera,
        profile,
        parts=load_parts(mesh, pose, mesh_unit, rpy_deg),
        planes=planes,
        encoding=encoding,
        depth_scale=depth_scale,
        seeds=seeds,
        holdout=holdout,
    )
    write_text_atomic(out, json.dumps(gap.to_json(), indent=2))
    header, *rows = gap.table()
    table = Table(*header, title=f"sim-to-real gap on {len(refs)} frame(s), lower is better")
    for row in rows:
        table.add_row(*row)
    console = Console()
    if not console.is_terminal:  # keep the metric names whole in logs and pipes
        console = Console(width=200)
    console.print(table)
    typer.echo(
        "noise_bins_within_25pct: share of 10 cm bins (>= 2000 px) within 25 % (higher is better)"
    )
    for g in gap.gaps:
        met = ", ".join(f"{k} {'met' if v else 'NOT met'}" for k, v in g.targets_met().items())
        typer.echo(f"{g.profile} on {g.judged_on}: targets {met}")
    typer.echo(f"wrote {out}")
    if report is not None:
        from sim2real.sensors.calibration_report import write_gap_report

        typer.echo(f"report: {write_gap_report(report, gap, refs)}")
