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
            "directional or quadratic.",
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
    seed: Annotated[int, typer.Option("--seed", help="CMA-ES seed.")] = 0,
    restarts: Annotated[
        int, typer.Option("--restarts", min=0, help="Extra CMA-ES runs (best train MAE kept).")
    ] = 0,
) -> None:
    """Fit MODEL to LOGS by simulating the bench (CMA-ES on the position MAE) and write OUT."""
    from sim2real.actuators.run import fit_command

    fit, hold = fit_command(
        logs, bench, model, out, holdout_kp, time_budget_s, max_evals, seed, restarts
    )
    text = f"train MAE {fit.train_mae_rad:.4f} rad (nominal {fit.nominal_mae_rad:.4f})"
    if hold is not None:
        text += f", hold-out MAE {hold:.4f} rad"
    typer.echo(f"{text}; {fit.evals} evals in {fit.fit_time_s:.1f} s")
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
