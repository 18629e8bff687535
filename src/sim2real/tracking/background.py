"""What a fixed camera sees behind everything that moves: the farthest depth seen per pixel.

A robot cell's depth camera is bolted down. Whatever the part, a hand or a gripper does, it can
only bring surfaces closer than the table, so the farthest return seen at a pixel so far is the
background there (or something that has not moved yet). When the tracker has lost the part, the
points in front of that background are where it can be: searching only them is far cheaper and
finds a part that has just re-entered the view among much less clutter. A moved camera makes
everything foreground, which is the whole frame again: never worse than no background.
"""

from __future__ import annotations

import numpy as np

from sim2real.core.camera import CameraIntrinsics
from sim2real.tracking.depth_noise import MAD_TO_STD

NOISE_SIGMAS = 6.0
"""A return is in front of the background by at least this many std of the depth noise at its
depth: the farthest of n noisy frames lies about sqrt(2 ln n) std (3 at n = 100) beyond the
surface and one return up to 3 std before it. At 5 mm std (the L515 preset) the 12 mm margin
made a fifth of a still table "moved", and every lost frame searched it (1.4-2.9 s)."""
NOISE_EVERY = 5
"""The noise is read from every 5th pair of consecutive frames."""
NOISE_READS = 10
"""Each depth's noise is the least of the last 10 reads: a moving camera or part only adds."""
DEPTH_BINS = np.geomspace(0.05, 20.0, 25)
"""Edges of the depths [m] the noise is read in: stereo noise grows with depth squared."""
NOISE_STRIDE = 4
"""The noise is read on every 4th point of the grid (6,000 of a 848x480 frame)."""
MIN_BIN_RETURNS = 200


class StaticBackground:
    """Farthest depth per pixel on a ``stride``-subsampled grid of the camera's image."""

    def __init__(
        self,
        camera: CameraIntrinsics,
        stride: int = 2,
        margin_m: float = 0.01,
        margin_share: float = 0.02,
    ):
        self.camera = camera
        self.stride = stride
        self.margin_m = margin_m
        """A point is in front of the background when closer by max(margin_m, margin_share * z):
        more than the sensor's noise on the farthest-seen value."""
        self.margin_share = margin_share
        self.farthest = np.zeros(
            ((camera.height + stride - 1) // stride, (camera.width + stride - 1) // stride),
            np.float32,
        )
        self.frames = 0
        self._previous: np.ndarray | None = None
        self._noise_reads = np.full((NOISE_READS, len(DEPTH_BINS) - 1), np.nan)

    def _grid(self, depth_m: np.ndarray) -> np.ndarray:
        return depth_m[:: self.stride, :: self.stride]

    def update(self, depth_m: np.ndarray) -> None:
        """Fold one frame ((H, W) metres, 0 = no return) into the background."""
        grid = self._grid(depth_m)
        sample = grid[::NOISE_STRIDE, ::NOISE_STRIDE]
        if self._previous is not None:
            self._read_noise(self._previous, sample)
            self._previous = None
        np.fmax(self.farthest, grid, out=self.farthest)
        self.frames += 1
        if self.frames % NOISE_EVERY == 0:  # the next frame reads the noise against this one
            self._previous = sample.copy()

    def _read_noise(self, before: np.ndarray, after: np.ndarray) -> None:
        """Each depth bin's noise std from the change between two consecutive frames (MAD_TO_STD
        x MAD / sqrt 2): temporal, so noise correlated between neighbouring pixels (stereo) is
        read in full, where a frame's second differences read it low."""
        ok = (before > 0) & (after > 0)
        z, change = after[ok], np.abs(after[ok] - before[ok])
        bins = np.digitize(z, DEPTH_BINS) - 1
        read = np.full(len(DEPTH_BINS) - 1, np.nan)
        for b in np.unique(bins[(bins >= 0) & (bins < len(read))]):
            in_bin = change[bins == b]
            if in_bin.size >= MIN_BIN_RETURNS:
                read[b] = MAD_TO_STD * np.median(in_bin) / np.sqrt(2.0)
        self._noise_reads = np.roll(self._noise_reads, 1, axis=0)
        self._noise_reads[0] = read

    def noise_m(self, z: np.ndarray) -> np.ndarray:
        """The depth noise std [m] at depths ``z`` (0 before any read)."""
        seen = ~np.all(np.isnan(self._noise_reads), axis=0)
        if not seen.any():
            return np.zeros_like(z)
        least = np.nanmin(self._noise_reads[:, seen], axis=0)
        centres = np.sqrt(DEPTH_BINS[:-1] * DEPTH_BINS[1:])[seen]
        return np.interp(z, centres, least)

    def foreground_mask(self, depth_m: np.ndarray) -> np.ndarray:
        """(H / stride, W / stride) bool: returns in front of the background, or where no
        background has been seen yet. The margin: ``margin_m``, ``margin_share`` of the depth,
        or ``NOISE_SIGMAS`` of the noise at that depth, whichever is largest."""
        z = self._grid(depth_m)
        margin = np.maximum(self.margin_m, self.margin_share * z)
        mask = (z > 0) & ((self.farthest == 0) | (z < self.farthest - margin))
        seen = mask & (self.farthest > 0)  # only these can be noise (few on a quiet sensor)
        noise_margin = NOISE_SIGMAS * self.noise_m(z[seen])
        mask[seen] = z[seen] < self.farthest[seen] - np.maximum(margin[seen], noise_margin)
        return mask

    def _points(self, depth_m: np.ndarray, mask: np.ndarray) -> np.ndarray:
        v, u = np.nonzero(mask)
        z = self._grid(depth_m)[v, u].astype(np.float64)
        v, u = v * self.stride, u * self.stride
        cam = self.camera
        return np.stack([(u - cam.cx) / cam.fx * z, (v - cam.cy) / cam.fy * z, z], axis=1)

    def foreground_points(self, depth_m: np.ndarray) -> np.ndarray:
        """(N, 3) camera-frame points (on the subsampled grid) of ``foreground_mask``."""
        return self._points(depth_m, self.foreground_mask(depth_m))

    def points_around_foreground(self, depth_m: np.ndarray, radius_m: float) -> np.ndarray:
        """(N, 3) camera-frame points of every return within about ``radius_m`` (in the image) of
        the foreground, the background behind it included: a part resting on a table has its
        lower few millimetres inside the background's margin, and without them a flat part
        leaves too little shape to match. Isolated foreground pixels (noise) are ignored."""
        from scipy import ndimage

        mask = ndimage.binary_opening(self.foreground_mask(depth_m))
        if not mask.any():
            return np.empty((0, 3))
        z = float(np.median(self._grid(depth_m)[mask]))
        radius_px = max(1, round(radius_m * self.camera.fx / z / self.stride))
        around = ndimage.binary_dilation(mask, iterations=radius_px)
        return self._points(depth_m, around & (self._grid(depth_m) > 0))
