"""How well a depth frame alone pins a pose where the part's seen surface is flat (a plate, a
box face-on): such a surface pins only its plane (3 of the 6 degrees of freedom) and the outline
must pin the rest. The information of the surface returns that agree with the model
(point-to-plane) and of the outline points that are an edge on both sides (the part just inside,
something farther or nothing just outside) is set against what the view could give where
nothing hides it; a pose slid along a plate keeps an outline edge only where the real plate's
lies, so the frame pins the slide direction by almost nothing the view could give
(``weakest_share``), however well the depth agrees. Continuous symmetries are no error. A
surface of several faces pins the pose by itself: there real depth edges (eroded, fattened by a
few pixels, a part resting on a table) would only add doubt, and the share is not judged.
"""

from __future__ import annotations

import weakref
from typing import NamedTuple

import numpy as np

from sim2real.core.camera import CameraIntrinsics
from sim2real.models.symmetry import Symmetry
from sim2real.models.viewpoints import ViewpointModel
from sim2real.tracking.config import TrackerConfig
from sim2real.tracking.icp import _correspond, _cross, edge_gap_m, inlier_tolerance_m

OUTLINE_SIGMA_PX = 4.0
"""Standard deviation of an outline position that the depth image confirms [px]: it is looked
at this many pixels either side, so it is known no better."""

MIN_INCIDENCE_COS = 0.3
"""Surfaces seen more obliquely than about 73 deg pin nothing (sensors seldom return there)."""
FLAT_SHARE = 0.05
"""A direction the seen surface pins by less than this share of its best (rotations about the
surface's centre scaled by the part's radius) is one it leaves to the outline."""
_PINS: dict[int, np.ndarray] = {}  # id of a viewpoint model -> its views' pins, while it lives


class DepthEvidence(NamedTuple):
    measured: np.ndarray
    expected: np.ndarray
    outline: float


def depth_share(
    depth: np.ndarray,
    camera: CameraIntrinsics,
    views: ViewpointModel,
    k: int,
    T: np.ndarray,
    symmetry: Symmetry,
    config: TrackerConfig,
    occluder_m: float = 0.05,
) -> tuple[float, float]:
    """``weakest_share`` of the pose ``T`` on view ``k`` (``depth_information`` with the
    tracker's inlier gate and depth sigma) where its seen surface pins at most 3 degrees of
    freedom (``surface_pins``), else 1; and the share of its outline that is an edge on both
    sides (1 where not judged)."""
    if surface_pins(views, k) > 3:
        return 1.0, 1.0
    args = (config.inlier_m, config.depth_sigma_m, occluder_m)
    e = depth_information(depth, camera, views, k, T, *args)
    return weakest_share(e.measured, e.expected, symmetry_twists(symmetry, T)), e.outline


def _seen_surface(views: ViewpointModel, k: int, T: np.ndarray):
    """View ``k``'s points and normals in the camera frame, and which face the camera at an
    incidence a sensor returns at (``MIN_INCIDENCE_COS``)."""
    p, n = views.points[k] @ T[:3, :3].T + T[:3, 3], views.normals[k] @ T[:3, :3].T
    cos = -np.einsum("ij,ij->i", n, p) / np.linalg.norm(p, axis=1)
    return p, n, cos >= MIN_INCIDENCE_COS


def surface_pins(views: ViewpointModel, k: int) -> int:
    """How many degrees of freedom view ``k``'s surface pins by itself (3: one plane; 6: three
    faces or a curved surface), seen from the view's own direction (once per view)."""
    pins = _PINS.get(id(views))
    if pins is None:
        pins = _PINS[id(views)] = np.full(len(views), -1)
        weakref.finalize(views, _PINS.pop, id(views), None)
    if pins[k] < 0:
        n, p = views.normals[k].astype(np.float64), views.points[k].astype(np.float64)
        ok = n @ views.directions[k] >= MIN_INCIDENCE_COS
        turn = np.cross(p[ok] - p[ok].mean(axis=0), n[ok]) / (0.5 * views.diameter_m)
        J = np.concatenate([turn, n[ok]], axis=1)  # turns about the seen surface's centre
        w = np.linalg.eigvalsh(J.T @ J)
        pins[k] = int((w > FLAT_SHARE * w[-1]).sum()) if ok.sum() >= 6 else 0
    return int(pins[k])


def depth_information(
    depth: np.ndarray,
    camera: CameraIntrinsics,
    views: ViewpointModel,
    k: int,
    T: np.ndarray,
    inlier_m: float,
    depth_sigma_m: float,
    occluder_m: float = 0.05,
) -> DepthEvidence:
    """(measured, expected, outline): (6, 6) information of the twist T <- exp(x) T (rad, m) that one
    depth frame gives, and what the view could give where nothing hides it. Measured: agreeing
    returns on view ``k``'s surface points (standard deviation ``depth_sigma_m``) and its outline
    points that are an edge on both sides (standard deviation ``OUTLINE_SIGMA_PX``; a thin
    feature's inside is looked at nearer). Expected: every surface point facing the camera in
    the image (weighted by its chance of a return: a dark region is not expected to pin
    anything), every outline point in the image, but those an occluder (``occluder_m`` in front)
    hides. Outline: the share of those outline points that are an edge on both sides."""
    R, t = T[:3, :3], T[:3, 3]
    p, n, face = _seen_surface(views, k, T)
    weights = None if views.weights is None else views.weights[k]
    inside_m = None if views.contour_inside_m is None else views.contour_inside_m[k]
    inside, zm, _ = _correspond(depth, camera, p)
    # a face seen edge-on returns little and pairs with what lies beyond it: the outline says it
    seen = inside & face & ~((zm > 0) & (zm < p[:, 2] - occluder_m))
    agree = seen & (zm > 0) & (np.abs(zm - p[:, 2]) < inlier_tolerance_m(inlier_m, p[:, 2]))
    J = np.concatenate([_cross(p, n), n], axis=1) / depth_sigma_m
    c, o = views.contour_points[k] @ R.T + t, views.contour_outward[k] @ R.T
    z = np.maximum(c[:, 2], 1e-6)
    step_m = OUTLINE_SIGMA_PX * z / camera.fx
    # inside, twice as far: real depth edges erode and fatten by a few pixels
    in_m = 2 * step_m if inside_m is None else np.minimum(2 * step_m, 0.5 * inside_m)
    gap = edge_gap_m(z)
    out_ok, z_out, _ = _correspond(depth, camera, c + o * step_m[:, None])
    in_ok, z_in, _ = _correspond(depth, camera, c - o * in_m[:, None])
    hidden = ((z_out > 0) & (z_out < z - occluder_m)) | ((z_in > 0) & (z_in < z - occluder_m))
    # outside, something farther or nothing: an outline the frame can confirm (beside a surface
    # the part rests on, or in a sensor's blur, it cannot); confirmed unless inside the frame
    # sees through the part (nothing, or farther)
    in_view = (c[:, 2] > 1e-6) & out_ok & in_ok & ~hidden
    judged = in_view & ((z_out == 0) | (z_out > z + gap))
    edge = judged & (z_in > 0) & (z_in < z + gap)
    Jo = np.concatenate([_cross(c, o), o], axis=1) / step_m[:, None]
    measured = J[agree].T @ J[agree] + Jo[edge].T @ Jo[edge]
    Je = J[seen] if weights is None else J[seen] * np.sqrt(weights[seen])[:, None]
    expected = Je.T @ Je + Jo[judged].T @ Jo[judged]
    return DepthEvidence(measured, expected, float(edge.sum()) / max(int(in_view.sum()), 1))


def weakest_share(measured: np.ndarray, expected: np.ndarray, twists: np.ndarray) -> float:
    """The least share of the expected information that the measured one holds in any direction
    (the smallest generalized eigenvalue; 1: the frame pins the pose as well as the view can);
    directions the view cannot pin at all, and the symmetry ``twists`` (K, 6), count as held."""
    ridge = 1e-9 * max(float(np.trace(expected)), 1e-12) * np.eye(6)
    M, E = measured + ridge, expected + ridge
    if len(twists):
        known = max(float(np.trace(E)), 1.0) * 1e3 * twists.T @ twists
        M, E = M + known, E + known
    L = np.linalg.cholesky(E)
    Li = np.linalg.inv(L)
    return float(np.linalg.eigvalsh(Li @ M @ Li.T)[0])


def symmetry_twists(symmetry: Symmetry, T: np.ndarray) -> np.ndarray:
    """(K, 6) twists (rad, m) of the part's continuous symmetry at pose ``T``: moves that change
    nothing a sensor sees (K = 0 without one)."""
    if symmetry.kind != "continuous" or symmetry.axis is None:
        return np.zeros((0, 6))
    w = T[:3, :3] @ np.asarray(symmetry.axis, dtype=np.float64)
    point = np.zeros(3) if symmetry.point is None else np.asarray(symmetry.point, np.float64)
    c = T[:3, :3] @ point + T[:3, 3]
    return np.concatenate([w, -np.cross(w, c)])[None, :]
