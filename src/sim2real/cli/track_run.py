"""``sim2real track run``: the tracker over a recorded sequence (a thin shell)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sim2real.cli.frame_options import Encoding, MeshUnit
from sim2real.core.errors import InputError

ExtrinsicOption = Annotated[
    str | None,
    typer.Option(
        "--extrinsic",
        help="T_depth_color: the colour camera's pose in the depth camera's frame (numbers "
        "or a file); default identity, or from two M3T camera files.",
    ),
]


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
            "--frames",
            help="A BOP-like folder, depth files (several may follow one --frames), or a "
            "RealSense recording (.bag, .db3).",
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="poses.jsonl: one JSON line per frame.")],
    init: Annotated[
        str,
        typer.Option(
            "--init",
            help="The part's pose in the first frame (T_cam_part, metres: numbers, a file or a "
            "BOP scene_gt.json), 'auto' to "
            "search for it, or detect:DET for a detector of `sim2real detect train` (the "
            "finder whenever the track is lost: the depth search looks only near its detection).",
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
            help="auto (the mesh's own rotations, detected), none, axis:z, discrete:z:4, or a "
            "BOP models_info file (for the errors).",
        ),
    ] = None,
    color: Annotated[
        list[Path] | None,
        typer.Option(
            "--color",
            help="Colour images (a folder, or files after one flag), paired with the depth "
            "frames by number; a BOP folder's rgb/ is found by itself.",
        ),
    ] = None,
    color_camera: Annotated[
        Path | None,
        typer.Option(
            "--color-camera",
            help="The colour camera's intrinsics when colour is not registered to depth.",
        ),
    ] = None,
    extrinsic: ExtrinsicOption = None,
    align_color: Annotated[
        bool,
        typer.Option(
            "--align-color",
            help="RealSense recordings: colour aligned to depth by the SDK (it blanks pixels "
            "without depth, e.g. a dark part) instead of colour in its own camera.",
        ),
    ] = False,
    no_color: Annotated[
        bool, typer.Option("--no-color", help="Track with depth only, even with rgb/ frames.")
    ] = False,
    encoding: Encoding = "auto",
    mesh_unit: MeshUnit = "auto",
    rpy_deg: Annotated[
        bool,
        typer.Option(
            "--rpy-deg", help="Read a 6-number --init as x y z roll pitch yaw, in degrees."
        ),
    ] = False,
    obj_id: Annotated[
        int | None,
        typer.Option(
            "--obj-id",
            help="The part's object id in BOP files that list several: scene_gt.json (the "
            "evaluation, a scene_gt --init) and a models_info --symmetry.",
        ),
    ] = None,
    report: Annotated[
        Path | None, typer.Option("--report", help="Folder for an HTML report.")
    ] = None,
    settings: Annotated[
        Path | None,
        typer.Option(
            "--settings",
            help="Tracker settings YAML: any field of TrackerConfig, e.g. depth_outline: false "
            "(docs/tracking.md); the rest keep their defaults.",
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
) -> None:
    """Track MESH through depth frames; write its pose and status per frame."""
    from sim2real.core.atomic import check_writable
    from sim2real.core.pose import parse_pose
    from sim2real.core.pose_records import write_pose_records
    from sim2real.models.part import load_part
    from sim2real.models.symmetry_detect import resolve_symmetry
    from sim2real.tracking.run import track_recording
    from sim2real.tracking.sequence import load_sequence

    if out.suffix.lower() != ".jsonl":
        raise InputError(out, "--out", "poses are written as JSON lines: use a .jsonl name")
    check_writable(out, "--out")
    if report is not None:
        check_writable(report, "--report", folder=True)
    config = None
    if settings is not None:
        from sim2real.core.strict import validate
        from sim2real.core.yaml_io import read_yaml_mapping
        from sim2real.tracking.config import TrackerConfig

        config = validate(TrackerConfig, read_yaml_mapping(settings, "--settings"), settings)
    part = load_part(mesh, mesh_unit)
    given_symmetry = resolve_symmetry(symmetry, part.mesh.vertices, part.mesh.faces, obj_id=obj_id)
    source = frames[0] if len(frames) == 1 and frames[0].is_dir() else list(frames)
    T_depth_color = (
        None if extrinsic is None else parse_pose(extrinsic, rpy_deg=rpy_deg, field="--extrinsic")
    )
    sequence = load_sequence(
        source,
        camera,
        encoding=encoding,
        obj_id=obj_id,
        color=list(color) if color else None,
        color_camera=color_camera,
        T_depth_color=T_depth_color,
        use_color=not no_color,
        align_color=align_color,
    )
    spec, proposer = init.strip(), None
    if spec.lower().startswith("detect:"):
        if not sequence.has_color:
            raise InputError(spec[7:], "--init", "a detector needs colour frames (rgb/ or --color)")
        from sim2real.tracking.proposals import detector_proposer

        color_camera = sequence.color_camera or sequence.camera
        proposer = detector_proposer(
            spec[7:], part.mesh, color_camera, sequence.T_depth_color, sequence.camera
        )
    T_init = (
        None
        if spec.lower() == "auto" or proposer is not None
        else parse_pose(init, rpy_deg=rpy_deg, field="--init", obj_id=obj_id)
    )
    from sim2real.cli.progress import frames_progress

    with frames_progress(quiet) as update:
        progress = update and (lambda done, total, record: update(done, total, record.status))
        result = track_recording(part, sequence, T_init, symmetry=given_symmetry,
                                 config=config, proposer=proposer, progress=progress)  # fmt: skip
    write_pose_records(out, result.run.records)
    lines = result.summary_lines()
    typer.echo(f"wrote {out}: {lines[0]}")
    for line in lines[1:]:
        typer.echo(f"  {line}")
    if report is not None:
        from sim2real.tracking.report import write_track_report

        typer.echo(f"report: {write_track_report(report, result.run, sequence, result.evaluation)}")
