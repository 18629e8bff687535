"""Nearest-neighbour point-to-plane ICP: a wider capture than the projective pairing of
``icp.align`` (it pairs along rays, so it captures a sideways error of only millimetres), for
fast motion; biased by the surfaces around the part, so its result is only a start."""

from __future__ import annotations

import numpy as np

from sim2real.core.camera import CameraIntrinsics
from sim2real.models.viewpoints import ViewpointModel
from sim2real.tracking.icp import (
    CONVERGED,
    MAX_STEP_RAD,
    MIN_CORRESPONDENCE_SHARE,
    MIN_CORRESPONDENCES,
    _cross,
    _skew_update,
)


def align_nearest(
    scene_points: np.ndarray,
    points: np.ndarray,
    normals: np.ndarray,
    T_init: np.ndarray,
    gate_m: float,
    iterations: int = 15,
) -> np.ndarray:
    """Point-to-plane ICP of the model against ``scene_points`` ((N, 3) camera frame, a crop
    around the part) with nearest-neighbour correspondences: a wider capture range than the
    projective pairing, for fast motion. Returns the refined T_cam_part."""
    from scipy.spatial import cKDTree

    if len(scene_points) < MIN_CORRESPONDENCES:
        return T_init
    tree = cKDTree(scene_points)
    T = T_init.copy()
    for _ in range(iterations):
        p = points @ T[:3, :3].T + T[:3, 3]
        n = normals @ T[:3, :3].T
        facing = np.einsum("ij,ij->i", n, p) < 0
        dist, idx = tree.query(p[facing], distance_upper_bound=gate_m)
        ok = np.isfinite(dist)
        if ok.sum() < max(MIN_CORRESPONDENCES, MIN_CORRESPONDENCE_SHARE * len(points)):
            break
        pn, nn, qn = p[facing][ok], n[facing][ok], scene_points[idx[ok]]
        r = np.einsum("ij,ij->i", nn, qn - pn)
        c = gate_m / 2
        w = np.where(np.abs(r) < c, (1 - (r / c) ** 2) ** 2, 0.0)
        J = np.concatenate([_cross(pn, nn), nn], axis=1)
        x = np.linalg.solve((J * w[:, None]).T @ J + 1e-9 * np.eye(6), (J * w[:, None]).T @ r)
        if np.linalg.norm(x[:3]) > MAX_STEP_RAD:
            break
        T = _skew_update(x) @ T
        if np.linalg.norm(x) < CONVERGED:
            break
    return T


def align_nearest_around(
    depth: np.ndarray, camera: CameraIntrinsics, views: ViewpointModel, T_guess: np.ndarray
) -> np.ndarray:
    """``align_nearest`` of the view nearest ``T_guess`` on the frame's points within one
    diameter of the guess (at most about 20,000)."""
    pts = camera.backproject(depth)
    pts = pts[np.linalg.norm(pts - T_guess[:3, 3], axis=1) < views.diameter_m]
    if len(pts) > 20_000:
        pts = pts[:: len(pts) // 20_000 + 1]
    k = views.nearest(T_guess)
    return align_nearest(pts, views.points[k], views.normals[k], T_guess, 0.05)
