"""The comparison's pictures and files: measured vs predicted positions of held-out logs, the
table as CSV and as a report section."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np

from sim2real.actuators.bench import simulate
from sim2real.actuators.servo_log import ServoLog
from sim2real.core.atomic import write_text_atomic
from sim2real.core.report import ReportSection


def _cell(x: float | None) -> str:
    return "" if x is None else f"{x:.6f}"


def comparison_csv(rows, gains: list[float]) -> str:
    """One row per model: train MAE, the held-out MAE of each leave-one-gain-out fold and
    their mean, whether it extrapolates, the hold-out MAE (``--holdout-kp``), fit time."""
    buf = io.StringIO()
    w = csv.writer(buf)
    logo = [f"logo_kp{g:g}_mae_rad" for g in gains]
    head = ["model", "train_mae_rad", *logo, "logo_mean_mae_rad", "extrapolates"]
    w.writerow([*head, "holdout_mae_rad", "fit_time_s", "at_bounds"])
    for r in rows:
        folds = {f.held_kp: f.holdout_mae_rad for f in (r.logo.folds if r.logo else [])}
        logo_cells = [_cell(r.logo.logo_mae_rad), r.logo.extrapolates] if r.logo else ["", ""]
        tail = [_cell(r.holdout_mae_rad), f"{r.fit_time_s:.2f}", "; ".join(r.at_bounds)]
        per_gain = [_cell(folds.get(g)) for g in gains]
        w.writerow([r.name, _cell(r.train_mae_rad), *per_gain, *logo_cells, *tail])
    return buf.getvalue()


def table_rows(rows) -> list[tuple[str, str]]:
    """(model, 'train x, held-out gains y (mean), hold-out z, fit s') for a report table."""
    out = []
    for r in rows:
        text = f"train {r.train_mae_rad:.4f} rad"
        if r.logo is not None:
            per = ", ".join(f"kp {f.held_kp:g} {f.holdout_mae_rad:.4f}" for f in r.logo.folds)
            text += f"; leave one gain out: {per} (mean {r.logo.logo_mae_rad:.4f})"
            text += "" if r.logo.extrapolates else ", does not extrapolate"
        if r.holdout_mae_rad is not None:
            text += f"; hold-out {r.holdout_mae_rad:.4f} rad"
        if r.at_bounds:
            text += "; at bounds: " + ", ".join(n.split(" (")[0] for n in r.at_bounds)
        out.append((r.name, f"{text}; fit {r.fit_time_s:.1f} s"))
    return out


def overlay_png(path: Path, log: ServoLog, rows) -> None:
    """Goal, measured and each model's predicted position against time, with the error
    below (torque-off time shaded)."""
    from sim2real.core.report import pyplot, save_figure

    plt = pyplot()
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


def comparison_section(
    out: Path, rows, shown: list[ServoLog], title: str, text: str, gains: list[float] = ()
) -> ReportSection:
    """Write the table and one overlay per shown log (at most 4) into ``out``; the report
    section showing them."""
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / "comparison.csv", comparison_csv(rows, list(gains)))
    images = []
    for log in shown[:4]:
        name = f"actuator_{log.path.stem}.png"
        overlay_png(out / name, log, rows)
        images.append(name)
    return ReportSection(title, text, images, table_rows(rows))
