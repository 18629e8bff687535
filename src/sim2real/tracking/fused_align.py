"""One Gauss-Newton step from both modalities: the depth modality's point-to-plane equations
(``icp.depth_equations``) and the region modality's outline equations (``region``), summed
with their weights and a Tikhonov regularization, coarse to fine (depth gates and colour
segment lengths together). The same equations' information matrix says how well the evidence
pins the pose (``pose_spread_m``): a part with no depth returns and half its outline hidden
slides along a valley that no modality sees."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim2real.core.camera import CameraIntrinsics
from sim2real.models.viewpoints import ViewpointModel
from sim2real.tracking.icp import (
    CONVERGED,
    SETTLED_SHARE,
    _skew_update,
    depth_equations,
    largest_move,
    step_is_safe,
)
from sim2real.tracking.region import Lines, RegionModality


@dataclass
class FusedSettings:
    """``depth_sigma_m``: the depth residual that weighs as much as one ``region`` standard
    deviation; ``tikhonov``: (rotation, translation) regularization of each step."""

    gates_m: tuple[float, ...]
    depth_sigma_m: float = 0.003
    depth_weight: float = 1.0
    iterations: int = 2
    tikhonov: tuple[float, float] = (5e3, 5e5)
    outline_free_share: float | None = None
    """The outline moves only directions that depth pins by less than this share of its best
    pinned one (None: every direction): depth edges are blurred, eroded and fattened, and
    where the surface pins the pose they would only bias it."""


def fused_equations(
    depth: np.ndarray,
    depth_camera: CameraIntrinsics,
    views: ViewpointModel,
    k: int,
    T: np.ndarray,
    region: RegionModality,
    lines: Lines,
    settings: FusedSettings,
    gate_m: float,
    weights=None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(A (6, 6), b (6,), the depth modality's paired points or None) of both modalities at
    ``T`` with ``lines`` located, the depth modality on stored view ``k`` (``weights``: its
    points' return chances, or None): A is the information of the twist (rad, m) in units of each
    modality's own standard deviation (outline positions, depth residuals of at least
    ``depth_sigma_m``), each modality scaled down by its measured residual spread."""
    A, b, spread = region.equations(lines, T)
    # a modality whose residuals spread wider than its own variances say (colour misregistered
    # to depth, a cluttered background) weighs less: by its measured scale
    A, b = A / spread**2, b / spread**2
    eq = depth_equations(
        depth, depth_camera, views.points[k], views.normals[k], T, gate_m, weights, True
    )
    if eq is None or settings.depth_weight <= 0:
        return A, b, None
    if settings.outline_free_share is not None:
        P = free_directions(eq[0], views.diameter_m, settings.outline_free_share)
        A, b = P.T @ A @ P, P.T @ b
    scale_d = settings.depth_weight / max(settings.depth_sigma_m, eq[4]) ** 2
    return A + scale_d * eq[0], b + scale_d * eq[1], eq[3]


def free_directions(information: np.ndarray, diameter_m: float, share: float) -> np.ndarray:
    """(6, 6) projector of a twist (rad, m) onto the directions that ``information`` pins by
    less than ``share`` of its best pinned one, turns measured as the motion of a point half a
    diameter away (as ``depth_spread.surface_pins`` counts them)."""
    d = np.array([0.5 * diameter_m] * 3 + [1.0] * 3)  # normalised twist y = d * x
    A = information / np.outer(d, d)
    w, V = np.linalg.eigh(0.5 * (A + A.T))
    free = V[:, w < share * max(w[-1], 1e-300)]
    return (free @ free.T) * d[None, :] / d[:, None]


def pose_spread_m(information: np.ndarray, points: np.ndarray) -> float:
    """RMS standard deviation of ``points`` ((N, 3) camera frame, the model's) under the pose
    covariance ``information``^-1 of the twist T <- exp(x) T [m]: how far the evidence lets the
    part's points slide (comparable with an ADD error); inf when a direction is unconstrained.
    Correspondence lines are taken as independent, so this errs on the confident side."""
    w, V = np.linalg.eigh(0.5 * (information + information.T))
    if w[0] <= 1e-12 * max(w[-1], 1e-300):
        return float("inf")
    cov = (V / w) @ V.T
    # the displacement of p under x = (omega, v) is J x with J = [-[p]x | I]; the mean of
    # |J x|^2 over the points is x^T M x with M the mean of J^T J, so the RMS is trace(cov M)
    mean = points.mean(axis=0)
    px = np.array([[0, -mean[2], mean[1]], [mean[2], 0, -mean[0]], [-mean[1], mean[0], 0]])
    M = np.eye(6)
    M[:3, :3] = np.eye(3) * float((points**2).sum(axis=1).mean()) - points.T @ points / len(points)
    M[:3, 3:], M[3:, :3] = px, -px
    return float(np.sqrt(max(np.trace(cov @ M), 0.0)))


def fused_align(
    depth: np.ndarray,
    depth_camera: CameraIntrinsics,
    views: ViewpointModel,
    T_init: np.ndarray,
    region: RegionModality,
    color: np.ndarray,
    settings: FusedSettings,
    weights_of=None,
) -> tuple[np.ndarray, Lines, np.ndarray]:
    """``T_init`` (T_depth_part) refined by depth and colour together; returns the pose, the
    last stage's correspondence lines and the last step's information matrix (``A`` of
    ``fused_equations``, for ``pose_spread_m``). ``weights_of(k)``: per-point return chances
    of view k for the depth modality (tuned surfaces) or None."""
    T = T_init.copy()
    scales = region.config.scales_px
    stages = max(len(scales), len(settings.gates_m))
    reg = np.diag([settings.tikhonov[0]] * 3 + [settings.tikhonov[1]] * 3)
    lines, A = None, np.zeros((6, 6))
    for stage in range(stages):
        gate = settings.gates_m[min(stage, len(settings.gates_m) - 1)]
        scale = scales[min(stage, len(scales) - 1)]
        lines = region.correspond(color, region.lines(views, T, depth, depth_camera), scale)
        k = views.nearest(T)
        weights = weights_of(k) if weights_of is not None else None
        for _ in range(settings.iterations):
            A, b, paired = fused_equations(
                depth, depth_camera, views, k, T, region, lines, settings, gate, weights
            )
            x = np.linalg.solve(A + reg, b)
            if paired is not None and not step_is_safe(x, paired, max(gate, 0.01)):
                break
            T = _skew_update(x) @ T
            moved = largest_move(x, lines.points_part @ T[:3, :3].T + T[:3, 3])
            if moved < SETTLED_SHARE * gate or np.linalg.norm(x) < CONVERGED:
                break  # settled at this stage
    return T, lines, A
