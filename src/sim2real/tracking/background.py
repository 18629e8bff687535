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

NOISE_SIGMAS = 6.0
"""A return is in front of the background by at least this many std of the frame's depth noise:
the farthest of n noisy frames lies about sqrt(2 ln n) std (3 at n = 100) beyond the surface and
one return up to 3 std before it. At 5 mm std (the L515 preset) the 12 mm margin made a fifth of
a still table "moved", and every lost frame searched it (1.4-2.9 s)."""


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

    def _grid(self, depth_m: np.ndarray) -> np.ndarray:
        return depth_m[:: self.stride, :: self.stride]

    def update(self, depth_m: np.ndarray) -> None:
        """Fold one frame ((H, W) metres, 0 = no return) into the background."""
        np.fmax(self.farthest, self._grid(depth_m), out=self.farthest)
        self.frames += 1

    def foreground_mask(self, depth_m: np.ndarray, noise_m: float | None = None) -> np.ndarray:
        """(H / stride, W / stride) bool: returns in front of the background, or where no
        background has been seen yet. ``noise_m``: the frame's depth noise std, which widens
        the margin to ``NOISE_SIGMAS`` of it."""
        z = self._grid(depth_m)
        least = max(self.margin_m, NOISE_SIGMAS * (noise_m or 0.0))
        margin = np.maximum(least, self.margin_share * z)
        return (z > 0) & ((self.farthest == 0) | (z < self.farthest - margin))

    def _points(self, depth_m: np.ndarray, mask: np.ndarray) -> np.ndarray:
        v, u = np.nonzero(mask)
        z = self._grid(depth_m)[v, u].astype(np.float64)
        v, u = v * self.stride, u * self.stride
        cam = self.camera
        return np.stack([(u - cam.cx) / cam.fx * z, (v - cam.cy) / cam.fy * z, z], axis=1)

    def foreground_points(self, depth_m: np.ndarray, noise_m: float | None = None) -> np.ndarray:
        """(N, 3) camera-frame points (on the subsampled grid) of ``foreground_mask``."""
        return self._points(depth_m, self.foreground_mask(depth_m, noise_m))

    def points_around_foreground(
        self, depth_m: np.ndarray, radius_m: float, noise_m: float | None = None
    ) -> np.ndarray:
        """(N, 3) camera-frame points of every return within about ``radius_m`` (in the image) of
        the foreground, the background behind it included: a part resting on a table has its
        lower few millimetres inside the background's margin, and without them a flat part
        leaves too little shape to match. Isolated foreground pixels (noise) are ignored."""
        from scipy import ndimage

        mask = ndimage.binary_opening(self.foreground_mask(depth_m, noise_m))
        if not mask.any():
            return np.empty((0, 3))
        z = float(np.median(self._grid(depth_m)[mask]))
        radius_px = max(1, round(radius_m * self.camera.fx / z / self.stride))
        around = ndimage.binary_dilation(mask, iterations=radius_px)
        return self._points(depth_m, around & (self._grid(depth_m) > 0))
