"""The detector's folder and report: ``DET/`` with its weights, ``detector.yaml``, the resolved
``config.yaml``, ``train_log.jsonl`` and ``report/`` (sample randomized frames with their
labels, the loss curve, the validation errors)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from sim2real.core.atomic import atomic_folder
from sim2real.core.report import (
    ReportSection,
    keep_image_extent,
    pyplot,
    save_figure,
    write_html_report,
)
from sim2real.detect.detector import save_detector
from sim2real.detect.keypoints import keypoint_targets, project


def frames_figure(path: Path, frames, geometry, detections=None, title="") -> None:
    """Up to 8 frames in a grid, the reference centre (+) and keypoints (dots) drawn, and a
    detection's centre (x) when ``detections`` (one per frame, or None) are given."""
    plt = pyplot()
    n = min(8, len(frames.labels))
    cols = min(4, n)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.6 * rows), squeeze=False)
    for k, ax in enumerate(axes.ravel()):
        ax.axis("off")
        if k >= n:
            continue
        lab = frames.labels[k]
        ax.imshow(frames.rgb[k])
        c = lab.T_cam_part[:3, :3] @ geometry.centre_part_m + lab.T_cam_part[:3, 3]
        if c[2] > 0:
            uv = project(c[None], lab.K)[0]
            kp = keypoint_targets(
                lab.T_cam_part, lab.K, geometry.keypoints_part_m, geometry.symmetries
            )
            ax.plot(kp[:, 0], kp[:, 1], ".", color="yellow", ms=3)
            ax.plot(uv[0], uv[1], "+", color="lime", ms=10, mew=2)
        det = detections[k] if detections is not None else None
        if det is not None and det.found:
            ax.plot(det.centre_px[0], det.centre_px[1], "x", color="red", ms=10, mew=2)
        keep_image_extent(ax, frames.rgb.shape[1:])
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    save_figure(fig, path)


def loss_figure(path: Path, log: list[dict]) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    steps = [r["step"] for r in log]
    for key in ("total", "heat", "offset", "log_zf", "dz", "keypoints"):
        if log and key in log[0]:
            ax.plot(steps, [r[key] for r in log], label=key, lw=1.5 if key == "total" else 0.8)
    ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel("weighted loss")
    ax.legend()
    ax.grid(alpha=0.3)
    save_figure(fig, path)


def write_detector_folder(result, out: str | Path) -> Path:
    """Write ``DET/`` (atomically: all of it or nothing) from a ``train.TrainResult``."""
    import yaml

    out = Path(out)
    with atomic_folder(out) as tmp:
        save_detector(result.detector, tmp)
        (tmp / "config.yaml").write_text(
            yaml.safe_dump(result.config.model_dump(mode="json"), sort_keys=False)
        )
        (tmp / "train_log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in result.log))
        rep = tmp / "report"
        rep.mkdir()
        geometry = result.detector.geometry
        frames_figure(rep / "samples.png", result.preview, geometry, title="randomized frames")
        loss_figure(rep / "loss.png", result.log)
        val = result.val.summary()
        write_html_report(
            rep,
            f"detector for {result.detector.info.model_name}",
            [
                ReportSection(
                    "Randomized training frames",
                    "green +: the part's bounding-box centre; yellow: its keypoints (canonical).",
                    ["samples.png"],
                ),
                ReportSection("Training loss", images=["loss.png"], table=_timings(result)),
                ReportSection(
                    "Validation on other simulated frames",
                    "The last row: frames drawn without the part, where a detection is false.",
                    table=[(k, str(v)) for k, v in val.items()] + _absent_row(result),
                ),
            ],
        )
    return out


def _absent_row(result) -> list[tuple[str, str]]:
    found = result.detector.info.absent_found
    if found is None:
        return []
    share = f"{100 * found:.0f} % of {result.config.absent_frames}"
    return [("found in frames without the part", share)]


def _timings(result) -> list[tuple[str, str]]:
    return [(k, str(v)) for k, v in result.timings.items()]


def detections_summary(metrics) -> str:
    s = metrics.summary()
    parts = [f"{s['frames']} frames", f"detected {100 * s['detection_rate']:.0f} %"]
    if s["median_3d_m"] is not None:
        parts.append(f"median 3D {100 * s['median_3d_m']:.1f} cm")
        parts.append(f"2D {s['median_2d_px']:.1f} px")
    return ", ".join(parts)


def absent_summary(result) -> str:
    """'; N frames without the part: found in X % (...)' of a ``train.TrainResult``, or ''."""
    found = result.detector.info.absent_found
    if found is None:
        return ""
    n = result.config.absent_frames
    # said beside the figure: alone, "found in 56 %" of empty frames reads as a broken detector
    return (
        f"; {n} frames without the part: found in {100 * found:.0f} % (found is a peak to "
        "check, not a presence test: docs/detect.md)"
    )


def real_detections_figure(path: Path, frames, run, detector, title: str) -> None:
    """Up to 8 real frames (evenly spread) with the reference centre (+, green) and the
    detection (x, red; its keypoints as red dots)."""
    plt = pyplot()
    picks = np.linspace(0, len(frames) - 1, min(8, len(frames))).round().astype(int)
    cols = min(4, len(picks))
    rows = (len(picks) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 2.9 * rows), squeeze=False)
    centre = detector.geometry.centre_part_m
    for ax in axes.ravel():
        ax.axis("off")
    for ax, k in zip(axes.ravel(), picks, strict=False):
        frame, rgb, _, K, T = frames[k]
        det = run.detections[k][1]
        ax.imshow(rgb)
        if T is not None:
            uv = project((T[:3, :3] @ centre + T[:3, 3])[None], K)[0]
            ax.plot(uv[0], uv[1], "+", color="lime", ms=12, mew=2)
        if det.found:
            ax.plot(det.centre_px[0], det.centre_px[1], "x", color="red", ms=12, mew=2)
            if det.keypoints_px is not None:
                ax.plot(det.keypoints_px[:, 0], det.keypoints_px[:, 1], ".", color="red", ms=4)
        keep_image_extent(ax, rgb.shape)
        ax.set_title(f"frame {frame}: conf {det.confidence:.2f}", fontsize=8)
    fig.suptitle(f"{title}: reference centre (+), detection (x)")
    fig.tight_layout()
    save_figure(fig, path)
