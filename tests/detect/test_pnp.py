"""PnP against hand-made projections, and the symmetry-aware keypoint labels."""

import numpy as np
import trimesh

from sim2real.core.mesh_io import Mesh
from sim2real.core.pose import make_pose, rpy_deg_to_matrix
from sim2real.detect.keypoints import (
    bbox_corners,
    canonical_pose,
    keypoint_targets,
    project,
    verified_symmetries,
)
from sim2real.detect.pnp import solve_pnp

K = np.array([[300.0, 0, 160.0], [0, 300.0, 120.0], [0, 0, 1]])
BOX = trimesh.creation.box(extents=[0.08, 0.05, 0.03])
MESH = Mesh(np.asarray(BOX.vertices) + np.array([0.01, 0.0, 0.02]), np.asarray(BOX.faces, np.int32))


def test_corners_and_centre_by_hand():
    c = bbox_corners(MESH)
    assert c.shape == (8, 3)
    assert np.allclose(c[0], [-0.03, -0.025, 0.005]) and np.allclose(c[7], [0.05, 0.025, 0.035])
    assert np.allclose(MESH.centre_m, [0.01, 0.0, 0.02])
    # a point 1 m ahead, 0.1 m right: u = 160 + 300 * 0.1 = 190
    assert np.allclose(project(np.array([[0.1, -0.2, 1.0]]), K), [[190.0, 60.0]])


def test_pnp_recovers_exact_pose_from_noiseless_corners():
    T = make_pose(rpy_deg_to_matrix(20, -35, 110), [0.05, -0.03, 0.6])
    pts = bbox_corners(MESH)
    uv = project(pts @ T[:3, :3].T + T[:3, 3], K)
    res = solve_pnp(pts, uv, K)
    assert res is not None and res.rms_px < 1e-6
    assert np.allclose(res.T_cam_part, T, atol=1e-7)


def test_pnp_with_pixel_noise_stays_close_and_weights_drop_an_outlier():
    rng = np.random.default_rng(0)
    T = make_pose(rpy_deg_to_matrix(-40, 10, 30), [-0.02, 0.04, 0.5])
    pts = bbox_corners(MESH)
    uv = project(pts @ T[:3, :3].T + T[:3, 3], K) + rng.normal(0, 0.3, (8, 2))
    res = solve_pnp(pts, uv, K)
    assert np.linalg.norm(res.T_cam_part[:3, 3] - T[:3, 3]) < 0.005
    bad = uv.copy()
    bad[2] += 40.0  # one keypoint 40 px off, weight zero: the others still give the pose
    w = np.ones(8)
    w[2] = 0.0
    res = solve_pnp(pts, bad, K, weights=w, T_init=solve_pnp(pts, uv, K).T_cam_part)
    assert np.linalg.norm(res.T_cam_part[:3, 3] - T[:3, 3]) < 0.005


def test_canonical_pose_is_one_per_symmetry_class():
    cube = trimesh.creation.box(extents=[0.05, 0.05, 0.05])
    mesh = Mesh(np.asarray(cube.vertices), np.asarray(cube.faces, np.int32))
    turns = [make_pose(rpy_deg_to_matrix(0, 0, a), np.zeros(3)) for a in (90, 180, 270)]
    quarter = turns[0]
    tilt = make_pose(rpy_deg_to_matrix(10, 0, 0), np.zeros(3))  # not a symmetry of a cube
    syms = verified_symmetries(mesh, np.stack([*turns, tilt]))
    assert len(syms) == 4  # identity and the three turns about z; the tilt is rejected
    T = make_pose(rpy_deg_to_matrix(5, 8, 80), [0, 0, 0.5])
    a, b = canonical_pose(T, syms), canonical_pose(T @ quarter, syms)
    assert np.allclose(a, b)  # equivalent poses -> the same label
    assert np.trace(a[:3, :3]) >= np.trace(T[:3, :3])
    assert np.allclose(
        keypoint_targets(T, K, bbox_corners(mesh), syms),
        keypoint_targets(T @ quarter, K, bbox_corners(mesh), syms),
    )
