"""How far detections are from reference poses: the bounding-box centre's 3D error, its 2D
error in the image, and the detection rate."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim2real.detect.keypoints import project


@dataclass
class FrameError:
    frame: int
    found: bool
    confidence: float
    error_3d_m: float | None
    error_2d_px: float | None
    error_z_m: float | None


@dataclass
class DetectionMetrics:
    """Errors over frames; medians over the frames where the part was found."""

    frames: int
    detection_rate: float
    median_3d_m: float | None
    median_2d_px: float | None
    median_z_m: float | None
    within_5cm: float
    """Share of all frames found with a 3D error under 5 cm."""

    def summary(self) -> dict:
        def r(v, k=5):
            return None if v is None else round(float(v), k)

        return {
            "frames": self.frames,
            "detection_rate": r(self.detection_rate, 3),
            "median_3d_m": r(self.median_3d_m),
            "median_2d_px": r(self.median_2d_px, 2),
            "median_z_m": r(self.median_z_m),
            "within_5cm": r(self.within_5cm, 3),
        }


def frame_error(frame: int, detection, T_cam_part: np.ndarray, centre_part_m, K) -> FrameError:
    """One detection against the reference ``T_cam_part`` (4, 4) seen with intrinsics ``K`` of
    the image the detection's pixels are in."""
    c = T_cam_part[:3, :3] @ np.asarray(centre_part_m) + T_cam_part[:3, 3]
    if not detection.found:
        return FrameError(frame, False, detection.confidence, None, None, None)
    e3 = float(np.linalg.norm(detection.position_m - c))
    e2 = float(np.linalg.norm(detection.centre_px - project(c[None], K)[0]))
    ez = float(abs(detection.position_m[2] - c[2]))
    return FrameError(frame, True, detection.confidence, e3, e2, ez)


def summarize(errors: list[FrameError]) -> DetectionMetrics:
    found = [e for e in errors if e.found]
    n = len(errors)

    def med(name):
        return float(np.median([getattr(e, name) for e in found])) if found else None

    return DetectionMetrics(
        n,
        len(found) / n if n else 0.0,
        med("error_3d_m"),
        med("error_2d_px"),
        med("error_z_m"),
        sum(e.error_3d_m < 0.05 for e in found) / n if n else 0.0,
    )


def evaluate_frames(
    detector, frames: list[tuple], progress=None
) -> tuple[DetectionMetrics, list[FrameError]]:
    """Detect in each ``(frame id, rgb, depth_m or None, K, T_cam_part)`` and compare;
    ``progress(done, total)`` after each frame."""
    from sim2real.detect.detector import detect_frame

    centre = detector.geometry.centre_part_m
    errors = []
    for fid, rgb, depth, K, T in frames:
        errors.append(frame_error(fid, detect_frame(detector, rgb, depth, K), T, centre, K))
        if progress is not None:
            progress(len(errors), len(frames))
    return summarize(errors), errors
