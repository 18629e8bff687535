"""The velocity-tracking part of the policy report (results whose task declares
:class:`~sim2real.learn.envs.velocity_metrics.VelocityTracking`): a table of falls and
tracking errors per world with the targets judged, and per world a plot of commanded vs
measured velocities over one episode and an image strip of that episode."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sim2real.core.report import ReportSection, pyplot, save_figure
from sim2real.learn.envs.velocity_metrics import VelocityMetrics
from sim2real.learn.evaluate import EvalResult
from sim2real.learn.strip import render_strip

STRIP_FRAMES = 6


def tracking_grid(results: dict[str, list[EvalResult]]) -> list[list[str]]:
    """Header then one row per policy and world: falls, each bin's error, targets judged."""
    rows = [(name, r) for name, per in results.items() for r in per if _metrics(r)]
    if not rows:
        return []
    first = rows[0][1].metrics
    head = ["policy", "world", "falls"]
    head += [f"|{b.command} err| [{b.unit}], |cmd| {b.lo:g}-{b.hi:g}" for b in first.bins]
    head += [f"target {t.bin or 'falls'} <= {t.limit:g}" for t in first.targets]
    grid = [head]
    for name, r in rows:
        m = r.metrics
        cells = [name, r.world, f"{100 * m.fall_rate:.1f} % of {m.episodes}"]
        cells += [f"{b.mean_abs_err:.3f} ({b.segments})" for b in m.bins]
        cells += [f"{t.judge(m.value(t))} ({m.value(t):.3g})" for t in m.targets]
        grid.append(cells)
    return grid


def velocity_png(path: Path, trace: dict, title: str) -> None:
    """Commanded (dashed) and measured velocity of each command against time."""
    plt = pyplot()
    names, units = trace["names"], trace["units"]
    fig, axes = plt.subplots(len(names), 1, figsize=(9, 2.2 * len(names)), sharex=True)
    for k, ax in enumerate(np.atleast_1d(axes)):
        ax.plot(trace["t_s"], trace["command"][:, k], "k--", label="commanded")
        ax.plot(trace["t_s"], trace["measured"][:, k], "C0", lw=0.9, label="measured")
        ax.set(ylabel=f"{names[k]} [{units[k]}]")
    ax.set(xlabel="time [s]")
    axes[0].legend(fontsize=7, loc="upper right")
    end = "ended by a fall" if trace["fell"] else "ran to the time limit"
    axes[0].set_title(f"{title}: one episode ({end}), body frame")
    fig.tight_layout()
    save_figure(fig, path, dpi=90)


def tracking_sections(folder: Path, results: dict[str, list[EvalResult]]) -> list[ReportSection]:
    """The sections (none when no result has velocity metrics); writes the PNGs."""
    grid = tracking_grid(results)
    if not grid:
        return []
    settle = next(r.metrics.settle_s for per in results.values() for r in per if _metrics(r))
    text = (
        "Falls: episodes ended by a termination before the time limit. Tracking error: per "
        "command segment (a run of steps under one command), the mean of the body-frame base "
        f"velocity after the first {settle:g} s against the command; the mean of "
        "|measured - command| over the segments whose |command| lies in the bin (their count "
        "in brackets); a segment ended by a fall is left out."
    )
    sections = [ReportSection("Velocity tracking", text, grid=grid)]
    failed: list[str] = []
    for p, (name, per) in enumerate(results.items()):
        for w, r in enumerate(per):
            if not _metrics(r) or r.metrics.trace is None:
                continue
            trace, stem = r.metrics.trace, f"p{p}_w{w}"
            velocity_png(folder / f"velocity_{stem}.png", trace, r.world)
            images, why = [f"velocity_{stem}.png"], ""
            frames = np.linspace(0, len(trace["qpos"]) - 1, STRIP_FRAMES).round().astype(int)
            if not failed:
                try:
                    render_strip(
                        folder / f"strip_{stem}.png", trace["model"], trace["qpos"][frames]
                    )
                    images.append(f"strip_{stem}.png")
                except RuntimeError as err:
                    failed.append(str(err))
            if failed:
                why = f" No image strip: {failed[0]}."
            times = ", ".join(f"{trace['t_s'][k]:.1f}" for k in frames)
            text = f"{name}. Commanded vs measured; strip frames at t = {times} s.{why}"
            sections.append(ReportSection(f"{r.world}: one episode", text, images))
    return sections


def _metrics(r: EvalResult) -> bool:
    return isinstance(r.metrics, VelocityMetrics) and not r.skipped
