"""Comparing actuator models on one bench: each model fitted on the logs at some gains and
judged on the logs at a held-out gain, by the same measure (position MAE of the simulated
bench driven by the logged goal positions, torque-enabled samples only).

Writes a table (``comparison.csv``) and, per held-out log, a plot of the measured position
against every model's prediction, gathered in an HTML report. Used by ``sim2real actuator
compare``, the benchmark and the demo.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sim2real.actuators.bench import simulate
from sim2real.actuators.fit import evaluate, fit_actuator
from sim2real.actuators.servo_log import ServoLog
from sim2real.core.atomic import write_text_atomic
from sim2real.core.report import ReportSection


@dataclass
class ModelResult:
    """One row of the comparison; MAEs in rad (``holdout_mae_rad`` None without hold-out)."""

    name: str
    config: object
    train_mae_rad: float
    holdout_mae_rad: float | None
    fit_time_s: float
    fit: object = None
    """What the fitter returned (a physical fit or a trained network), for saving."""

    def save(self, path: Path) -> Path:
        """The fitted model as an actuator YAML (a network's ``.pt`` / ``.onnx`` beside)."""
        from sim2real.actuators.models import save_actuator
        from sim2real.actuators.network import save_network

        record = {"train_mae_rad": self.train_mae_rad, "holdout_mae_rad": self.holdout_mae_rad}
        trained = getattr(self.fit, "trained", None)
        if trained is not None:
            save_network(trained, path, {"fit": record})
        else:
            save_actuator(self.config, path, {"fit": record})
        return path


Fitter = Callable[[str, list[ServoLog], float, int], object]
"""(model name, train logs, time budget [s], seed) -> a fit with ``config`` and
``fit_time_s``."""


def fit_physical(name: str, train: list[ServoLog], budget_s: float, seed: int):
    from sim2real.actuators.run import make_config

    return fit_actuator(make_config(name), train, time_budget_s=budget_s, seed=seed)


def fit_net(name: str, train: list[ServoLog], budget_s: float, seed: int):
    """A network trains in seconds; the time budget does not apply."""
    from sim2real.actuators.run import fit_network

    return fit_network(train, name, seed=seed)


def default_fitters() -> dict[str, Fitter]:
    from sim2real.actuators.run import NET_MODELS

    return dict.fromkeys(NET_MODELS, fit_net)


def compare_models(
    models: list[str],
    train: list[ServoLog],
    hold: list[ServoLog],
    *,
    time_budget_s: float = 100.0,
    seed: int = 0,
    fitters: dict[str, Fitter] | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[ModelResult]:
    """Fit each model on ``train`` (``fitters`` by name, else the physical fit) and evaluate it
    on ``train`` and ``hold``."""
    rows = []
    fitters = default_fitters() if fitters is None else fitters
    for name in models:
        fit = fitters.get(name, fit_physical)(name, train, time_budget_s, seed)
        cfg, seconds = fit.config, fit.fit_time_s
        row = ModelResult(
            name, cfg, evaluate(cfg, train), evaluate(cfg, hold) if hold else None, seconds, fit
        )
        rows.append(row)
        if progress is not None:
            held = f", hold-out {row.holdout_mae_rad:.4f}" if hold else ""
            progress(f"{name}: train {row.train_mae_rad:.4f} rad{held} ({seconds:.1f} s)")
    return rows


def table_rows(rows: list[ModelResult]) -> list[tuple[str, str]]:
    """(model, 'train x, hold-out y, fit z s') for a report table."""
    out = []
    for r in rows:
        held = f", hold-out {r.holdout_mae_rad:.4f} rad" if r.holdout_mae_rad is not None else ""
        out.append((r.name, f"train {r.train_mae_rad:.4f} rad{held}, fit {r.fit_time_s:.1f} s"))
    return out


def comparison_csv(rows: list[ModelResult]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["model", "train_mae_rad", "holdout_mae_rad", "fit_time_s"])
    for r in rows:
        held = "" if r.holdout_mae_rad is None else f"{r.holdout_mae_rad:.6f}"
        w.writerow([r.name, f"{r.train_mae_rad:.6f}", held, f"{r.fit_time_s:.2f}"])
    return buf.getvalue()


def overlay_png(path: Path, log: ServoLog, rows: list[ModelResult]) -> None:
    """Goal, measured and each model's predicted position against time, with the error
    below (torque-off time shaded)."""
    from sim2real.core.report import _pyplot, save_figure

    plt = _pyplot()
    fig, (ax, ax_err) = plt.subplots(
        2, 1, figsize=(8.5, 4.8), sharex=True, gridspec_kw={"height_ratios": [2, 1]}
    )
    ax.plot(log.t_s, log.goal_rad, "k:", lw=1, label="goal (command)")
    ax.plot(log.t_s, log.q_rad, "k", lw=1.8, label="measured")
    for k, r in enumerate(rows):
        pred = simulate(r.config, [log])[0, 0, : len(log.t_s)]
        err = np.abs(pred - log.q_rad)
        mae = float(err[log.enabled].mean()) if log.enabled.any() else float("nan")
        ax.plot(log.t_s, pred, f"C{k}--", lw=1.2, label=f"{r.name} (MAE {mae:.4f} rad)")
        ax_err.plot(log.t_s, err, f"C{k}", lw=1)
    for a in (ax, ax_err):
        a.fill_between(
            log.t_s, 0, 1, where=~log.enabled, color="0.9", transform=a.get_xaxis_transform()
        )
    ax.set(ylabel="position [rad]", title=f"{log.path.name}: kp {log.kp_fw:g}")
    ax.legend(fontsize=7, loc="best")
    ax_err.set(xlabel="time [s]", ylabel="|error| [rad]")
    fig.tight_layout()
    save_figure(fig, path, dpi=100)


def compare_command(
    log_paths: list[Path],
    models: list[str],
    out: Path,
    holdout_kp: float | None,
    time_budget_s: float = 100.0,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> tuple[list[ModelResult], Path]:
    """``sim2real actuator compare``: fit every model, save each (``OUT/<model>.yaml``) and
    write ``OUT/comparison.csv`` and the report ``OUT/index.html``."""
    from sim2real.actuators.run import MODELS, NET_MODELS, check_steps, split_logs
    from sim2real.actuators.servo_log import read_servo_log
    from sim2real.core.errors import InputError
    from sim2real.core.report import write_html_report

    known = (*MODELS, *NET_MODELS)
    for name in models:
        if name not in known:
            raise InputError("--models", name, f"expected some of {', '.join(known)}")
    logs = [read_servo_log(p) for p in log_paths]
    check_steps(logs)
    train, hold = split_logs(logs, holdout_kp)
    rows = compare_models(
        models, train, hold, time_budget_s=time_budget_s, seed=seed, progress=progress
    )
    out.mkdir(parents=True, exist_ok=True)
    for row in rows:
        row.save(out / f"{row.name}.yaml")
    gains = sorted({log.kp_fw for log in train})
    text = (
        f"Fitted on {len(train)} logs at kp {', '.join(f'{g:g}' for g in gains)}"
        + (
            f"; judged on the {len(hold)} logs at kp {holdout_kp:g}, which no fit saw"
            if hold
            else ""
        )
        + ". Position MAE of the bench simulated with each model, driven by the logged goal "
        "positions (torque-enabled samples)."
    )
    section = comparison_section(out, rows, hold or train, "Actuator models compared", text)
    return rows, write_html_report(out, "sim2real actuator comparison", [section])


def comparison_section(
    out: Path, rows: list[ModelResult], hold: list[ServoLog], title: str, text: str
) -> ReportSection:
    """Write the table and one overlay per held-out log (at most 4) into ``out``; the report
    section showing them."""
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / "comparison.csv", comparison_csv(rows))
    images = []
    for log in hold[:4]:
        name = f"actuator_{log.path.stem}.png"
        overlay_png(out / name, log, rows)
        images.append(name)
    return ReportSection(title, text, images, table_rows(rows))
