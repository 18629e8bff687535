"""Pose errors that respect a part's symmetry.

Conventions: poses are (4, 4) ``T_cam_part`` in metres; ``points`` are (N, 3) model points
in the part frame, metres. ADD (Hinterstoisser et al., ACCV 2012) is the mean distance
between corresponding model points under the two poses; ADD-S the mean distance from each
estimated point to the closest ground-truth point (for any symmetry, declared or not).
``symmetric_add_m`` is ADD minimised over the declared symmetries (BOP's MSSD uses the max
instead of the mean).
"""

from __future__ import annotations

import math

import numpy as np

from sim2real.models.symmetry import NO_SYMMETRY, Symmetry


def transform_points(T: np.ndarray, points: np.ndarray) -> np.ndarray:
    """(N, 3) ``points`` mapped by the (4, 4) transform ``T``."""
    T = np.asarray(T, dtype=np.float64)
    return points @ T[:3, :3].T + T[:3, 3]


def add_m(T_est: np.ndarray, T_gt: np.ndarray, points: np.ndarray) -> float:
    """ADD [m]: mean |T_est p - T_gt p| over the model points."""
    diff = transform_points(T_est, points) - transform_points(T_gt, points)
    return float(np.linalg.norm(diff, axis=1).mean())


def adds_m(T_est: np.ndarray, T_gt: np.ndarray, points: np.ndarray) -> float:
    """ADD-S [m]: mean distance from each estimated point to the closest ground-truth point."""
    from scipy.spatial import cKDTree

    distances, _ = cKDTree(transform_points(T_gt, points)).query(transform_points(T_est, points))
    return float(np.mean(distances))


def symmetric_add_m(
    T_est: np.ndarray,
    T_gt: np.ndarray,
    points: np.ndarray,
    symmetry: Symmetry | None,
    n_continuous: int = 72,
) -> float:
    """ADD [m] minimised over the symmetry transforms S: min_S ADD(T_est, T_gt S). A continuous
    symmetry is sampled every 360 / n_continuous deg, then the best angle refined."""
    symmetry = symmetry or NO_SYMMETRY
    if symmetry.kind == "none":
        return add_m(T_est, T_gt, points)
    est = transform_points(T_est, points)
    G = np.asarray(T_gt, dtype=np.float64) @ symmetry.transforms(n_continuous)
    gt = np.einsum("nj,kij->kni", points, G[:, :3, :3]) + G[:, None, :3, 3]
    errors = np.linalg.norm(gt - est[None], axis=2).mean(axis=1)
    k = int(np.argmin(errors))
    best = float(errors[k])
    if symmetry.kind == "continuous":
        from scipy.optimize import minimize_scalar

        D = symmetry.discrete_with_identity()[k // n_continuous]
        step = 2 * np.pi / n_continuous
        theta = step * (k % n_continuous)
        res = minimize_scalar(
            lambda a: add_m(T_est, T_gt @ D @ symmetry.continuous_transform(a), points),
            bounds=(theta - step, theta + step),
            method="bounded",
            options={"xatol": 1e-7},
        )
        best = min(best, float(res.fun))
    return best


def _angle_deg(trace: float) -> float:
    return math.degrees(math.acos(min(1.0, max(-1.0, (trace - 1.0) / 2.0))))


def _skew(a: np.ndarray) -> np.ndarray:
    return np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])


def rotation_error_deg(
    T_est: np.ndarray, T_gt: np.ndarray, symmetry: Symmetry | None = None
) -> float:
    """Angle [deg] of R_est^T R_gt S, minimised over the symmetries S (exactly, for a
    continuous axis: max over angle of trace(M R_axis) = tr M + C + sqrt(B^2 + C^2))."""
    symmetry = symmetry or NO_SYMMETRY
    R_est, R_gt = np.asarray(T_est)[:3, :3], np.asarray(T_gt)[:3, :3]
    D_list = symmetry.discrete_with_identity() if symmetry.kind != "none" else [np.eye(4)]
    best = 180.0
    for D in D_list:
        M = R_est.T @ R_gt @ D[:3, :3]
        trace = float(np.trace(M))
        if symmetry.kind == "continuous":
            K = _skew(symmetry.axis)
            B, C = float(np.trace(M @ K)), float(np.trace(M @ K @ K))
            trace += C + math.hypot(B, C)
        best = min(best, _angle_deg(trace))
    return best


def translation_error_m(
    T_est: np.ndarray, T_gt: np.ndarray, symmetry: Symmetry | None = None
) -> float:
    """|t_est - t(T_gt S)| [m], minimised over the symmetries S (exactly, for a continuous
    axis: the axis point p sweeps a circle, so the minimum is closed-form)."""
    symmetry = symmetry or NO_SYMMETRY
    T_est, T_gt = np.asarray(T_est, dtype=np.float64), np.asarray(T_gt, dtype=np.float64)
    D_list = symmetry.discrete_with_identity() if symmetry.kind != "none" else [np.eye(4)]
    best = math.inf
    for D in D_list:
        if symmetry.kind != "continuous":
            best = min(best, float(np.linalg.norm(T_est[:3, 3] - (T_gt @ D)[:3, 3])))
            continue
        a = symmetry.axis
        p = symmetry.point if symmetry.point is not None else np.zeros(3)
        Q = T_gt[:3, :3] @ D[:3, :3]
        w = T_est[:3, 3] - T_gt[:3, :3] @ D[:3, 3] - T_gt[:3, 3] - Q @ p
        v = Q.T @ w  # error = |v + R_axis(theta) p|
        along = float(a @ (v + p))
        v_perp = np.linalg.norm(v - (a @ v) * a)
        p_perp = np.linalg.norm(p - (a @ p) * a)
        best = min(best, math.hypot(along, v_perp - p_perp))
    return best


def model_points(mesh, n: int = 1000, seed: int = 0) -> np.ndarray:
    """(n, 3) float64 points sampled uniformly by area on the mesh surface, part frame, m."""
    import trimesh

    tm = trimesh.Trimesh(vertices=mesh.vertices, faces=mesh.faces, process=False)
    points, _ = trimesh.sample.sample_surface(tm, n, seed=seed)
    return np.asarray(points, dtype=np.float64)


def diameter_m(points: np.ndarray) -> float:
    """Largest distance [m] between two of the (N, 3) points (over their convex hull)."""
    from scipy.spatial import ConvexHull, QhullError
    from scipy.spatial.distance import pdist

    points = np.asarray(points, dtype=np.float64)
    if len(points) < 2:
        return 0.0
    try:
        candidates = points[ConvexHull(points).vertices]
    except (QhullError, ValueError):  # flat or degenerate: all points (subsampled if huge)
        candidates = points if len(points) <= 4000 else points[:: len(points) // 4000 + 1]
    return float(pdist(candidates).max())
