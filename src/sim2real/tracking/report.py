"""The report of a tracked sequence (``sim2real track run --report``): score and error over
time with the status of each frame, and the model drawn on a few frames."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sim2real.tracking.run import TrackRun
from sim2real.tracking.tracker import Tracker


def project_model(tracker: Tracker, T: np.ndarray) -> np.ndarray:
    """(P, 2) pixel positions of the model's visible points at pose ``T``."""
    k = tracker.views.nearest(T)
    p = tracker.views.points[k] @ T[:3, :3].T + T[:3, 3]
    cam = tracker.camera
    p = p[p[:, 2] > 1e-6]
    return np.stack(
        [cam.fx * p[:, 0] / p[:, 2] + cam.cx, cam.fy * p[:, 1] / p[:, 2] + cam.cy], axis=1
    )


def write_track_report(
    folder: str | Path, run: TrackRun, sequence, evaluation=None, overlays: int = 4
) -> Path:
    """``folder/index.html``: score (and error, when ground truth is known) over time, status
    bands, and the model drawn on a few frames."""
    from sim2real.core.report import (
        ReportSection,
        keep_image_extent,
        pyplot,
        save_figure,
        write_html_report,
    )

    plt = pyplot()
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    frames = [r.frame for r in run.records]
    colours = {"tracking": "tab:green", "recovered": "tab:blue", "lost": "tab:red"}
    fig, axes = plt.subplots(
        2 if evaluation is not None else 1,
        1,
        figsize=(10, 5.5 if evaluation is not None else 3),
        sharex=True,
        squeeze=False,
        constrained_layout=True,
    )
    ax = axes[0, 0]
    ax.plot(frames, [r.score or 0.0 for r in run.records], color="black", linewidth=1)
    for r in run.records:
        ax.axvspan(r.frame - 0.5, r.frame + 0.5, color=colours[r.status], alpha=0.15, linewidth=0)
    ax.set_ylabel("score")
    ax.set_title("score per frame; background: green tracking, blue recovered, red lost")
    if evaluation is not None:
        err = axes[1, 0]
        per_frame = evaluation.per_frame
        xs = sorted(per_frame)
        err.plot(xs, [1e3 * per_frame[f]["add_m"] for f in xs], color="tab:purple", label="ADD")
        err.plot(xs, [1e3 * per_frame[f]["adds_m"] for f in xs], color="tab:purple", alpha=0.4,
                 linewidth=0.8, label="ADD-S (blind to slides along a face)")  # fmt: skip
        err.axhline(
            1e3 * 0.1 * evaluation.diameter_m,
            color="grey",
            linestyle="--",
            label="10 % of the diameter",
        )
        err.set_ylabel("error [mm]")
        err.set_yscale("log")
        err.legend(fontsize=8)
    axes[-1, 0].set_xlabel("frame")
    save_figure(fig, folder / "track.png", dpi=110)
    images = ["track.png"]
    picks = np.linspace(0, len(run.records) - 1, min(overlays, len(run.records))).astype(int)
    fig, axs = plt.subplots(
        1, len(picks), figsize=(4 * len(picks), 3.4), squeeze=False, constrained_layout=True
    )
    for ax, i in zip(axs[0], picks, strict=True):
        r = run.records[i]
        depth = sequence.read(i)
        ax.imshow(np.where(depth > 0, depth, np.nan), cmap="gray")
        uv = project_model(run.tracker, r.T_cam_part)
        ax.scatter(uv[:, 0], uv[:, 1], s=1, color=colours[r.status])
        keep_image_extent(ax, depth.shape)
        ax.set_title(f"frame {r.frame}: {r.status} ({r.score or 0:.2f})", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    save_figure(fig, folder / "overlays.png", dpi=100)
    images.append("overlays.png")
    statuses = {s: sum(r.status == s for r in run.records) for s in colours}
    ms = [r.ms for r in run.records if r.ms]
    table = [(k, str(v)) for k, v in statuses.items()] + [
        ("median ms per frame", f"{np.median(ms):.1f}" if ms else "-")
    ]
    if evaluation is not None:
        table += [
            (line.split(":")[0], ":".join(line.split(":")[1:]).strip())
            for line in evaluation.summary_lines()
        ]
    sections = [
        ReportSection(
            "Track",
            "Score over time (and the error against ground truth when known); the model's points drawn on a few frames in the colour of their status.",
            images,
            table,
        )
    ]
    return write_html_report(folder, "sim2real track run", sections)
