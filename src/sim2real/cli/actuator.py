"""``sim2real actuator ...``: fit an actuator model on servo bench logs (or choose one by
leave one gain out), compare models, and replay a fitted model on a log (thin shells over
:mod:`sim2real.actuators.run` and :mod:`sim2real.actuators.compare`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(help="Actuator models fitted to real servo logs.", no_args_is_help=True)

LogsOpt = Annotated[list[Path], typer.Option("--logs", help="Bench log(s) (BAM JSON).")]
HoldoutOpt = Annotated[
    float | None,
    typer.Option("--holdout-kp", help="Also hold out the logs at this gain (judged at the end)."),
]
BudgetOpt = Annotated[
    float, typer.Option("--time-budget", help="Time budget of one model's fit \\[s].")
]
EvalsOpt = Annotated[int, typer.Option("--max-evals", help="CMA-ES evaluations per run.")]
PopOpt = Annotated[int, typer.Option("--popsize", min=4, help="CMA-ES population.")]
SeedOpt = Annotated[int, typer.Option("--seed", min=0, help="CMA-ES (or network training) seed.")]
RestartsOpt = Annotated[
    int,
    typer.Option(
        "--restarts",
        min=0,
        help="Extra CMA-ES runs sharing the budget, or trainings (best train MAE kept).",
    ),
]


def _settings(popsize: int, max_evals: int, restarts: int, time_budget_s: float, seed: int):
    from sim2real.actuators.catalog import FitSettings

    return FitSettings(popsize, max_evals, restarts, time_budget_s, seed)


def _print_selection(selection) -> None:
    """The choice and why (each candidate's held-out-gain errors were printed as they came)."""
    for c in selection.candidates:
        if not c.extrapolates:
            typer.echo(
                f"  {c.name} does not extrapolate: held-out-gain MAE up to "
                f"{c.worst_ratio:.1f}x its training MAE"
            )
    typer.echo(f"chosen: {selection.chosen} ({selection.reason})")


@app.command("fit")
def fit_cmd(
    logs: LogsOpt,
    model: Annotated[
        str,
        typer.Option(
            "--model",
            help="auto (chosen by leave one gain out among --candidates), or one of: pd, dc, "
            "coulomb-viscous, stribeck, load-dependent, load-dependent-stribeck, directional, "
            "quadratic, <friction>-droop (torque-constant droop fitted too); a network: net, "
            "net-kp (error x firmware gain), net-volts (the firmware law's motor voltage).",
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="The fitted actuator YAML to write.")],
    bench: Annotated[
        str, typer.Option("--bench", help="The bench the logs come from.")
    ] = "servo-bam-xl330",
    holdout_kp: HoldoutOpt = None,
    candidates: Annotated[
        list[str] | None,
        typer.Option("--candidates", help="Models --model auto chooses among."),
    ] = None,
    validate: Annotated[
        bool,
        typer.Option(
            "--validate/--no-validate",
            help="Judge a named model by leave one gain out too (logs at two gains or more).",
        ),
    ] = True,
    time_budget_s: BudgetOpt = 120.0,
    max_evals: EvalsOpt = 2000,
    popsize: PopOpt = 32,
    seed: SeedOpt = 0,
    restarts: RestartsOpt = 2,
) -> None:
    """Fit MODEL to LOGS by simulating the bench (CMA-ES on the position MAE) and write OUT,
    with its error on gains it was not fitted to. A network is trained on inverse-dynamics
    torques, written beside OUT (.pt, .onnx), and judged by simulating the bench with it."""
    from sim2real.actuators.run import fit_actuator
    from sim2real.core.atomic import check_writable

    check_writable(out, "--out")
    settings = _settings(popsize, max_evals, restarts, time_budget_s, seed)
    res = fit_actuator(
        logs, bench, model, holdout_kp, settings, candidates, validate, progress=typer.echo
    )
    res.write(out)
    if res.selection is not None:
        _print_selection(res.selection)
    typer.echo(res.law.summary())
    fit = res.fit
    text = f"{res.name}: train MAE {fit.train_mae_rad:.4f} rad"
    if hasattr(fit, "nominal_mae_rad"):
        done = f"{fit.evals} evals in {fit.fit_time_s:.1f} s (nominal {fit.nominal_mae_rad:.4f})"
    else:
        done = (
            f"network trained on {fit.samples} samples (torque RMSE {fit.torque_rmse_Nm:.4f} "
            f"of std {fit.target_std_Nm:.4f} N m) in {fit.fit_time_s:.1f} s"
        )
    if res.validation is not None:
        held = ", ".join(f"kp {f.held_kp:g} {f.holdout_mae_rad:.4f}" for f in res.validation)
        text += f"; leave one gain out: {held} rad"
    if res.holdout_mae_rad is not None:
        text += f", hold-out MAE {res.holdout_mae_rad:.4f} rad"
    if res.selection is None and res.validation is None and res.holdout_mae_rad is None:
        text += " (no out-of-sample figure: logs at one gain, or --no-validate)"
    typer.echo(f"{text}; {done}")
    for note in fit.at_bounds:
        typer.echo(f"WARNING: fitted parameter at its bound: {note}")
    typer.echo(f"actuator: {out}")


@app.command("replay")
def replay_cmd(
    act: Annotated[Path, typer.Argument(help="Fitted actuator YAML.")],
    log: Annotated[Path, typer.Option("--log", help="Bench log to replay.")],
    out: Annotated[Path, typer.Option("--out", help="CSV of measured vs predicted positions.")],
    plot: Annotated[
        Path | None, typer.Option("--plot", help="Also a PNG of measured vs predicted.")
    ] = None,
) -> None:
    """Simulate the bench of LOG with the actuator ACT; write OUT (time, position_measured,
    position_predicted, goal_position, torque_enable)."""
    from sim2real.actuators.run import replay_actuator
    from sim2real.core.atomic import check_writable

    check_writable(out, "--out")
    if plot is not None:
        check_writable(plot, "--plot")
    replay = replay_actuator(act, log)
    if plot is not None:
        replay.plot(plot)
    replay.write_csv(out)
    typer.echo(f"MAE {replay.mae_rad:.4f} rad (torque-enabled samples)")
    typer.echo(f"predicted: {out}")
    if plot is not None:
        typer.echo(f"plot: {plot}")


@app.command("compare")
def compare_cmd(
    logs: LogsOpt,
    out: Annotated[Path, typer.Option("--out", help="Folder: models, comparison.csv, report.")],
    models: Annotated[
        list[str] | None,
        typer.Option("--models", help="Models to compare (default: auto's candidates)."),
    ] = None,
    holdout_kp: HoldoutOpt = None,
    time_budget_s: BudgetOpt = 120.0,
    max_evals: EvalsOpt = 2000,
    popsize: PopOpt = 32,
    seed: SeedOpt = 0,
    restarts: RestartsOpt = 2,
) -> None:
    """Judge several models by leave one gain out on LOGS (minus --holdout-kp), choose one by
    that error, fit each on all of them: a table (comparison.csv), the models and plots of
    measured vs predicted positions."""
    from sim2real.actuators.catalog import AUTO_CANDIDATES
    from sim2real.actuators.compare import compare_command

    settings = _settings(popsize, max_evals, restarts, time_budget_s, seed)
    chosen = models or list(AUTO_CANDIDATES)
    rows, selection, index = compare_command(
        logs, chosen, out, holdout_kp, settings, progress=typer.echo
    )
    if selection is not None:
        _print_selection(selection)
    else:
        typer.echo("no choice: leave one gain out needs logs at two gains or more")
    for r in rows:
        for note in r.at_bounds:
            typer.echo(f"WARNING: {r.name}: fitted parameter at its bound: {note}")
    typer.echo(f"report: {index}")
