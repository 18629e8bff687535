"""One Gauss-Newton step from both modalities: the depth modality's point-to-plane equations
(``icp.depth_equations``) and the region modality's outline equations (``region``), summed
with their weights and a Tikhonov regularization, coarse to fine (depth gates and colour
segment lengths together)."""

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


def fused_align(
    depth: np.ndarray,
    depth_camera: CameraIntrinsics,
    views: ViewpointModel,
    T_init: np.ndarray,
    region: RegionModality,
    color: np.ndarray,
    settings: FusedSettings,
    weights_of=None,
) -> tuple[np.ndarray, Lines]:
    """``T_init`` (T_depth_part) refined by depth and colour together; returns the pose and
    the last stage's correspondence lines. ``weights_of(k)``: per-point return chances of view
    k for the depth modality (tuned surfaces) or None."""
    T = T_init.copy()
    scales = region.config.scales_px
    stages = max(len(scales), len(settings.gates_m))
    reg = np.diag([settings.tikhonov[0]] * 3 + [settings.tikhonov[1]] * 3)
    lines = None
    for stage in range(stages):
        gate = settings.gates_m[min(stage, len(settings.gates_m) - 1)]
        scale = scales[min(stage, len(scales) - 1)]
        lines = region.correspond(color, region.lines(views, T, depth, depth_camera), scale)
        k = views.nearest(T)
        weights = weights_of(k) if weights_of is not None else None
        for _ in range(settings.iterations):
            A, b, spread = region.equations(lines, T)
            # a modality whose residuals spread wider than its own variances say (colour
            # misregistered to depth, a cluttered background) weighs less: by its measured scale
            A, b = A / spread**2, b / spread**2
            eq = depth_equations(
                depth, depth_camera, views.points[k], views.normals[k], T, gate, weights, True
            )
            paired = None
            if eq is not None and settings.depth_weight > 0:
                sigma_d = max(settings.depth_sigma_m, eq[4])
                scale_d = settings.depth_weight / sigma_d**2
                A = A + scale_d * eq[0]
                b = b + scale_d * eq[1]
                paired = eq[3]
            x = np.linalg.solve(A + reg, b)
            if paired is not None and not step_is_safe(x, paired, max(gate, 0.01)):
                break
            T = _skew_update(x) @ T
            moved = largest_move(x, lines.points_part @ T[:3, :3].T + T[:3, 3])
            if moved < SETTLED_SHARE * gate or np.linalg.norm(x) < CONVERGED:
                break  # settled at this stage
    return T, lines
