"""One run through one stream of a RealSense recording with the SDK's playback, not in real
time: the player reads the file in order and waits for us, so no frame is dropped however slow
the tracker is.

librealsense delivers the frames on its own thread; here they are handed to the reader through
a small blocking queue (a full queue holds the player back). The end of the file is the
playback's status turning ``stopped``, which the SDK signals only after every pending frame
callback has returned.
"""

from __future__ import annotations

import atexit
import contextlib
import queue
import threading
import time
import weakref
from dataclasses import dataclass
from pathlib import Path

from sim2real.core.errors import InputError

_STOP_WAIT_S = 2.0
"""How long closing waits for the player to report it has stopped."""

END = object()
"""Given by ``next()`` when the recording has been played to its end."""

_PLAYING: weakref.WeakSet = weakref.WeakSet()
"""Passes not closed yet. Python cannot run the SDK's callback threads once it is shutting
down (a player waiting on a full queue then aborts the process): all are stopped at exit."""


@atexit.register
def _close_all() -> None:
    for p in list(_PLAYING):
        p.close()


def profile_key(profile) -> tuple:
    """What identifies a recorded stream across loads of the same file."""
    video = profile.as_video_stream_profile()
    return (
        str(profile.stream_type()),
        profile.stream_index(),
        str(profile.format()),
        video.width(),
        video.height(),
        profile.fps(),
    )


def load_playback(rs, path: Path) -> tuple:
    """``(context, playback device)`` of ``path``, not in real time (keep the context as long
    as the device)."""
    ctx = rs.context()
    try:
        device = ctx.load_device(str(path))
    except RuntimeError as exc:
        raise InputError(path, None, f"not a readable RealSense recording ({exc})") from exc
    device.set_real_time(False)
    return ctx, device


@dataclass
class FrameInfo:
    """What the first pass notes about each frame (no pixels)."""

    number: int
    """The SDK's frame number (the camera's counter)."""
    timestamp_ms: float
    domain: str


class PlaybackPass:
    """Play ``path`` once from its start, delivering the frames of the ONE stream whose
    ``profile_key`` is ``key``, in recorded order: ``next()`` gives each frame, then ``END``;
    ``infos_only`` notes a ``FrameInfo`` per frame instead, keeping no frame (the index pass).

    One stream per playback: librealsense starts reading the file when the first sensor starts,
    and frames of a stream whose sensor is not started yet are lost (seen here: a recording's
    first colour frames missing at random), so streams are never started one after another on
    one device; each gets its own playback of the file."""

    def __init__(self, rs, path: Path, key: tuple, *, infos_only: bool = False):
        self._rs = rs
        self.path = path
        self.infos: list[FrameInfo] = []
        self._infos_only = infos_only
        self._queue: queue.Queue = queue.Queue(maxsize=4)
        self._closing = threading.Event()
        self.ended = threading.Event()
        self._context, self._device = load_playback(rs, path)
        found = [
            (sensor, p)
            for sensor in self._device.query_sensors()
            for p in sensor.get_stream_profiles()
            if profile_key(p) == key
        ]
        if not found:
            raise InputError(path, None, f"no stream {key} in the recording")
        self._sensor, self.profile = found[0]
        _PLAYING.add(self)
        self._device.set_status_changed_callback(self._on_status)
        self._sensor.open(self.profile)
        self._sensor.start(self._on_frame)

    def _on_status(self, status) -> None:
        if status == self._rs.playback_status.stopped and not self._closing.is_set():
            self.ended.set()
            if not self._infos_only:
                self._put(END)

    def _on_frame(self, frame) -> None:
        if self._closing.is_set():
            return
        if self._infos_only:
            self.infos.append(
                FrameInfo(
                    int(frame.get_frame_number()),
                    float(frame.get_timestamp()),
                    str(frame.get_frame_timestamp_domain()),
                )
            )
            return
        frame.keep()
        self._put(frame)

    def _put(self, item) -> None:
        while not self._closing.is_set():  # a full queue holds the player back
            try:
                self._queue.put(item, timeout=0.05)
                return
            except queue.Full:
                continue

    def wait_end(self, timeout_s: float) -> list[FrameInfo]:
        """For an index pass: wait until the whole file has been played (however long, as long
        as a frame comes at least every ``timeout_s``); its frames' infos."""
        seen, quiet_s = -1, 0.0
        while not self.ended.wait(0.5):
            quiet_s = 0.0 if len(self.infos) != seen else quiet_s + 0.5
            seen = len(self.infos)
            if quiet_s >= timeout_s:
                self.close()
                raise InputError(
                    self.path, None, f"playback stalled: no frame for {timeout_s:.0f} s"
                )
        self.close()
        return self.infos

    def next(self, timeout_s: float):
        """The next frame, or ``END`` after the last one."""
        try:
            return self._queue.get(timeout=timeout_s)
        except queue.Empty:
            raise InputError(
                self.path, None, f"playback delivered no frame within {timeout_s:.0f} s"
            ) from None

    def close(self) -> None:
        """Stop playing (at the end or midway) and release the file."""
        if self._closing.is_set():
            return
        self._closing.set()
        while True:  # unblock a callback waiting on a full queue
            try:
                self._queue.get_nowait()
            except queue.Empty:
                break
        with contextlib.suppress(RuntimeError):  # stopped by the player at the file's end
            self._sensor.stop()
        # the player stops its reader thread after stop() returns; a device destroyed before
        # then aborts the process ("pure virtual method called", 1 run in 60-300 here)
        deadline = time.monotonic() + _STOP_WAIT_S
        while self._device.current_status() != self._rs.playback_status.stopped:
            if time.monotonic() > deadline:
                break
            time.sleep(0.002)
        with contextlib.suppress(RuntimeError):
            self._sensor.close()
        self._sensor = self.profile = self._device = self._context = None
