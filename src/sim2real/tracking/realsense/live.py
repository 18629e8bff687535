"""A connected RealSense camera as a frame source for a live tracking loop: a thin wrapper over
the SDK's pipeline (depth z16 and colour rgb8 streams, colour aligned to depth by
``rs.align``), giving frames in the units and conventions of ``Tracker.update``::

    with open_live_camera() as cam:
        tracker = Tracker(part, cam.camera)
        tracker.initialize(T_cam_part)
        while True:
            frame = cam.read()
            result = tracker.update(frame.depth_m, frame.color)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim2real.core.errors import InputError
from sim2real.tracking.realsense.frames import (
    camera_from_intrinsics,
    color_formats,
    color_rgb,
    depth_metres,
    import_rs,
)


@dataclass
class LiveFrame:
    number: int
    """The depth frame's number (the camera's counter)."""
    timestamp_ms: float
    depth_m: np.ndarray
    """(H, W) float32 metres, 0 = no return."""
    color: np.ndarray | None
    """(H, W, 3) uint8 RGB registered to depth (black where depth has no return), or None."""


class LiveCamera:
    """A started RealSense pipeline; ``camera`` holds the depth stream's intrinsics and the
    depth sensor's scale. Close it (or use it as a context manager) to stop streaming."""

    def __init__(self, rs, pipeline, profile, color: bool):
        self._rs = rs
        self._pipeline = pipeline
        device = profile.get_device()
        self.serial = device.get_info(rs.camera_info.serial_number)
        self.depth_scale = float(device.first_depth_sensor().get_depth_scale())
        depth = profile.get_stream(rs.stream.depth).as_video_stream_profile()
        self.camera = camera_from_intrinsics(
            depth.get_intrinsics(), self.depth_scale, f"camera {self.serial}", "depth"
        )
        self._align = rs.align(rs.stream.depth) if color else None
        self._formats = color_formats(rs)

    def read(self, timeout_s: float = 5.0) -> LiveFrame:
        """The next frameset, colour aligned to depth; waits at most ``timeout_s``."""
        frames = self._pipeline.wait_for_frames(int(timeout_s * 1000))
        if self._align is not None:
            frames = self._align.process(frames)
        depth = frames.get_depth_frame()
        color = frames.get_color_frame() if self._align is not None else None
        return LiveFrame(
            int(depth.get_frame_number()),
            float(depth.get_timestamp()),
            depth_metres(depth, self.depth_scale),
            color_rgb(color, self._formats) if color else None,
        )

    def close(self) -> None:
        if self._pipeline is not None:
            self._pipeline.stop()
            self._pipeline = None

    def __enter__(self) -> LiveCamera:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_live_camera(
    width: int = 640,
    height: int = 480,
    fps: int = 30,
    *,
    color: bool = True,
    serial: str | None = None,
    context=None,
) -> LiveCamera:
    """Start streaming from a connected RealSense camera (the one with ``serial``, else the
    first): depth z16 and, with ``color``, rgb8 at ``width`` x ``height`` and ``fps``.
    ``context``: an ``rs.context`` to look for devices in (default: a new one). Raises
    ``InputError`` when no camera is connected or it cannot stream that mode."""
    rs = import_rs("realsense")
    ctx = context if context is not None else rs.context()
    serials = [d.get_info(rs.camera_info.serial_number) for d in ctx.query_devices()]
    if not serials:
        raise InputError("realsense", "device", "no RealSense camera is connected")
    if serial is not None and serial not in serials:
        raise InputError(
            "realsense", "serial", f"no camera {serial} connected (found: {', '.join(serials)})"
        )
    config = rs.config()
    config.enable_device(serial or serials[0])
    config.enable_stream(rs.stream.depth, width, height, rs.format.z16, fps)
    if color:
        config.enable_stream(rs.stream.color, width, height, rs.format.rgb8, fps)
    pipeline = rs.pipeline(ctx)
    try:
        profile = pipeline.start(config)
    except RuntimeError as exc:
        raise InputError(
            f"camera {serial or serials[0]}",
            "mode",
            f"cannot stream {width}x{height} at {fps} fps ({exc})",
        ) from exc
    return LiveCamera(rs, pipeline, profile, color)
