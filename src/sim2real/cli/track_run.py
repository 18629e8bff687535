"""``sim2real track run``: the tracker over a recorded sequence (a thin shell)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sim2real.core.errors import InputError


def run_cmd(
    mesh: Annotated[
        Path,
        typer.Argument(
            help="The part's mesh (OBJ, STL, PLY...) or a prepared MODEL_DIR (its tuned "
            "surface returns are used when it has them)."
        ),
    ],
    frames: Annotated[
        list[Path],
        typer.Option(
            "--frames", help="A BOP-like folder, or depth files (several may follow one --frames)."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="poses.jsonl: one JSON line per frame.")],
    init: Annotated[
        str,
        typer.Option(
            "--init",
            help="The part's pose in the first frame (T_cam_part: numbers or a file), or 'auto' to search for it.",
        ),
    ] = "auto",
    camera: Annotated[
        Path | None,
        typer.Option("--camera", help="Camera file; takes precedence over the folder's."),
    ] = None,
    symmetry: Annotated[
        str | None,
        typer.Option(
            "--symmetry",
            help="none, axis:z, discrete:z:4, or a BOP models_info file (for the errors).",
        ),
    ] = None,
    encoding: Annotated[
        str, typer.Option("--encoding", help="auto, png, tiff, tum, sun, pgm, npy.")
    ] = "auto",
    mesh_unit: Annotated[str, typer.Option("--mesh-unit", help="auto, m, cm or mm.")] = "auto",
    rpy_deg: Annotated[
        bool,
        typer.Option(
            "--rpy-deg", help="Read a 6-number --init as x y z roll pitch yaw, in degrees."
        ),
    ] = False,
    report: Annotated[
        Path | None, typer.Option("--report", help="Folder for an HTML report.")
    ] = None,
) -> None:
    """Track MESH through depth frames; write its pose and status per frame."""
    from sim2real.core.mesh_io import load_mesh
    from sim2real.core.pose import parse_pose
    from sim2real.tracking.run import track_sequence, write_poses_jsonl, write_track_report
    from sim2real.tracking.sequence import load_sequence

    if out.suffix.lower() != ".jsonl":
        raise InputError(out, "--out", "poses are written as JSON lines: use a .jsonl name")
    part = load_mesh(mesh, mesh_unit)
    source = frames[0] if len(frames) == 1 and frames[0].is_dir() else list(frames)
    sequence = load_sequence(source, camera, encoding=encoding)
    if max(part.extent_m) > 2.0:
        raise InputError(
            mesh,
            "size",
            f"the part is {max(part.extent_m):.1f} m across: much larger than a tracked part (check --mesh-unit)",
        )
    T_init = (
        None
        if init.strip().lower() == "auto"
        else parse_pose(init, rpy_deg=rpy_deg, field="--init")
    )
    returns = views = None
    if mesh.is_dir():  # a prepared model: its viewpoint model and, if tuned, surface returns
        from sim2real.models.model_dir import load_prepared_model
        from sim2real.models.tune import load_returns

        prepared = load_prepared_model(mesh)
        if prepared.config.views is not None:
            views = prepared.views().to_model_views()
        returns = load_returns(mesh)
        if returns is not None:
            typer.echo(f"using the tuned surface returns of {mesh}")
    run = track_sequence(part, sequence, T_init, returns=returns, views=views)
    write_poses_jsonl(out, run.records)
    counts = {
        s: sum(r["status"] == s for r in run.records) for s in ("tracking", "recovered", "lost")
    }
    ms = sorted(r["ms"] for r in run.records)
    typer.echo(
        f"wrote {out}: {len(run.records)} frames, "
        + ", ".join(f"{k} {v}" for k, v in counts.items())
        + f", median {ms[len(ms) // 2]:.1f} ms/frame"
    )
    found = [i for i, r in enumerate(run.records) if r["status"] != "lost"]
    if found:  # how well the model explains the last frame it was found in
        import numpy as np

        from sim2real.tracking.run import part_residual

        i = found[-1]
        res = part_residual(
            part, sequence.camera, sequence.read(i), np.asarray(run.records[i]["T_cam_part"])
        )
        typer.echo(
            f"  residual on the part's pixels (frame {run.records[i]['frame']}): median "
            f"|measured - model| {res.median_abs_mm:.2f} mm over {res.pixels} of its "
            f"{res.part_pixels} pixels; {100 * res.within_share:.1f} % within 1 cm, "
            f"RMS {res.within_rms_mm:.2f} mm there"
        )
    evaluation = None
    if sequence.gt:
        from sim2real.tracking.metrics import evaluate_track
        from sim2real.tracking.symmetry import parse_symmetry

        evaluation = evaluate_track(
            run.records,
            sequence.gt,
            part,
            parse_symmetry(symmetry),
            visible=getattr(sequence, "visible", None),
        )
        for line in evaluation.summary_lines():
            typer.echo(f"  {line}")
    if report is not None:
        typer.echo(f"report: {write_track_report(report, run, sequence, evaluation)}")
