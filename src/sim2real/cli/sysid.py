"""``sim2real sysid ...``: identify a MuJoCo model's parameters from real robot logs, and
evaluate a fitted model on logs (thin shells over :mod:`sim2real.sysid`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    help="System identification of MuJoCo models from robot logs.", no_args_is_help=True
)


@app.command("fit")
def fit_cmd(
    model: Annotated[
        str, typer.Option("--model", help="Built-in model name or an MJCF / URDF path.")
    ],
    log: Annotated[list[Path], typer.Option("--log", help="Log(s) to fit on (CSV or JSON).")],
    out: Annotated[Path, typer.Option("--out", help="The fitted standalone MJCF to write.")],
    spec: Annotated[
        Path | None, typer.Option("--spec", help="Parameter spec YAML (built-in's default).")
    ] = None,
    mapping: Annotated[
        Path | None, typer.Option("--mapping", help="Column mapping YAML (built-in's default).")
    ] = None,
    holdout: Annotated[
        list[Path] | None, typer.Option("--holdout", help="Log(s) to evaluate on.")
    ] = None,
    report: Annotated[
        Path | None, typer.Option("--report", help="Folder for the HTML report.")
    ] = None,
    segment_s: Annotated[
        float | None,
        typer.Option(
            "--segment-s", help="Multiple-shooting segment length \\[s] (built-in's, else 0.5)."
        ),
    ] = None,
    starts: Annotated[
        int, typer.Option("--starts", help="Extra random starting points (with the seed).")
    ] = 0,
    max_iter: Annotated[
        int, typer.Option("--max-iter", help="Optimizer iterations per start at most.")
    ] = 100,
    seed: Annotated[
        int, typer.Option("--seed", min=0, help="Seed of extra starts and bootstrap (>= 0).")
    ] = 0,
    quiet: Annotated[bool, typer.Option("--quiet", help="Print only the output paths.")] = False,
) -> None:
    """Fit the parameters of MODEL to LOGs (multiple shooting, bounded least squares run to
    convergence) and write FITTED.xml, its sidecar, parameters with uncertainty, dr.yaml and
    an optional report. Parameters left at a bound are reported (exit code 0)."""
    from sim2real.core.errors import InputError
    from sim2real.sysid.run import fit_config_for, identify

    if (segment_s is not None and segment_s <= 0) or starts < 0 or max_iter < 1:
        raise InputError(None, "--segment-s/--starts/--max-iter", "must be positive")
    if out.suffix.lower() != ".xml":
        raise InputError(None, "--out", f"the fitted model must be an .xml file, got {out}")
    from sim2real.core.atomic import check_writable

    check_writable(out, "--out")
    if report is not None:
        check_writable(report, "--report", folder=True)
    cfg = fit_config_for(model, segment_s=segment_s, starts=starts, max_iter=max_iter, seed=seed)
    result = _run_with_progress(
        lambda progress: identify(
            model, log, spec=spec, mapping=mapping, holdout=holdout, cfg=cfg, progress=progress
        ),
        quiet,
    )
    paths = result.write(out, report)
    if not quiet:
        for line in result.summary_lines():
            typer.echo(line)
    else:
        for note in result.fit.bound_notes():
            typer.echo(f"WARNING: {note} (fit hit its bound)")
    for p in paths:
        typer.echo(f"wrote {p}")


def _run_with_progress(job, quiet: bool):
    if quiet:
        return job(None)
    from rich.progress import SpinnerColumn, TextColumn, TimeElapsedColumn

    from sim2real.cli.progress import transient_progress

    with transient_progress(
        SpinnerColumn(), TextColumn("fitting"), TextColumn("{task.completed} parameter sets"),
        TextColumn("cost {task.fields[cost]:.4g}"), TimeElapsedColumn(),
    ) as bar:  # fmt: skip
        task = bar.add_task("fit", total=None, cost=float("nan"))
        return job(lambda n, cost: bar.update(task, completed=n, cost=cost))


@app.command("eval")
def eval_cmd(
    model: Annotated[
        str, typer.Option("--model", help="Built-in name, or an MJCF/URDF (e.g. FITTED.xml).")
    ],
    log: Annotated[list[Path], typer.Option("--log", help="Log(s) to evaluate on.")],
    mapping: Annotated[
        Path | None, typer.Option("--mapping", help="Column mapping YAML (built-in's default).")
    ] = None,
    builtin_mapping: Annotated[
        str | None,
        typer.Option("--builtin-mapping", help="Use this built-in model's column mapping."),
    ] = None,
    plain: Annotated[
        bool, typer.Option("--plain", help="Ignore the sidecar: plain MuJoCo behaviour.")
    ] = False,
) -> None:
    """Position RMSE of MODEL on LOGs over 0.5 s and 2 s segments started from the measured
    state and driven by the logged controls; a log whose header states its controller gain
    (a servo's kp) is replayed at that gain."""
    from sim2real.sysid.run import evaluate_model

    evaluation = evaluate_model(
        model, log, mapping=mapping, builtin_mapping=builtin_mapping, plain=plain
    )
    for line in evaluation.summary_lines():
        typer.echo(line)
