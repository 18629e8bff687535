"""Pose from 2D-3D correspondences (PnP): a DLT start refined by Levenberg-Marquardt on the
reprojection error (scipy.optimize.least_squares).

OpenCV (solvePnP) is not a dependency of the project and Open3D has no PnP; scipy does the
non-linear least squares, so only the linear start (a direct linear transform on normalised
image points, Hartley & Zisserman 2004, sec. 7.1) is written here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class PnPResult:
    T_cam_part: np.ndarray
    """(4, 4) float64, metres."""
    rms_px: float
    """Root-mean-square reprojection error of the weighted points [px]."""


def _dlt(points_part: np.ndarray, uv: np.ndarray, K: np.ndarray) -> np.ndarray:
    """(N >= 6) correspondences -> (4, 4) pose from the 3x4 projection's null space."""
    xy = (np.linalg.inv(K) @ np.c_[uv, np.ones(len(uv))].T).T[:, :2]
    X = np.c_[points_part, np.ones(len(points_part))]
    A = np.zeros((2 * len(X), 12))  # two rows a point: [X 0 -xX] and [0 X -yX]
    A[0::2, :4] = A[1::2, 4:8] = X
    A[0::2, 8:] = -xy[:, :1] * X
    A[1::2, 8:] = -xy[:, 1:] * X
    _, _, Vt = np.linalg.svd(A)
    P = Vt[-1].reshape(3, 4)
    if np.linalg.det(P[:, :3]) < 0:
        P = -P
    U, S, Vt2 = np.linalg.svd(P[:, :3])
    R = U @ Vt2
    t = P[:, 3] / S.mean()
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, t
    return T


def _rotvec_matrix(x: np.ndarray) -> np.ndarray:
    """(3, 3) rotation of rotation vector ``x`` (Rodrigues): the residual's, called some 40 times
    per solve, where scipy's Rotation object took 7x the time of the whole solve's own work."""
    theta = float(np.sqrt(x @ x))
    k = x / theta if theta > 1e-12 else x
    W = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    if theta <= 1e-12:
        return np.eye(3) + W
    return np.eye(3) + np.sin(theta) * W + (1.0 - np.cos(theta)) * (W @ W)


def solve_pnp(
    points_part: np.ndarray,
    uv: np.ndarray,
    K: np.ndarray,
    weights: np.ndarray | None = None,
    T_init: np.ndarray | None = None,
    refine: bool = True,
) -> PnPResult | None:
    """Pose of the part from (N, 3) part-frame points (metres) seen at (N, 2) pixels under
    intrinsics ``K`` (3, 3); ``weights`` (N,) >= 0 scale each point's residual; ``T_init`` a
    start (else the DLT's, which needs N >= 6 points not all on one plane). ``refine=False``:
    the start alone, without Levenberg-Marquardt (for a pose that is refined otherwise). None
    when the solution puts the part behind the camera or is not finite."""
    from scipy.optimize import least_squares
    from scipy.spatial.transform import Rotation

    P = np.asarray(points_part, dtype=np.float64)
    uv = np.asarray(uv, dtype=np.float64)
    K = np.asarray(K, dtype=np.float64)
    w = np.ones(len(P)) if weights is None else np.sqrt(np.asarray(weights, dtype=np.float64))
    T0 = _dlt(P, uv, K) if T_init is None else np.asarray(T_init, dtype=np.float64)
    if not np.all(np.isfinite(T0)):
        return None

    def residual(x: np.ndarray) -> np.ndarray:
        R = _rotvec_matrix(x[:3])
        c = P @ R.T + x[3:]
        z = np.maximum(c[:, 2], 1e-6)
        u = K[0, 0] * c[:, 0] / z + K[0, 2]
        v = K[1, 1] * c[:, 1] / z + K[1, 2]
        return (np.stack([u - uv[:, 0], v - uv[:, 1]], axis=1) * w[:, None]).ravel()

    x = np.r_[Rotation.from_matrix(T0[:3, :3]).as_rotvec(), T0[:3, 3]]
    if refine:
        x = least_squares(residual, x, method="lm" if 2 * len(P) >= 6 else "trf").x
    T = np.eye(4)
    T[:3, :3] = _rotvec_matrix(x[:3])
    T[:3, 3] = x[3:]
    if not np.all(np.isfinite(T)) or np.any((P @ T[:3, :3].T + T[:3, 3])[:, 2] <= 0):
        return None
    r = residual(x).reshape(-1, 2)
    rms = float(np.sqrt(np.sum(r**2) / max(np.sum(w**2), 1e-12)))
    return PnPResult(T, rms)
