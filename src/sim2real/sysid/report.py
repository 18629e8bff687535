"""Identification report: measured vs simulated overlays (each segment started from the
measured state and driven by the logged controls), the convergence of the cost, and tables of
parameters and errors, as PNGs and an ``index.html``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sim2real.core.report import ReportSection, pyplot, save_figure, write_html_report
from sim2real.sysid.evaluate import HorizonError

if TYPE_CHECKING:
    from sim2real.sim.logs import RobotLog


def overlay_png(
    path: Path,
    logs: list[RobotLog],
    ours: HorizonError,
    reference: HorizonError | None = None,
    *,
    title: str = "",
    ref_label: str = "reference",
    max_seconds: float = 20.0,
) -> None:
    """One panel per (log, joint): measured position (black), simulated segments (red) and the
    reference's (blue, dashed) over the first ``max_seconds`` of each log."""
    plt = pyplot()
    joints = logs[0].joints
    n = len(logs) * len(joints)
    fig, axes = plt.subplots(n, 1, figsize=(12, 2.6 * n), squeeze=False, constrained_layout=True)
    segs = ours.segs
    t_seg = np.arange(segs.steps + 1) * segs.dt_s
    for li, log in enumerate(logs):
        for j, joint in enumerate(joints):
            ax = axes[li * len(joints) + j, 0]
            keep = log.time_s <= max_seconds
            ax.plot(log.time_s[keep], log.qpos[keep, j], "k", lw=1.2, label="measured")
            for s in np.flatnonzero(segs.log_index == li):
                if segs.t0_s[s] > max_seconds:
                    continue
                lab = "simulated (fit)" if s == np.flatnonzero(segs.log_index == li)[0] else None
                ax.plot(segs.t0_s[s] + t_seg, ours.qpos_sim[s, :, j], "r", lw=1, label=lab)
                ax.plot(segs.t0_s[s], ours.qpos_sim[s, 0, j], "r.", ms=4)
                if reference is not None:
                    lab = ref_label if lab else None
                    ax.plot(segs.t0_s[s] + t_seg, reference.qpos_sim[s, :, j], "b--", lw=0.8,
                            label=lab)  # fmt: skip
            ax.set_ylabel(f"{joint} [rad]")
            ax.set_title(f"{Path(log.source).parent.name}/{Path(log.source).name}", fontsize=9)
            ax.legend(fontsize=8, loc="upper left")
    axes[-1, 0].set_xlabel("time [s]")
    if title:
        fig.suptitle(title, fontsize=10)
    save_figure(fig, path, dpi=90)


def convergence_png(path: Path, history: list[float]) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3), constrained_layout=True)
    ax.semilogy(np.arange(len(history)), history)
    ax.set_xlabel("least-squares iteration")
    ax.set_ylabel("mean Huber loss")
    save_figure(fig, path, dpi=90)


def write_report(result: Any, folder: Path) -> Path:
    """The report of a :class:`~sim2real.sysid.run.SysidResult` in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    sections = []
    fit = result.fit
    table = []
    for j, (p, v, s) in enumerate(zip(result.space.params, fit.values, result.param_std(), strict=True)):  # fmt: skip
        spread = "unidentified" if np.isinf(s) else f"± {s:.2g}"
        flag = "  AT ITS BOUND" if fit.at_bound[j] else ""
        table.append((p.name, f"{v:.5g} {spread}  (nominal {p.nominal:.5g}, bounds "
                              f"{p.bounds[0]:g}..{p.bounds[1]:g}){flag}"))  # fmt: skip
    table += [
        (k, f"{v:.5g} ± {result.derived_std.get(k, 0.0):.2g}") for k, v in result.derived.items()
    ]
    sections.append(ReportSection("Identified parameters", " ".join(fit.notes), table=table))
    if fit.identifiability is not None:
        ident = fit.identifiability
        text = (
            "Principal directions of the fit in the unit cube of the free parameters (1 = a "
            "parameter's whole range), from the residuals' sensitivity at the optimum. "
            + (" ".join(ident.describe()) or "Every direction is pinned by the logs.")
        )
        rows = [
            (f"direction {k + 1}", f"curvature {c:.2e} of the largest, 1-sigma "
             f"{'inf' if np.isinf(sd) else f'{sd:.3g}'}{' (unidentified)' if u else ''}")
            for k, (c, sd, u) in enumerate(zip(ident.relative_curvature, ident.std,
                                               ident.unidentified, strict=True))
        ]  # fmt: skip
        sections.append(ReportSection("Identifiability", text, table=rows))
    err_rows = []
    for label, errs in (
        ("train (exact model)", result.train_errors),
        ("hold-out (exact model)", result.holdout_errors),
        ("plain MJCF, no sidecar", result.plain_errors),
        (result.reference.label if result.reference else "reference", result.reference_errors),
    ):
        for h, e in errs.items():
            err_rows.append((f"{label}, {h:g} s segments", f"{e.rmse_rad:.4f} rad ({e.segments})"))
    approx = "; ".join(result.approximations) or "none: every fitted term has a MuJoCo equivalent"
    cost = result.approximation_cost()
    if cost:
        approx += ". Cost of the plain MJCF (its RMSE minus the exact model's): " + ", ".join(
            f"{h:g} s {d:+.4f} rad" for h, d in cost.items()
        )
    sections.append(
        ReportSection("Position RMSE", f"MJCF approximations: {approx}", table=err_rows)
    )
    logs, errs, ref = (
        (result.holdout, result.holdout_errors, result.reference_errors)
        if result.holdout
        else (result.logs, result.train_errors, result.reference_errors)
    )
    h = max(errs) if errs else None
    if h is not None:
        name = "overlay.png"
        ref_label = result.reference.label if result.reference else "reference"
        overlay_png(folder / name, logs, errs[h], ref.get(h), ref_label=ref_label,
                    title=f"{h:g} s segments from the measured state, logged controls")  # fmt: skip
        which = "hold-out" if result.holdout else "training"
        sections.append(ReportSection(f"Measured vs simulated ({which} logs)", images=[name]))
    convergence_png(folder / "convergence.png", fit.history)
    sections.append(ReportSection("Convergence", images=["convergence.png"]))
    notes = [n for log in result.logs + result.holdout for n in log.notes]
    sections.append(ReportSection("Log validation", "; ".join(notes)))
    return write_html_report(folder, f"System identification: {result.model_name}", sections)
