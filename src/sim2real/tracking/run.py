"""Track a part through a recorded sequence (``sim2real track run``) and draw what happened."""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sim2real.core.atomic import write_text_atomic
from sim2real.core.errors import InputError
from sim2real.core.mesh_io import Mesh
from sim2real.tracking.tracker import Tracker, TrackerConfig


@dataclass
class TrackRun:
    records: list[dict]
    """One per frame: frame, status, score, T_cam_part (4x4), ms."""
    tracker: Tracker


def track_sequence(
    mesh: Mesh,
    sequence,
    init: np.ndarray | None,
    config: TrackerConfig | None = None,
    progress=None,
    returns=None,
    views=None,
) -> TrackRun:
    """Run the tracker over every frame of ``sequence`` (``sim2real.tracking.sequence.Sequence``).
    ``init``: the part's pose in the first frame, or None to search for it. A frame that cannot
    be read as the camera's size is reported ``lost`` (with a warning), never tracked.
    ``returns``, ``views``: the part's tuned ``SurfaceReturns`` and stored ``ModelViews``, if
    any (a prepared MODEL_DIR's)."""
    tracker = Tracker(mesh, sequence.camera, config, returns, views)
    tracker.initialize(init)
    records = []
    for i, frame_id in enumerate(sequence.frame_ids):
        try:
            depth = sequence.read(i)
        except InputError as err:
            warnings.warn(f"frame {frame_id}: {err}; reported lost", stacklevel=2)
            tracker.status, tracker.velocity = "lost", np.eye(4)
            records.append(
                {
                    "frame": int(frame_id),
                    "status": "lost",
                    "score": 0.0,
                    "T_cam_part": (tracker.T if tracker.T is not None else np.eye(4)).tolist(),
                    "ms": 0.0,
                }
            )
            continue
        records.append(tracker.update(depth).record(int(frame_id)))
        if progress is not None:
            progress(i)
    return TrackRun(records, tracker)


@dataclass
class PartResidual:
    """Measured minus model depth on the pixels where the model, seen at a pose, has a measured
    return that is not an occluder in front of it."""

    pixels: int
    """Pixels of the part's image with such a return."""
    part_pixels: int
    median_abs_mm: float
    within_share: float
    """Share of those pixels within ``gate_m`` of the model (the rest: see-through, where the
    model is larger than the real part, or mixed pixels at its outline)."""
    within_rms_mm: float
    """RMS over the pixels within the gate."""


def part_residual(
    mesh: Mesh,
    camera,
    depth: np.ndarray,
    T_cam_part: np.ndarray,
    occluder_m: float = 0.02,
    gate_m: float = 0.01,
) -> PartResidual:
    """How well the model at ``T_cam_part`` explains the frame ``depth`` ((H, W) metres) on the
    part's own pixels (returns ``occluder_m`` or more in front are ignored)."""
    from sim2real.sensors.render import DepthRenderer
    from sim2real.sensors.scene import Scene, SceneObject

    model = DepthRenderer(Scene([SceneObject(mesh, T_cam_part)]), camera).render(None).depth_m
    part = model > 0
    use = part & (depth > 0) & (depth > model - occluder_m)
    dz = 1e3 * (depth[use] - model[use]).astype(np.float64)
    if dz.size == 0:
        return PartResidual(0, int(part.sum()), float("nan"), 0.0, float("nan"))
    within = np.abs(dz) < 1e3 * gate_m
    return PartResidual(
        int(use.sum()),
        int(part.sum()),
        float(np.median(np.abs(dz))),
        float(within.mean()),
        float(np.sqrt(np.mean(dz[within] ** 2))) if within.any() else float("nan"),
    )


def write_poses_jsonl(path: str | Path, records: list[dict]) -> None:
    write_text_atomic(path, "".join(json.dumps(r) + "\n" for r in records))


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
    from sim2real.core.report import ReportSection, _pyplot, save_figure, write_html_report

    plt = _pyplot()
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    frames = [r["frame"] for r in run.records]
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
    ax.plot(frames, [r["score"] for r in run.records], color="black", linewidth=1)
    for r in run.records:
        ax.axvspan(
            r["frame"] - 0.5, r["frame"] + 0.5, color=colours[r["status"]], alpha=0.15, linewidth=0
        )
    ax.set_ylabel("score")
    ax.set_title("score per frame; background: green tracking, blue recovered, red lost")
    if evaluation is not None:
        err = axes[1, 0]
        per_frame = evaluation.per_frame
        xs = sorted(per_frame)
        err.plot(xs, [1e3 * per_frame[f]["adds_m"] for f in xs], color="tab:purple", label="ADD-S")
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
        uv = project_model(run.tracker, np.asarray(r["T_cam_part"]))
        ax.scatter(uv[:, 0], uv[:, 1], s=1, color=colours[r["status"]])
        ax.set_title(f"frame {r['frame']}: {r['status']} ({r['score']:.2f})", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    save_figure(fig, folder / "overlays.png", dpi=100)
    images.append("overlays.png")
    statuses = {s: sum(r["status"] == s for r in run.records) for s in colours}
    ms = [r["ms"] for r in run.records if r["ms"] > 0]
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
