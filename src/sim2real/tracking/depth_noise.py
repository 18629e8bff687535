"""The depth frame's own noise, and the tracker's tolerances widened to it.

A fixed agreeing-return tolerance (``inlier_m``, 6 mm) fits the sensors it was set on; a
noisier one (a time-of-flight camera read at 5 mm std, a stereo pair far out) scatters its
returns on the true pose beyond it and the true pose scores below ``track_score``: lost, and a
global search on every frame. The frame says how noisy it is, independently of any pose: on a
smooth surface the second difference of three neighbouring pixels, d[i-1] - 2 d[i] + d[i+1],
is noise alone (std sqrt(6) sigma for independent pixel noise); edges and corners are outliers
that a median ignores. It is read where the part is expected (the band of depths its model
spans at the predicted pose, the last one while lost), or over the whole frame where no pose
places the part in the image or too few return there. Noise correlated between
neighbours (stereo matching windows) reads low: the tolerances then stay as configured, never
tighter.
"""

from __future__ import annotations

import numpy as np

from sim2real.core.camera import CameraIntrinsics
from sim2real.models.viewpoints import ViewpointModel
from sim2real.tracking.config import TrackerConfig

MAD_TO_STD = 1.4826
MIN_SAMPLES = 200
"""Fewer valid triples than this say nothing about the noise."""
BAND_MARGIN_M = 0.02
"""Depths this far either side of the model's own are read as the part's surroundings."""
BAND_WINDOW = 7
"""Pixels along a row whose mean return decides whether a pixel lies in a band."""
BAND_LINES = 2
"""Within a band, every 2nd row (and column) is read: thousands of triples are still read."""
LOST_STRIDE = 4
"""While lost, every 4th row of the frame is read, along the rows (the noise, not the part,
is sought)."""


def second_difference_noise_m(
    depth: np.ndarray, near_m: float = 0.0, far_m: float = np.inf, columns: bool = True
) -> float | None:
    """The depth noise std [m] of ``depth`` (H, W metres, 0 = no return) from the second
    differences along its rows (and its columns) where three neighbours return and lie on a
    surface between ``near_m`` and ``far_m``; None with fewer than ``MIN_SAMPLES`` such
    triples. The band is judged on the surface's local mean (``BAND_WINDOW`` pixels along the
    row), not on each noisy return: a surface straddling the band's edge would otherwise give
    only its returns on one side of the edge, a truncated spread that reads low (a table
    behind where the part was read 3.6 mm std for 5 mm)."""
    ok, every = depth > 0, 1
    if near_m > 0 or np.isfinite(far_m):
        level = _local_mean(depth, ok)
        ok &= (level > near_m) & (level < far_m)
        every = BAND_LINES  # what the band costs, fewer lines save
    diffs = []
    for d, m in ((depth, ok), (depth.T, ok.T))[: 2 if columns else 1]:
        d, m = d[::every], m[::every]
        valid = m[:, :-2] & m[:, 1:-1] & m[:, 2:]
        diffs.append((d[:, :-2] - 2 * d[:, 1:-1] + d[:, 2:])[valid])
    r = np.concatenate(diffs)
    if r.size < MIN_SAMPLES:
        return None
    return float(MAD_TO_STD * np.median(np.abs(r)) / np.sqrt(6.0))


def _local_mean(depth: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """The mean of the returns in ``BAND_WINDOW`` pixels along each pixel's row (0 where none)."""
    from scipy.ndimage import uniform_filter1d

    total = uniform_filter1d(np.where(ok, depth, 0.0), BAND_WINDOW, axis=1, mode="constant")
    count = uniform_filter1d(ok.astype(np.float64), BAND_WINDOW, axis=1, mode="constant")
    return np.divide(total, count, out=np.zeros_like(total), where=count > 1e-9)


def frame_noise_m(
    depth: np.ndarray, camera: CameraIntrinsics, views: ViewpointModel, T: np.ndarray | None
) -> float | None:
    """The noise where the part is expected at the predicted pose ``T`` (its nearest view's
    points); over every ``LOST_STRIDE``-th row of the frame where no pose puts the part in
    front of the camera and inside the image, or too little returns there (lost, or leaving
    the view)."""
    box = None if T is None else _expected_box(camera, views, T)
    if box is not None:
        (v0, v1, u0, u1), near_m, far_m = box
        noise = second_difference_noise_m(depth[v0:v1, u0:u1], near_m, far_m)
        if noise is not None:
            return noise
    return second_difference_noise_m(depth[::LOST_STRIDE], columns=False)


def _expected_box(camera: CameraIntrinsics, views: ViewpointModel, T: np.ndarray):
    """The image rows and columns (v0, v1, u0, u1) of view ``T``'s points and the band of
    depths they span, widened by ``BAND_MARGIN_M``; None when not in front and in the image."""
    points = views.points[views.nearest(T)] @ T[:3, :3].T + T[:3, 3]
    z = points[:, 2]
    if np.any(z <= 0):
        return None
    u = camera.fx * points[:, 0] / z + camera.cx
    v = camera.fy * points[:, 1] / z + camera.cy
    u0, u1 = np.clip([u.min() - 2, u.max() + 3], 0, camera.width).astype(int)
    v0, v1 = np.clip([v.min() - 2, v.max() + 3], 0, camera.height).astype(int)
    if u1 - u0 < 3 or v1 - v0 < 3:
        return None
    return (v0, v1, u0, u1), z.min() - BAND_MARGIN_M, z.max() + BAND_MARGIN_M


def noise_config(config: TrackerConfig, noise_m: float | None) -> TrackerConfig:
    """``config`` with its agreeing-return tolerance and ICP gates at least ``noise_sigmas``
    standard deviations of the frame's noise (``config`` itself where that widens nothing)."""
    if noise_m is None or config.noise_sigmas <= 0:
        return config
    tolerance = config.noise_sigmas * noise_m
    if tolerance <= config.inlier_m:
        return config
    gates = tuple(max(g, tolerance) for g in config.gates_m)
    return config.model_copy(update={"inlier_m": tolerance, "gates_m": gates})
