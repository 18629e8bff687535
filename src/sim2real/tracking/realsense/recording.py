"""A RealSense recording read as a tracking sequence (the interface of
``tracking.sequence.Sequence``): depth in metres with the depth sensor's own scale, intrinsics
from the recorded stream profile, colour registered to depth by the SDK (``rs.align``) or, on
request, in its own camera with the recorded extrinsic.

Recordings are ``.bag`` (ROS 1; what SDKs up to 2.57 write, still read by later ones) and
``.db3`` (ROS 2; what SDK 2.58 and later write). Frames are read in order, one at a time, from a
non-real-time playback: opening the file plays it once without keeping any pixels, to count
the depth frames and pair each with the colour frame nearest in time; ``read(i)`` then plays
forward to frame ``i`` (asking for an earlier frame starts the playback again).
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import warnings
import weakref
from pathlib import Path

import numpy as np

from sim2real.core.errors import InputError
from sim2real.core.pose import check_rigid
from sim2real.tracking.frame_numbers import ranges
from sim2real.tracking.realsense.frames import (
    ColorToDepth,
    camera_from_intrinsics,
    color_formats,
    color_rgb,
    depth_metres,
    import_rs,
    pose_from_extrinsics,
)
from sim2real.tracking.realsense.playback import (
    END,
    FrameInfo,
    PlaybackPass,
    load_playback,
    profile_key,
)

RECORDING_SUFFIXES = (".bag", ".db3")

_OPEN: weakref.WeakSet = weakref.WeakSet()
"""Recordings not closed yet, closed at exit so that the SDK frame a recording keeps goes
before its playback, not at teardown in whatever order. Registered after ``playback``'s own
exit handler, so it runs first."""


@atexit.register
def _close_all() -> None:
    for recording in list(_OPEN):
        recording.close()


class RealSenseRecording:
    """Depth (and colour) frames of a RealSense recording, in order; no ground truth.

    ``use_color=False`` reads depth only. Colour comes in its own camera by default
    (``color_camera``, ``T_depth_color`` from the recorded extrinsic; lens distortion is not
    modelled), since the SDK's alignment to depth (``align_color=True``) blanks every pixel
    without a depth return: exactly where a dark part is, which only colour can track; ``timeout_s``: how long the playback may go without delivering a frame before it
    is taken as stuck (``InputError``). Close it (or use it as a context manager) to release
    the file early; playbacks still open are stopped at exit."""

    gt = None
    visible = None

    def __init__(
        self,
        path: str | Path,
        *,
        use_color: bool = True,
        align_color: bool = False,
        timeout_s: float = 30.0,
    ):
        self.path = Path(path)
        if not self.path.is_file():
            raise InputError(self.path, None, "recording not found")
        self._rs = rs = import_rs(self.path)
        self._timeout_s = timeout_s
        _ctx, device = load_playback(rs, self.path)
        (depth_sensor, depth_profile), color_profile = _streams(rs, device, self.path)
        self.depth_scale = float(depth_sensor.as_depth_sensor().get_depth_scale())
        """Metres per unit of the recorded z16 depth (the depth sensor's depth units)."""
        intrinsics = depth_profile.as_video_stream_profile().get_intrinsics()
        self.camera = camera_from_intrinsics(intrinsics, self.depth_scale, self.path, "depth")
        self.color_camera = None
        """Intrinsics of the colour images; None: the depth camera's (colour aligned)."""
        self.T_depth_color: np.ndarray | None = None
        """(4, 4) colour camera in the depth camera's frame; None: identity (aligned)."""
        self._formats = color_formats(rs)
        if color_profile is not None and use_color:
            color_profile = self._usable_color(depth_profile, color_profile, align_color)
        else:
            color_profile = None
        self._keys = {"depth": profile_key(depth_profile)}
        self._to_color = None  # rs.extrinsics depth -> colour, for rs.align across playbacks
        if color_profile is not None:
            self._keys["color"] = profile_key(color_profile)
            self._to_color = depth_profile.get_extrinsics_to(color_profile)
        del device, _ctx, depth_sensor, depth_profile, color_profile

        passes = {s: PlaybackPass(rs, self.path, k, infos_only=True) for s, k in self._keys.items()}
        infos = {s: p.wait_end(timeout_s) for s, p in passes.items()}  # both play at once
        self._depth_info = infos["depth"]
        if not self._depth_info:
            raise InputError(self.path, "depth", "the depth stream has no frames")
        self.frame_ids = _frame_ids(self._depth_info, self.path)
        """The depth stream's frame numbers (0, 1, ... where they do not increase)."""
        self._color_of: list[int | None] | None = None
        if "color" in infos:
            fps = int(self._keys["color"][-1])
            self._color_of = _pair(self._depth_info, infos["color"], fps, self.path)
        if self._color_of is None:
            self.color_camera = self.T_depth_color = None
        self._align = ColorToDepth(rs) if self._color_of is not None and align_color else None
        self._passes: dict[str, PlaybackPass] = {}
        self._next = {"depth": 0, "color": 0}
        self._last_color: tuple[int, object] | None = None
        self._loaded = -1
        self._depth: np.ndarray | None = None
        self._color: np.ndarray | None = None
        _OPEN.add(self)

    def _usable_color(self, depth_profile, color_profile, align_color: bool):
        """The colour profile if it can be used (a known format, an extrinsic to depth), else
        None with a warning: the recording is then tracked on depth alone."""
        fmt = color_profile.format()
        if fmt not in self._formats:
            warnings.warn(
                f"{self.path}: colour format {fmt} is not read (one of rgb8, bgr8, rgba8, "
                "bgra8, y8); tracking on depth alone",
                stacklevel=3,
            )
            return None
        try:
            to_depth = color_profile.get_extrinsics_to(depth_profile)
        except RuntimeError:
            warnings.warn(
                f"{self.path}: no extrinsic between the colour and depth streams; tracking on "
                "depth alone",
                stacklevel=3,
            )
            return None
        if not align_color:
            intrinsics = color_profile.as_video_stream_profile().get_intrinsics()
            self.color_camera = camera_from_intrinsics(
                intrinsics, self.depth_scale, self.path, "colour"
            )
            self.T_depth_color = check_rigid(
                pose_from_extrinsics(to_depth), self.path, "extrinsics"
            )
        return color_profile

    def __len__(self) -> int:
        return len(self.frame_ids)

    @property
    def has_color(self) -> bool:
        return self._color_of is not None

    def read(self, i: int) -> np.ndarray:
        """(H, W) float32 depth in metres (0 = no return) of the ``i``-th frame (an index)."""
        self._load(i)
        return self._depth

    def read_color(self, i: int) -> np.ndarray | None:
        """(h, w, 3) uint8 RGB of the ``i``-th frame (the depth camera's size when aligned);
        None in a depth-only recording or where no colour frame is near this one in time."""
        if self._color_of is None:
            return None
        self._load(i)
        return self._color

    def close(self) -> None:
        """Stop the playback and release the file (reading again reopens it)."""
        self._last_color = None  # the kept SDK frame goes before its playback
        for p in self._passes.values():
            p.close()
        self._passes = {}

    def __enter__(self) -> RealSenseRecording:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter teardown: nothing left to release
            self.close()

    def _frame(self, stream: str, k: int):
        """Frame ``k`` of ``stream`` from its playback (restarted when ``k`` is behind it)."""
        p = self._passes.get(stream)
        if p is None or k < self._next[stream]:
            if p is not None:
                p.close()
            p = self._passes[stream] = PlaybackPass(self._rs, self.path, self._keys[stream])
            self._next[stream] = 0
            if self._align is not None and len(self._passes) == 2:
                self._register()
        while True:
            frame = p.next(self._timeout_s)
            if frame is END:
                raise InputError(
                    self.path,
                    "frames",
                    f"the {stream} playback ended after {self._next[stream]} frames; the "
                    f"first pass counted more",
                )
            j = self._next[stream]
            self._next[stream] += 1
            if stream == "depth":
                self._check(j, frame)
            if j == k:
                return frame

    def _register(self) -> None:
        """Each stream has its own playback: tell the SDK how the two profiles relate."""
        depth, color = self._passes["depth"].profile, self._passes["color"].profile
        depth.register_extrinsics_to(color, self._to_color)

    def _load(self, i: int) -> None:
        if i == self._loaded:
            return
        if not 0 <= i < len(self):
            raise IndexError(f"frame index {i} out of range 0..{len(self) - 1}")
        want = self._color_of[i] if self._color_of is not None else None
        depth = self._frame("depth", i)
        self._depth = depth_metres(depth, self.depth_scale)
        self._color = None
        if want is not None:
            if self._last_color is None or self._last_color[0] != want:
                self._last_color = (want, self._frame("color", want))
            color = self._last_color[1]
            if self._align is not None:
                color = self._align.aligned_color(self._align.frameset(depth, color))
            self._color = color_rgb(color, self._formats)
        self._loaded = i

    def _check(self, k: int, frame) -> None:
        info = self._depth_info[k]
        number, stamp = int(frame.get_frame_number()), float(frame.get_timestamp())
        if (number, stamp) != (info.number, info.timestamp_ms):
            raise InputError(
                self.path,
                "frames",
                f"depth frame {k} played as number {number} at {stamp} ms, counted as "
                f"{info.number} at {info.timestamp_ms} ms: the playback is not repeatable",
            )


def _streams(rs, device, path: Path):
    """``((depth sensor, z16 depth profile), colour profile or None)`` of a playback device."""
    depth = color = None
    names = []
    for sensor in device.query_sensors():
        for p in sensor.get_stream_profiles():
            names.append(f"{p.stream_name()} {p.format()}")
            if not p.is_video_stream_profile():
                continue
            if depth is None and p.stream_type() == rs.stream.depth:
                if p.format() != rs.format.z16:
                    raise InputError(path, "depth", f"depth format {p.format()}: expected z16")
                depth = (sensor, p)
            elif color is None and p.stream_type() == rs.stream.color:
                color = p
    if depth is None:
        found = ", ".join(names) or "none"
        raise InputError(path, "depth", f"the recording has no depth stream (streams: {found})")
    return depth, color


def _frame_ids(infos: list[FrameInfo], path: Path) -> list[int]:
    numbers = [f.number for f in infos]
    if all(b > a for a, b in itertools.pairwise(numbers)):
        return numbers
    warnings.warn(
        f"{path}: the depth frame numbers do not increase; frames are numbered 0..{len(infos) - 1}",
        stacklevel=3,
    )
    return list(range(len(infos)))


def _pair(
    depth: list[FrameInfo], color: list[FrameInfo], fps: int, path: Path
) -> list[int | None] | None:
    """For each depth frame, the index of the colour frame nearest in time (within half a
    colour frame period), or None; None for all when the two cannot be compared."""
    if not color:
        warnings.warn(f"{path}: the colour stream has no frames; depth alone", stacklevel=3)
        return None
    domains = {f.domain for f in depth} | {f.domain for f in color}
    t_color = np.array([f.timestamp_ms for f in color])
    if len(domains) > 1 or np.any(np.diff(t_color) < 0):
        warnings.warn(
            f"{path}: colour and depth timestamps cannot be paired (domains {sorted(domains)}); "
            "depth alone",
            stacklevel=3,
        )
        return None
    t_depth = np.array([f.timestamp_ms for f in depth])
    right = np.clip(np.searchsorted(t_color, t_depth), 0, len(color) - 1)
    left = np.clip(right - 1, 0, len(color) - 1)
    nearest = np.where(
        np.abs(t_color[left] - t_depth) <= np.abs(t_color[right] - t_depth), left, right
    )
    tolerance_ms = 0.5 * 1000.0 / (fps if fps > 0 else 30)
    ok = np.abs(t_color[nearest] - t_depth) <= tolerance_ms
    if not ok.all():
        missing = [f.number for f, good in zip(depth, ok, strict=True) if not good]
        warnings.warn(
            f"{path}: no colour frame within {tolerance_ms:.1f} ms of depth frames "
            f"{ranges(missing)}; those are tracked on depth alone",
            stacklevel=3,
        )
    return [int(k) if good else None for k, good in zip(nearest, ok, strict=True)]


def recording_source(
    source,
    camera=None,
    color=None,
    color_camera=None,
    T_depth_color=None,
    use_color=True,
    align_color=False,
) -> RealSenseRecording | None:
    """``source`` (a path, or a list of one) opened as a RealSense recording when its name ends
    in ``.bag`` or ``.db3``, else None. A recording carries its own intrinsics, colour and
    extrinsic: camera and colour options given beside it are refused."""
    if isinstance(source, list | tuple):
        if len(source) != 1:
            if any(Path(p).suffix.lower() in RECORDING_SUFFIXES for p in source):
                raise InputError(source[0], "--frames", "give one RealSense recording at a time")
            return None
        source = source[0]
    path = Path(source)
    if path.suffix.lower() not in RECORDING_SUFFIXES:
        return None
    given = {"--camera": camera, "--color": color, "--color-camera": color_camera}
    given["--extrinsic"] = T_depth_color
    for option, value in given.items():
        if value is not None:
            raise InputError(
                path, option, "a RealSense recording carries its own camera, colour and extrinsic"
            )
    return RealSenseRecording(path, use_color=use_color, align_color=align_color)
