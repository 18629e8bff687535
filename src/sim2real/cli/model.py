"""``sim2real model ...``: prepare tracking models from CAD files, meshes and scans (thin
shells over ``sim2real.models``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sim2real.cli.frame_options import DepthScale, Encoding

app = typer.Typer(
    help="Part models: prepare CAD / mesh / scan inputs for tracking, inspect prepared models.",
    no_args_is_help=True,
)


@app.command("prepare")
def prepare_cmd(
    input_path: Annotated[
        Path, typer.Argument(help="STEP/IGES, STL/OBJ/PLY/OFF/glTF mesh, or PLY/PCD/XYZ scan.")
    ],
    out: Annotated[Path, typer.Option("--out", help="MODEL_DIR to write.")],
    unit: Annotated[
        str,
        typer.Option("--unit", help="auto, m, cm, mm or inch (auto: from the file or the size)."),
    ] = "auto",
    target_faces: Annotated[
        int, typer.Option("--target-faces", help="Decimate above this many triangles (0: never).")
    ] = 100_000,
    chordal_tol_mm: Annotated[
        float, typer.Option("--chordal-tol-mm", help="CAD tessellation tolerance \\[mm].")
    ] = 0.05,
    symmetry: Annotated[
        str,
        typer.Option(
            "--symmetry", help="auto (detect), none, axis:z, discrete:z:4... or a BOP file."
        ),
    ] = "auto",
    views: Annotated[
        int, typer.Option("--views", help="Viewpoints of the viewpoint model.")
    ] = 2000,
    scan_method: Annotated[
        str, typer.Option("--scan-method", help="poisson or bpa (point-cloud inputs).")
    ] = "poisson",
    keep_internal: Annotated[
        bool, typer.Option("--keep-internal", help="Keep faces no outside viewpoint sees.")
    ] = False,
    no_report: Annotated[bool, typer.Option("--no-report", help="Skip report/ pictures.")] = False,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace a model already in --out.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="Print only the model's path.")] = False,
) -> None:
    """Turn INPUT into MODEL_DIR: mesh.ply (metres, cleaned), model.yaml, viewpoints.npz and
    report/index.html (before/after pictures). Every automatic repair is printed."""
    from pydantic import ValidationError

    from sim2real.core.errors import InputError
    from sim2real.core.strict import validation_error
    from sim2real.models.model_dir import is_model_dir
    from sim2real.models.prepare import PrepareConfig, prepare_model

    if out.exists() and any(out.iterdir() if out.is_dir() else [out]):
        if not is_model_dir(out):
            raise InputError(out, "--out", "exists and is not a prepared model: choose another")
        if not overwrite:
            raise InputError(out, "--out", "already holds a model: pass --overwrite")
    try:
        config = PrepareConfig(
            unit=unit,
            target_faces=target_faces or None,
            chordal_tolerance_mm=chordal_tol_mm,
            symmetry=symmetry,
            views=views,
            scan_method=scan_method,
            remove_internal=not keep_internal,
        )
    except ValidationError as exc:
        e = validation_error(exc, None)
        option = {"target_faces": "--target-faces", "chordal_tolerance_mm": "--chordal-tol-mm"}
        field = e.field or ""
        raise InputError(
            None, option.get(field, "--" + field.replace("_", "-")), e.message
        ) from None
    result = prepare_model(input_path, config)
    folder = result.write(out, overwrite=overwrite, report=not no_report)
    if quiet:
        typer.echo(str(folder))
        return
    for line in result.summary():
        typer.echo(line)
    typer.echo(f"wrote {folder}" + ("" if no_report else f" (report: {folder / 'report'})"))


@app.command("tune")
def tune_cmd(
    model_dir: Annotated[Path, typer.Argument(help="A MODEL_DIR written by `model prepare`.")],
    frames: Annotated[
        list[Path],
        typer.Option("--frames", help="Real depth frames (several may follow one --frames)."),
    ],
    poses: Annotated[
        list[str],
        typer.Option("--poses", help="The part's pose in each frame (T_cam_part; text or file)."),
    ],
    camera: Annotated[
        Path | None,
        typer.Option("--camera", help="Camera of depth images (organised clouds carry theirs)."),
    ] = None,
    camera_pose: Annotated[
        str | None,
        typer.Option(
            "--camera-pose",
            help="T_world_cam (an M3T camera YAML, or a pose as --poses takes it): the --poses "
            "are then T_world_part.",
        ),
    ] = None,
    sensor: Annotated[
        str, typer.Option("--sensor", help="Sensor preset whose noise the comparison simulates.")
    ] = "realsense-d435",
    profile: Annotated[
        Path | None, typer.Option("--profile", help="Noise profile YAML (overrides --sensor's).")
    ] = None,
    refine: Annotated[
        bool, typer.Option("--refine/--no-refine", help="Refine each pose by ICP first.")
    ] = True,
    encoding: Encoding = "auto",
    depth_scale: DepthScale = None,
    report: Annotated[
        Path | None, typer.Option("--report", help="Folder for an HTML report.")
    ] = None,
) -> None:
    """Measure where the real sensor returns depth on the part and where it departs from the
    model; store it in MODEL_DIR (returns.npz, tuning.yaml) for the tracker and the renderer."""
    from sim2real.core.camera_io import load_camera, load_world_camera_pose
    from sim2real.models.tune import tune_model_dir, write_tuning
    from sim2real.sensors.presets import get_preset
    from sim2real.sensors.profile import load_profile

    if report is not None:  # before the work and before the model folder is written
        from sim2real.core.atomic import check_writable

        check_writable(report, "--report", folder=True)
    noise = load_profile(profile) if profile is not None else get_preset(sensor).profile
    result = tune_model_dir(
        model_dir,
        list(frames),
        list(poses),
        camera=load_camera(camera) if camera is not None else None,
        profile=noise,
        T_world_cam=load_world_camera_pose(camera_pose) if camera_pose is not None else None,
        refine=refine,
        encoding=encoding,
        depth_scale=depth_scale,
    )
    write_tuning(model_dir, result)
    s = result.summary()
    if s["return_rate"] == 0:
        typer.echo(
            "warning: no return on any of the part's pixels: a part that returns no depth, or a "
            "pose off the part (check --poses and --camera-pose)",
            err=True,
        )
    typer.echo(
        f"tuned {model_dir} with {s['frames']} frame(s): returns on {100 * s['return_rate']:.1f} % "
        f"of the part's observed pixels; return probability {s['probability_range'][0]:.2f}.."
        f"{s['probability_range'][1]:.2f}"
    )
    typer.echo(
        "valid pixels on the part, simulated vs real (agreement): "
        f"{s['valid_pixel_agreement']['untuned']:.3f} untuned -> "
        f"{s['valid_pixel_agreement']['tuned']:.3f} tuned (the tuning frames)"
    )
    if report is not None:
        from sim2real.models.tune_report import write_tune_report

        typer.echo(f"report: {write_tune_report(result, report)}")


@app.command("info")
def info_cmd(
    model_dir: Annotated[Path, typer.Argument(help="A MODEL_DIR written by `model prepare`.")],
) -> None:
    """Print what model.yaml says about MODEL_DIR."""
    from sim2real.models.model_dir import read_model_config

    c = read_model_config(model_dir)
    e = [1000 * x for x in c.extent_m]
    typer.echo(f"{c.name}: {c.source.kind} {c.source.path} ({c.source.unit}, {c.source.unit_from})")
    typer.echo(
        f"size {e[0]:.1f} x {e[1]:.1f} x {e[2]:.1f} mm, diameter {1000 * c.diameter_m:.1f} mm, "
        f"{c.cleaning.faces_out} faces, {'watertight' if c.cleaning.watertight else 'open'}"
    )
    typer.echo(
        f"symmetry ({c.symmetry.source}): {c.symmetry.text}, confidence {c.symmetry.confidence:.3f}"
    )
    if c.views is not None:
        typer.echo(f"viewpoints: {c.views.count} x {c.views.points_per_view} points")
    for r in c.cleaning.repairs:
        typer.echo(f"repair: {r}")
