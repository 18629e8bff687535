"""The detector over a sequence of frames (``sim2real detect run``): one detection per frame,
the time each took, and the errors where reference poses are given."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sim2real.core.errors import InputError
from sim2real.detect.detection import Detection
from sim2real.detect.detector import Detector, detect_frame
from sim2real.detect.evaluate import DetectionMetrics, FrameError, frame_error, summarize


@dataclass
class DetectRun:
    detections: list[tuple[int, Detection]]
    ms_per_frame: list[float]
    errors: list[FrameError]
    """Per frame with a reference pose."""
    metrics: DetectionMetrics | None
    """None without reference poses."""
    absent_found: float | None = None
    """The detector's share found in randomized frames without its part (``DetectorFile``)."""

    def records(self) -> list[dict]:
        return [d.to_json(frame) for frame, d in self.detections]

    def time_summary(self) -> str:
        """The frames' times: the first apart (it pays the start-up), the rest as median and
        90th percentile (what a real-time loop budgets for)."""
        first, rest = self.ms_per_frame[0], self.ms_per_frame[1:]
        if not rest:
            return f"{first:.1f} ms (one frame, start-up included)"
        return (
            f"{np.median(rest):.1f} ms per frame (median; 90th percentile "
            f"{np.percentile(rest, 90):.1f}), the first {first:.1f} ms with start-up"
        )

    def summary_lines(self) -> list[str]:
        n = len(self.detections)
        found = sum(d.found for _, d in self.detections)
        lines = [f"{n} frames, part found in {found}, {self.time_summary()}"]
        agreement = [d.depth_agreement for _, d in self.detections if d.depth_agreement is not None]
        if agreement:
            lines.append(
                f"checked against the depth: {len(agreement)} detections, median share of the "
                f"part's facing points confirmed {np.median(agreement):.2f} (lowest "
                f"{min(agreement):.2f})"
            )
        if self.absent_found is not None and found:
            lines.append(
                f"found is not a presence test: in training this detector said found in "
                f"{100 * self.absent_found:.0f} % of randomized frames without its part "
                "(docs/detect.md)"
            )
        if self.metrics is not None:
            from sim2real.detect.report import detections_summary

            lines.append(f"against the reference poses: {detections_summary(self.metrics)}")
        return lines


def detect_sequence(detector: Detector, frames: Iterable[tuple], progress=None) -> DetectRun:
    """Detect in each ``(frame id, rgb, depth_m or None, K, T_cam_part or None)``;
    ``progress(done, detection)`` after each frame."""
    detections, times, errors = [], [], []
    centre = detector.geometry.centre_part_m
    for frame, rgb, depth, K, T in frames:
        t0 = time.perf_counter()
        det = detect_frame(detector, rgb, depth, K)
        times.append(1e3 * (time.perf_counter() - t0))
        detections.append((frame, det))
        if T is not None:
            errors.append(frame_error(frame, det, T, centre, K))
        if progress is not None:
            progress(len(detections), det)
    metrics = summarize(errors) if errors else None
    return DetectRun(detections, times, errors, metrics, detector.info.absent_found)


def sequence_frames(sequence, source):
    """(frame id, rgb, depth, K, T_cam_part or None) of each frame of a tracking ``Sequence``,
    in the colour camera: depth not registered to the colour (another camera,
    ``--color-camera`` / ``--extrinsic``) is moved into it first (``depth_in_camera``). Each
    frame through its own camera (``frame_camera``): a BOP folder's frames may each have their
    own cam_K (``detect dataset`` jitters it), and frame 0's would move the others' positions
    and poses sideways, silently."""
    from sim2real.core.depth_register import depth_in_camera
    from sim2real.core.pose import invert_pose

    if not sequence.has_color:
        where = source if isinstance(source, str | Path) else Path(source[0])
        raise InputError(where, "rgb", "the detector needs colour frames (rgb/ or --color)")
    T_color_depth = (
        np.eye(4) if sequence.T_depth_color is None else invert_pose(sequence.T_depth_color)
    )
    gt = sequence.gt or {}
    for i, frame in enumerate(sequence.frame_ids):
        camera = frame_camera(sequence, i)
        color_camera = sequence.color_camera or camera  # None: colour registered to depth
        depth = depth_in_camera(sequence.read(i), camera, color_camera, T_color_depth)
        T = gt.get(frame)
        yield (frame, sequence.read_color(i), depth, color_camera.K,
               None if T is None else T_color_depth @ T)  # fmt: skip


def frame_camera(sequence, i: int):
    """The depth camera of a sequence's ``i``-th frame: ``Sequence.frame_camera``, or the one
    camera of a RealSense recording (``RealSenseRecording``, which has no per-frame ones)."""
    per_frame = getattr(sequence, "frame_camera", None)
    return sequence.camera if per_frame is None else per_frame(i)


def color_images(color: list[Path]) -> tuple[list[int], list[Path]]:
    """(frame ids, files) of colour images given as a folder or as files (``track run``'s
    ``--color``), numbered by their names (else 0, 1, ... in order)."""
    from sim2real.tracking.frame_numbers import numbered
    from sim2real.tracking.sequence_color import color_files

    ids, files, _ = numbered(color_files(color))
    return ids, files


def color_frames(color: list[Path], camera: Path, poses: dict | None = None):
    """(frame id, rgb, None, K, T_cam_part or None) of colour images alone (``color_images``)
    in ``camera``: a colour camera without depth; ``poses`` by frame id, where known. Checked
    at once, before any frame is detected: the files exist and the first is the camera's size."""
    from sim2real.core.camera_io import load_camera
    from sim2real.core.image_io import read_rgb

    ids, files = color_images(color)
    cam = load_camera(camera)
    first = read_rgb(files[0])
    if first.shape[:2] != (cam.height, cam.width):
        raise InputError(
            files[0],
            "size",
            f"{first.shape[1]}x{first.shape[0]} px, but the camera ({camera}) is "
            f"{cam.width}x{cam.height} px: give this image's camera",
        )
    poses = poses or {}
    rgbs = (first if k == 0 else read_rgb(p) for k, p in enumerate(files))  # the first read once
    return ((i, rgb, None, cam.K, poses.get(i)) for i, rgb in zip(ids, rgbs, strict=True))
