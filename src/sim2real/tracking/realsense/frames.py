"""What recorded and live RealSense sources share: the SDK import, intrinsics and extrinsics in
our conventions, frames as numpy arrays, and colour aligned to depth by the SDK (``rs.align``).

librealsense's pixel convention is OpenCV's (``rs2_project_point_to_pixel``: u = fx x / z + ppx,
pixel centres at integer coordinates), so ``ppx``/``ppy`` are our ``cx``/``cy`` unchanged.
Its extrinsics map points of one stream's frame into another's, rotation stored column-major.
"""

from __future__ import annotations

import warnings

import numpy as np

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.errors import InputError

UNAVAILABLE = "pyrealsense2 is not available on this platform"
"""Wheels exist for x86_64 Linux and Windows only (no aarch64, no macOS)."""


def import_rs(source: object):
    """``pyrealsense2``, or ``InputError(source, "pyrealsense2", ...)`` where it is missing."""
    try:
        import pyrealsense2 as rs
    except ImportError as exc:
        raise InputError(
            source,
            "pyrealsense2",
            f"{UNAVAILABLE} (pip install pyrealsense2: wheels for x86_64 Linux and Windows)",
        ) from exc
    return rs


def camera_from_intrinsics(intr, depth_scale: float, source: object, stream: str):
    """``rs.intrinsics`` -> ``CameraIntrinsics`` (pinhole); a warning when the stream carries
    lens distortion, which the pinhole model leaves out."""
    coeffs = [float(c) for c in intr.coeffs]
    if any(abs(c) > 1e-9 for c in coeffs):
        warnings.warn(
            f"{source}: the {stream} stream has distortion coefficients {coeffs} "
            f"({intr.model}); they are ignored (pinhole model)",
            stacklevel=3,
        )
    return CameraIntrinsics(
        fx=float(intr.fx),
        fy=float(intr.fy),
        cx=float(intr.ppx),
        cy=float(intr.ppy),
        width=int(intr.width),
        height=int(intr.height),
        depth_scale=float(depth_scale),
    )


def pose_from_extrinsics(extr) -> np.ndarray:
    """``rs.extrinsics`` of stream A to stream B -> (4, 4) float64 mapping A's coordinates into
    B's (metres), i.e. the pose ``T_B_A``."""
    T = np.eye(4)
    T[:3, :3] = np.asarray(extr.rotation, dtype=np.float64).reshape(3, 3).T  # column-major
    T[:3, 3] = np.asarray(extr.translation, dtype=np.float64)
    return T


def depth_metres(frame, depth_scale: float) -> np.ndarray:
    """A z16 depth frame -> (H, W) float32 metres, 0 = no return (a copy)."""
    raw = np.asanyarray(frame.get_data())
    return raw.astype(np.float32) * np.float32(depth_scale)


def color_formats(rs) -> dict:
    """Colour formats read, each with how to turn its pixels into (h, w, 3) RGB."""
    return {
        rs.format.rgb8: lambda a: a,
        rs.format.bgr8: lambda a: a[..., ::-1],
        rs.format.rgba8: lambda a: a[..., :3],
        rs.format.bgra8: lambda a: a[..., 2::-1],
        rs.format.y8: lambda a: np.repeat(a[..., None], 3, axis=2),
    }


def color_rgb(frame, formats: dict) -> np.ndarray:
    """A colour frame of one of ``formats`` -> (h, w, 3) uint8 RGB, a copy: a view (rgb8) would
    keep the SDK's frame alive as long as the image, possibly past its playback."""
    to_rgb = formats[frame.get_profile().format()]
    return np.array(to_rgb(np.asanyarray(frame.get_data())), dtype=np.uint8, order="C")


class ColorToDepth:
    """Colour registered to depth by the SDK: ``rs.align(rs.stream.depth)`` on a depth and a
    colour frame (each depth pixel with a return gets the colour seen along its ray; pixels
    without a return stay black). The frameset ``rs.align`` needs is composed by a processing
    block, so frames paired by us (not by a syncer) can be aligned."""

    def __init__(self, rs):
        self._rs = rs
        self._pair: list = []
        self._queue = rs.frame_queue(2, keep_frames=True)
        self._compose = rs.processing_block(self._composite)
        self._compose.start(self._queue)
        self._align = rs.align(rs.stream.depth)

    def _composite(self, _frame, source) -> None:
        source.frame_ready(source.allocate_composite_frame(self._pair))

    def frameset(self, depth, color):
        """A frameset of ``depth`` and ``color`` (frames of one device)."""
        self._pair = [depth, color]
        self._compose.invoke(depth)
        return self._queue.wait_for_frame(5000).as_frameset()

    def aligned_color(self, frames):
        """The colour frame of ``frames`` (a frameset with depth and colour) in the depth
        camera's geometry."""
        return self._align.process(frames).first_or_default(self._rs.stream.color)
