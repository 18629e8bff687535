"""``sim2real actuator ...``: fit an actuator model on servo bench logs, and replay a fitted
model on a log (thin shells over :mod:`sim2real.actuators.run`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(help="Actuator models fitted to real servo logs.", no_args_is_help=True)


@app.command("fit")
def fit_cmd(
    logs: Annotated[list[Path], typer.Option("--logs", help="Bench log(s) (BAM JSON).")],
    model: Annotated[
        str,
        typer.Option(
            "--model",
            help="pd, dc, coulomb-viscous, stribeck, load-dependent, load-dependent-stribeck, "
            "directional, quadratic; or a learned network: net (position error and velocity "
            "history) or net-kp (the error times the firmware gain).",
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="The fitted actuator YAML to write.")],
    bench: Annotated[
        str, typer.Option("--bench", help="The bench the logs come from.")
    ] = "servo-bam-xl330",
    holdout_kp: Annotated[
        float | None, typer.Option("--holdout-kp", help="Hold out the logs at this gain.")
    ] = None,
    time_budget_s: Annotated[
        float, typer.Option("--time-budget", help="Optimizer time budget [s].")
    ] = 100.0,
    max_evals: Annotated[int, typer.Option("--max-evals", help="Evaluations at most.")] = 3000,
    seed: Annotated[int, typer.Option("--seed", help="CMA-ES (or network training) seed.")] = 0,
    restarts: Annotated[
        int,
        typer.Option(
            "--restarts",
            min=0,
            help="Extra CMA-ES runs sharing the budget, or trainings (best train MAE kept).",
        ),
    ] = 2,
) -> None:
    """Fit MODEL to LOGS by simulating the bench (CMA-ES on the position MAE) and write OUT.
    A network (net, net-kp) is trained on inverse-dynamics torques, written beside OUT
    (.pt, .onnx), and judged by simulating the bench with it, like the others."""
    from sim2real.actuators.run import NetFit, fit_command

    fit, hold = fit_command(
        logs, bench, model, out, holdout_kp, time_budget_s, max_evals, seed, restarts
    )
    if isinstance(fit, NetFit):
        text = f"train MAE {fit.train_mae_rad:.4f} rad"
        done = (
            f"network trained on {fit.samples} samples (torque RMSE {fit.torque_rmse_Nm:.4f} "
            f"of std {fit.target_std_Nm:.4f} N m) in {fit.fit_time_s:.1f} s"
        )
    else:
        text = f"train MAE {fit.train_mae_rad:.4f} rad (nominal {fit.nominal_mae_rad:.4f})"
        done = f"{fit.evals} evals in {fit.fit_time_s:.1f} s"
    if hold is not None:
        text += f", hold-out MAE {hold:.4f} rad"
    typer.echo(f"{text}; {done}")
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
    from sim2real.actuators.run import replay_command

    err = replay_command(act, log, out, plot)
    typer.echo(f"MAE {err:.4f} rad (torque-enabled samples)")
    typer.echo(f"predicted: {out}")
    if plot is not None:
        typer.echo(f"plot: {plot}")


@app.command("compare")
def compare_cmd(
    logs: Annotated[list[Path], typer.Option("--logs", help="Bench log(s) (BAM JSON).")],
    out: Annotated[Path, typer.Option("--out", help="Folder: models, comparison.csv, report.")],
    models: Annotated[
        list[str] | None,
        typer.Option(
            "--models",
            help="Models to compare (default: coulomb-viscous, stribeck, directional, net-kp).",
        ),
    ] = None,
    holdout_kp: Annotated[
        float | None, typer.Option("--holdout-kp", help="Hold out the logs at this gain.")
    ] = None,
    time_budget_s: Annotated[
        float, typer.Option("--time-budget", help="Optimizer time budget per model [s].")
    ] = 100.0,
    seed: Annotated[int, typer.Option("--seed", help="CMA-ES (or network training) seed.")] = 0,
) -> None:
    """Fit several models on the same logs and judge them on the same hold-out: a table
    (model x train MAE x hold-out MAE) and plots of measured vs predicted positions."""
    from sim2real.actuators.compare import compare_command

    chosen = models or ["coulomb-viscous", "stribeck", "directional", "net-kp"]
    _, index = compare_command(
        logs, chosen, out, holdout_kp, time_budget_s, seed, progress=typer.echo
    )
    typer.echo(f"report: {index}")
