"""``sim2real detect train | run | finetune``: the detector trained in simulation (thin shells;
registered on the ``detect`` app of ``cli/detect.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sim2real.cli.frame_options import Encoding
from sim2real.cli.track_run import ExtrinsicOption
from sim2real.core.errors import InputError
from sim2real.core.seed_range import MAX_SEED


def train_cmd(
    model: Annotated[Path, typer.Argument(help="The part: a mesh file or a prepared MODEL_DIR.")],
    out: Annotated[Path, typer.Option("--out", help="Folder for the detector (DET/).")],
    config: Annotated[
        Path | None,
        typer.Option("--config", help="Training config YAML (detect.train.TrainConfig)."),
    ] = None,
    frames: Annotated[
        int | None, typer.Option("--frames", min=1, help="Randomized training frames.")
    ] = None,
    steps: Annotated[
        int | None, typer.Option("--steps", min=1, help="Training steps (default 10,000).")
    ] = None,
    minutes: Annotated[
        float | None,
        typer.Option("--minutes", min=0.01, help="Cap on the training time \\[min] (default 17)."),
    ] = None,
    input_kind: Annotated[
        str | None, typer.Option("--input", help="rgb or rgbd (default: the config's).")
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", min=0, max=MAX_SEED, help="Seed of the run.")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
) -> None:
    """Train a detector of MODEL on randomized simulated frames only."""
    from sim2real.core.atomic import check_writable
    from sim2real.detect.report import absent_summary, detections_summary, write_detector_folder
    from sim2real.detect.train import resolve_train_config, train_detector

    check_writable(out, "--out", folder=True)
    cfg = resolve_train_config(config, frames, minutes, input_kind, seed, steps)
    with _Progress(quiet) as progress:
        result = train_detector(model, cfg, progress)
    write_detector_folder(result, out)
    t = result.timings
    typer.echo(
        f"wrote {out}: {t['steps']} steps, rendering {t['render_s']:.0f} s, training "
        f"{t['train_s']:.0f} s; simulated validation: {detections_summary(result.val)}"
        + absent_summary(result)
    )
    if notice := cfg.optim.cut_short(t["steps"]):
        typer.echo(f"warning: {notice}", err=True)


# the frames of detect run and detect finetune: a sequence, or colour images alone
FramesOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--frames",
        help="A BOP-like folder with rgb/ (and depth/), or depth images (a folder, or files "
        "after one flag) with their colour images in --color.",
    ),
]
ColorOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--color",
        help="Colour images (a folder, or files after one flag): paired with the --frames "
        "depth by number, or alone (no --frames: a colour camera, --camera required).",
    ),
]


ModelOption = Annotated[
    Path | None,
    typer.Option("--model", help="The part: checked to be the one the detector knows."),
]


def check_model_option(detector, model: Path | None) -> None:
    """``--model``: InputError when it is not the part the detector was trained for."""
    if model is not None:
        from sim2real.models.part import load_part

        detector.check_model(load_part(model).mesh, model)


def run_cmd(
    det: Annotated[Path, typer.Argument(help="A detector folder (detect train).")],
    out: Annotated[Path, typer.Option("--out", help="detections.jsonl: one line per frame.")],
    frames: FramesOption = None,
    color: ColorOption = None,
    camera: Annotated[
        Path | None, typer.Option("--camera", help="Camera file; takes precedence.")
    ] = None,
    color_camera: Annotated[
        Path | None,
        typer.Option("--color-camera", help="The colour camera when not registered to depth."),
    ] = None,
    extrinsic: ExtrinsicOption = None,
    model: ModelOption = None,
    encoding: Encoding = "auto",
    obj_id: Annotated[
        int | None,
        typer.Option(
            "--obj-id", help="The part's object id in the folder's scene_gt.json (the scores)."
        ),
    ] = None,
    min_confidence: Annotated[
        float | None,
        typer.Option(
            "--min-confidence",
            min=0.0,
            max=1.0,
            help="Highest peak that calls the part found (the detector's: 0.3). Higher: fewer "
            "false detections and fewer parts found (benchmarks/bench_detect_absent.py).",
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
) -> None:
    """Detect the part in each frame; write found, confidence, position_m (and T_cam_part).

    Frames: a BOP-like folder (rgb/, depth/), depth images with their colour images
    (--frames DEPTH --color RGB), or colour images alone (--color RGB --camera CAM). The
    depth checks each detection; depth from another camera (--color-camera, --extrinsic) is
    moved into the colour camera first."""
    import json

    from sim2real.core.atomic import check_writable, write_text_atomic
    from sim2real.detect.detector import load_detector
    from sim2real.detect.run import color_frames, color_images, detect_sequence, sequence_frames
    from sim2real.tracking.sequence import load_sequence

    check_frame_sources(frames, color, camera or color_camera)
    if out.suffix.lower() != ".jsonl":
        raise InputError(out, "--out", "detections are written as JSON lines: use a .jsonl name")
    check_writable(out, "--out")
    detector = load_detector(det)
    check_model_option(detector, model)
    if min_confidence is not None:
        settings = detector.info.settings
        detector.info.settings = settings.model_copy(update={"min_confidence": min_confidence})
    if frames:
        source = frames[0] if len(frames) == 1 and frames[0].is_dir() else list(frames)
        from sim2real.core.pose import parse_pose

        T_depth_color = None if extrinsic is None else parse_pose(extrinsic, field="--extrinsic")
        sequence = load_sequence(
            source,
            camera,
            encoding=encoding,
            obj_id=obj_id,
            color=color,
            color_camera=color_camera,
            T_depth_color=T_depth_color,
            one_camera=False,  # `detect dataset` folders jitter cam_K per frame
        )
        inputs, total = sequence_frames(sequence, source), len(sequence.frame_ids)
    else:
        inputs, total = color_frames(color, camera or color_camera), len(color_images(color)[0])
    from sim2real.cli.progress import frames_progress

    with frames_progress(quiet) as update:
        progress = update and (
            lambda done, det: update(done, total, "found" if det.found else "not found")
        )
        result = detect_sequence(detector, inputs, progress)
    write_text_atomic(out, "".join(json.dumps(r) + "\n" for r in result.records()))
    lines = result.summary_lines()
    typer.echo(f"wrote {out}: {lines[0]}")
    for line in lines[1:]:
        typer.echo(f"  {line}")


def check_frame_sources(frames, color, camera) -> None:
    """Frames are a sequence (--frames) or colour images alone with their camera."""
    if not frames and not color:
        raise InputError(None, "--frames", "give the frames (--frames SEQ, or --color RGB alone)")
    if not frames and camera is None:
        raise InputError(None, "--camera", "colour images alone need their camera (--camera)")


def finetune_cmd(
    det: Annotated[Path, typer.Argument(help="A detector folder (detect train).")],
    labels: Annotated[
        Path, typer.Option("--labels", help="scene_gt.json: reference poses of those frames.")
    ],
    out: Annotated[Path, typer.Option("--out", help="Folder for the tuned detector (DET2/).")],
    frames: FramesOption = None,
    color: ColorOption = None,
    k: Annotated[
        int, typer.Option("--k", min=1, help="Labelled frames trained on (the first k).")
    ] = 5,
    naive: Annotated[
        bool, typer.Option("--naive", help="Real frames only: no replay, no L2-SP (a baseline).")
    ] = False,
    minutes: Annotated[
        float | None, typer.Option("--minutes", min=0.01, help="Fine-tuning time budget \\[min].")
    ] = None,
    obj_id: Annotated[
        int | None, typer.Option("--obj-id", help="The part's BOP obj_id in --labels (default 1).")
    ] = None,
    model: ModelOption = None,
    camera: Annotated[
        Path | None, typer.Option("--camera", help="Camera file; takes precedence.")
    ] = None,
    encoding: Encoding = "auto",
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
) -> None:
    """Fine-tune DET on k labelled real frames; report held-out real and simulated errors."""
    from sim2real.core.atomic import check_writable
    from sim2real.core.strict import validate
    from sim2real.core.yaml_io import read_yaml_mapping
    from sim2real.detect.detector import load_detector
    from sim2real.detect.finetune import (
        FinetuneConfig,
        check_labels,
        finetune_detector,
        write_finetuned_folder,
    )
    from sim2real.detect.part_labels import load_part_labels
    from sim2real.detect.report import detections_summary
    from sim2real.detect.run import color_frames, color_images, sequence_frames
    from sim2real.detect.train import TrainConfig
    from sim2real.tracking.sequence import load_sequence

    check_frame_sources(frames, color, camera)
    check_writable(out, "--out", folder=True)
    detector = load_detector(det)
    check_model_option(detector, model)
    train_cfg = validate(TrainConfig, read_yaml_mapping(det / "config.yaml"), det / "config.yaml")
    gt = load_part_labels(labels, obj_id)
    if frames:
        source = frames[0] if len(frames) == 1 and frames[0].is_dir() else list(frames)
        sequence = load_sequence(  # its poses are --labels', not the folder's scene_gt.json
            source, camera, encoding=encoding, color=color, read_gt=False, one_camera=False
        )
        check_labels(sequence.frame_ids, list(gt), labels, k)
        sequence.gt = gt
        inputs = sequence_frames(sequence, source)
    else:
        check_labels(color_images(color)[0], list(gt), labels, k)
        inputs = color_frames(color, camera, gt)
    real = [f for f in inputs if f[4] is not None]
    cfg = FinetuneConfig(k=k, mode="naive" if naive else "replay")
    if minutes is not None:
        cfg = cfg.model_copy(
            update={"optim": cfg.optim.model_copy(update={"max_minutes": minutes})}
        )
    with _Progress(quiet) as progress:
        result = finetune_detector(detector, train_cfg, real, cfg, progress=progress)
    write_finetuned_folder(result, train_cfg, out)
    typer.echo(f"wrote {out}: {cfg.mode}, k = {k}, {result.steps} steps")
    for name, before, after in (
        ("real held-out", result.real_before, result.real_after),
        ("simulated validation", result.sim_before, result.sim_after),
    ):
        typer.echo(f"  {name}: before {detections_summary(before)}")
        typer.echo(f"  {name}: after  {detections_summary(after)}")


class _Progress:
    """A rich progress bar for the stages ``progress(stage, done, total)`` reports."""

    def __init__(self, quiet: bool):
        self.quiet = quiet

    def __enter__(self):
        if self.quiet:
            return None
        from rich.progress import BarColumn, TaskProgressColumn, TextColumn, TimeRemainingColumn

        from sim2real.cli.progress import transient_progress

        self.bar = transient_progress(
            TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
            TimeRemainingColumn(),
        )  # fmt: skip
        self.bar.__enter__()
        self.tasks: dict[str, int] = {}

        def update(stage: str, done: float, total: float) -> None:
            if stage not in self.tasks:
                self.tasks[stage] = self.bar.add_task(stage, total=total)
            self.bar.update(self.tasks[stage], completed=done, total=total)

        return update

    def __exit__(self, *exc):
        if not self.quiet:
            self.bar.__exit__(*exc)
        return False
