"""The points a detector predicts on a part: the centre of its bounding box and its 8 corners,
and the symmetry-aware choice of which of a symmetric part's equivalent poses labels them.

A symmetric part (a cube, a prism) looks the same in several poses, so "corner 3" is not a
function of the image. Labels use the canonical pose: of the equivalent poses ``T @ S`` (S in
the part's symmetry group), the one whose rotation is closest to the camera's axes (largest
trace of R). Pitteri et al. (2019) discuss the idea; the choice is the same in training and at
run time, so a PnP on predicted keypoints returns one member of the true pose's class.
"""

from __future__ import annotations

import numpy as np

from sim2real.core.mesh_io import Mesh

N_KEYPOINTS = 8
MAX_SYMMETRY_RESIDUAL = 0.01
"""A symmetry transform is kept when it maps every vertex to within this fraction of the
diameter of the surface (guards against transforms that a detector's closure made up)."""


def bbox_corners(mesh: Mesh) -> np.ndarray:
    """(8, 3) float64 metres, part frame: the bounding box's corners, x slowest, z fastest."""
    lo, hi = mesh.vertices.min(axis=0), mesh.vertices.max(axis=0)
    return np.array(
        [
            [(lo, hi)[i][0], (lo, hi)[j][1], (lo, hi)[k][2]]
            for i in (0, 1)
            for j in (0, 1)
            for k in (0, 1)
        ]
    )


def project(points_cam: np.ndarray, K: np.ndarray) -> np.ndarray:
    """(N, 3) camera-frame points (z > 0) -> (N, 2) pixels (OpenCV: pixel centres at integers)."""
    p = points_cam @ np.asarray(K, dtype=np.float64).T
    return p[:, :2] / p[:, 2:3]


def verified_symmetries(mesh: Mesh, transforms: np.ndarray) -> np.ndarray:
    """(S, 4, 4): the identity and each of ``transforms`` that maps the mesh's vertices onto its
    surface within ``MAX_SYMMETRY_RESIDUAL`` of the diameter."""
    import open3d as o3d

    from sim2real.core.raycast import raycasting_scene

    scene = raycasting_scene(mesh.vertices, mesh.faces)
    tol = MAX_SYMMETRY_RESIDUAL * mesh.diameter_m
    kept = [np.eye(4)]
    for T in np.asarray(transforms, dtype=np.float64):
        if np.allclose(T, np.eye(4), atol=1e-9):
            continue
        moved = mesh.transformed(T).astype(np.float32)
        dist = scene.compute_distance(o3d.core.Tensor(moved)).numpy()
        if float(dist.max()) < tol:
            kept.append(T)
    return np.stack(kept)


def canonical_pose(T_cam_part: np.ndarray, symmetries: np.ndarray) -> np.ndarray:
    """Of ``T_cam_part @ S`` for S in ``symmetries`` (S, 4, 4), the one whose rotation is
    closest to the identity (largest trace): the pose that labels the keypoints."""
    T = np.asarray(T_cam_part, dtype=np.float64)
    cands = T[None] @ np.asarray(symmetries, dtype=np.float64)
    traces = np.trace(cands[:, :3, :3], axis1=1, axis2=2)
    return cands[int(np.argmax(traces))]


def keypoint_targets(
    T_cam_part: np.ndarray, K: np.ndarray, corners: np.ndarray, symmetries: np.ndarray
) -> np.ndarray:
    """(8, 2) pixels of the bounding-box corners under the canonical pose."""
    T = canonical_pose(T_cam_part, symmetries)
    return project(corners @ T[:3, :3].T + T[:3, 3], K)


def part_symmetries(part) -> np.ndarray:
    """(S, 4, 4) verified symmetries of a ``PreparedModel``: its own (a MODEL_DIR's), else those
    that ``models.symmetry_detect`` finds on the mesh."""
    sym = part.symmetry
    if sym.kind == "none":
        from sim2real.models.symmetry_detect import detect_symmetry

        sym = detect_symmetry(part.mesh.vertices, part.mesh.faces).symmetry
    if sym.kind == "none":
        return np.eye(4)[None]
    return verified_symmetries(part.mesh, sym.transforms(n_continuous=36))
