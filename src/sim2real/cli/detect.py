"""``sim2real detect ...``: randomized RGB-D datasets (here) and the detector trained on them
(its commands live in ``cli/detect_train.py`` and are registered below, one line each)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sim2real.core.seed_range import MAX_SEED

app = typer.Typer(
    help="Part detection: randomized RGB-D datasets and detectors trained only in simulation.",
    no_args_is_help=True,
)


@app.command("dataset")
def dataset_cmd(
    model: Annotated[Path, typer.Argument(help="The part: a mesh file or a prepared MODEL_DIR.")],
    out: Annotated[Path, typer.Option("--out", help="Dataset folder (BOP layout); resumes.")],
    frames: Annotated[int, typer.Option("--frames", help="Number of frames.")],
    seed: Annotated[
        int,
        typer.Option("--seed", min=0, max=MAX_SEED, help="Seed: frame i depends on (seed, i)."),
    ] = 0,
    config: Annotated[
        Path | None,
        typer.Option("--config", help="Randomization YAML (detect.scene_config.SceneConfig)."),
    ] = None,
    processes: Annotated[
        int | None,
        typer.Option(
            "--processes",
            help="Worker processes on this machine (default: one per core; 1: no workers).",
        ),
    ] = None,
    workers: Annotated[int, typer.Option("--workers", help="Ray workers instead (0: no Ray).")] = 0,
    address: Annotated[
        str | None, typer.Option("--address", help="Ray head HOST:PORT (or auto).")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
) -> None:
    """Render FRAMES labelled, randomized RGB-D frames of MODEL into a BOP folder.

    OUT gets rgb/, depth/, mask/, mask_visib/, scene_gt.json, scene_camera.json and
    config.yaml. Run the same command again to resume an interrupted run."""
    from sim2real.detect.dataset import generate_dataset

    kw = {"seed": seed, "config": config, "processes": processes, "workers": workers,
          "address": address}  # fmt: skip
    if quiet:
        result = generate_dataset(model, out, frames, **kw)
    else:
        from rich.progress import BarColumn, TextColumn, TimeRemainingColumn

        from sim2real.cli.progress import transient_progress

        with transient_progress(
            TextColumn("frames"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
            TimeRemainingColumn(),
        ) as bar:  # fmt: skip
            task = bar.add_task("frames", total=None)
            result = generate_dataset(
                model, out, frames, **kw,
                progress=lambda done, total: bar.update(task, completed=done, total=total),
            )  # fmt: skip
    typer.echo(result.summary())


# the detector's commands (cli/detect_train.py), one line each
from sim2real.cli.detect_train import finetune_cmd, run_cmd, train_cmd  # noqa: E402

app.command("train")(train_cmd)
app.command("run")(run_cmd)
app.command("finetune")(finetune_cmd)
