"""Projective point-to-plane ICP and its scoring (``tracking.icp``): a square plate in front
of a wall drawn by hand (every pixel's depth known), so the counts of agreeing, see-through,
occluded and mixed-pixel returns are known exactly; the pose recovered on a rendered box; the
small-motion update against SciPy's rotation vector."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh
from scipy.spatial.transform import Rotation

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.mesh_io import validate_mesh
from sim2real.core.pose import make_pose, rpy_deg_to_matrix
from sim2real.tracking.icp import (
    _skew_update,
    align,
    depth_equations,
    evaluate,
    largest_move,
    outline_edges,
    step_is_safe,
)
from sim2real.tracking.nearest_icp import align_nearest

CAM = CameraIntrinsics(fx=150, fy=150, cx=79.5, cy=59.5, width=160, height=120)
HALF_M = 0.03
"""The plate is 6 x 6 cm, facing the camera 0.5 m away: it covers |u - cx|, |v - cy| <= 9 px,
the pixels 71..88 and 51..68."""


def plate_frame(wall_m: float | None = 0.6) -> np.ndarray:
    """(H, W) depth: the plate at 0.5 m, the wall behind it (or no return)."""
    depth = np.full((120, 160), 0.0 if wall_m is None else wall_m, np.float32)
    depth[51:69, 71:89] = 0.5
    return depth


def plate_model(n: int = 9) -> tuple[np.ndarray, np.ndarray]:
    """n x n points on the plate's front face, within 2.4 cm of its centre (7.2 px at 0.5 m:
    every one projects onto the plate), normals toward the camera (-z)."""
    g = np.linspace(-0.024, 0.024, n)
    xy = np.stack(np.meshgrid(g, g), -1).reshape(-1, 2)
    points = np.concatenate([xy, np.zeros((n * n, 1))], axis=1)
    normals = np.tile([0.0, 0.0, -1.0], (n * n, 1))
    return points, normals


def at(z_m: float, x_m: float = 0.0) -> np.ndarray:
    return make_pose(np.eye(3), [x_m, 0.0, z_m])


def test_the_true_pose_agrees_everywhere():
    points, normals = plate_model()
    a = evaluate(plate_frame(), CAM, points, normals, at(0.5), inlier_m=0.006)
    assert (a.inliers, a.behind, a.in_front, a.no_return) == (81, 0, 0, 0)
    assert a.visible == a.facing == a.points == 81
    assert a.rms_m == pytest.approx(0.0, abs=1e-7) and a.score == 1.0


def test_contradictions_and_occluders():
    points, normals = plate_model()
    # 5 cm too near: the camera sees the plate behind every model point (see-through)
    near = evaluate(plate_frame(), CAM, points, normals, at(0.45), inlier_m=0.006)
    assert (near.inliers, near.behind, near.in_front) == (0, 81, 0)
    # 2 cm too far: the model would sit inside the plate, which no occluder explains
    inside = evaluate(plate_frame(), CAM, points, normals, at(0.52), inlier_m=0.006)
    assert (inside.inliers, inside.behind, inside.in_front) == (0, 81, 0)
    # 8 cm too far (>= occluder_m = 5 cm): the plate hides it: occluded, not contradicted
    hidden = evaluate(plate_frame(), CAM, points, normals, at(0.58), inlier_m=0.006)
    assert (hidden.inliers, hidden.behind, hidden.in_front) == (0, 0, 81)
    # no return anywhere: all visible, none with an opinion
    dark = evaluate(np.zeros((120, 160), np.float32), CAM, points, normals, at(0.5), 0.006)
    assert (dark.inliers, dark.behind, dark.no_return, dark.visible) == (0, 0, 81, 81)
    # turned away from the camera: not visible at all
    away = evaluate(plate_frame(), CAM, points, -normals, at(0.5), inlier_m=0.006)
    assert (away.visible, away.facing) == (0, 0)


def test_inlier_tolerance_grows_with_depth():
    # the tolerance is max(inlier_m, 1 % of depth): 6 mm at 0.5 m; at 1.0 m, 10 mm
    points, normals = plate_model()
    assert evaluate(plate_frame(), CAM, points, normals, at(0.5055), 0.006).inliers == 81
    assert evaluate(plate_frame(), CAM, points, normals, at(0.5065), 0.006).behind == 81
    far = plate_frame() * 2  # the same scene at twice the distance: plate at 1.0 m
    assert evaluate(far, CAM, points * 2, normals, at(1.009), 0.006).inliers == 81


def test_returns_beside_an_occluders_edge_have_no_opinion():
    # model points at 0.56 m on row cy, at the pixel centres u = 89..94, just right of the
    # plate (u <= 88, 0.5 m): each sees the wall (0.6 m) behind it, a contradiction, except
    # where a pixel 2 px away shows the plate (>= 5 cm in front): u = 89, 90 (mixed pixels)
    u = np.arange(89, 95)
    z = 0.56
    points = np.stack([(u - CAM.cx) / CAM.fx * z, np.zeros(6), np.zeros(6)], axis=1)
    normals = np.tile([0.0, 0.0, -1.0], (6, 1))
    a = evaluate(plate_frame(), CAM, points, normals, at(z), inlier_m=0.006)
    assert a.behind == 4 and a.inliers == 0


def test_points_next_to_the_outline_have_no_opinion():
    # edge_margin_px 3: a point whose distance to the outline, seen at 0.5 m, is under 3 px
    # (1 cm at fx 150) counts for nothing
    points, normals = plate_model()
    edge_m = HALF_M - np.abs(points[:, :2]).max(axis=1)  # 6 mm for the outer ring
    a = evaluate(plate_frame(), CAM, points, normals, at(0.5), 0.006, edge_distance_m=edge_m,
                 edge_margin_px=3.0)  # fmt: skip
    # rings at 6, 12, 18, 24, 30 mm from the edge: the outer one (32 points) has no opinion
    assert a.points == 81 - 32 and a.inliers == 49


def outline(z_m: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """Points on the plate's four edges (9 each) and their outward directions."""
    s = np.linspace(-0.025, 0.025, 9)
    edges = []
    for axis, sign in ((0, 1), (0, -1), (1, 1), (1, -1)):
        p = np.zeros((9, 3))
        p[:, axis] = sign * HALF_M
        p[:, 1 - axis] = s
        o = np.zeros((9, 3))
        o[:, axis] = sign
        edges.append((p, o))
    return np.concatenate([e[0] for e in edges]), np.concatenate([e[1] for e in edges])


def test_outline_is_an_edge_only_where_the_scene_steps_back():
    contour, outward = outline()
    # 4 px outside the outline the camera sees the wall 10 cm behind, or nothing: an edge
    assert outline_edges(plate_frame(0.6), CAM, contour, outward, at(0.5))[0] == 1.0
    assert outline_edges(plate_frame(None), CAM, contour, outward, at(0.5))[0] == 1.0
    # a surface 5 mm behind the plate (under max(1 cm, 2 % of depth)): the shape merely
    # lies on a larger surface, no edge
    assert outline_edges(plate_frame(0.505), CAM, contour, outward, at(0.5))[0] == 0.0
    # the wall 5 mm behind the plate left of column 82, 10 cm behind from there on: the right
    # edge (9 points, checked at u = 92.5) and the top and bottom points at u = 79.5 + 300 s
    # >= 82, s in {12.5, 18.75, 25} mm (3 each) see an edge: 15 of the 36
    mixed = plate_frame(0.6)
    mixed[:, :82] = np.where(mixed[:, :82] == 0.6, 0.505, mixed[:, :82])
    assert outline_edges(mixed, CAM, contour, outward, at(0.5))[0] == pytest.approx(15 / 36)
    # an occluder 20 cm in front of everything: it says nothing about the outline
    occluded = np.full((120, 160), 0.3, np.float32)
    assert outline_edges(occluded, CAM, contour, outward, at(0.5))[0] == 1.0


def test_outline_beside_an_occluder_is_not_clear():
    contour, outward = outline()
    # an occluder 20 cm in front left of column 80: the left edge (9 points) and the top and
    # bottom points left of the centre (4 each) cannot be judged; the other 19, beside the
    # wall 10 cm behind, are all edges
    frame = plate_frame(0.6)
    frame[:, :80] = 0.3
    edges, among_returns, clear = outline_edges(frame, CAM, contour, outward, at(0.5))
    assert edges == 1.0 and among_returns == 1.0 and clear == pytest.approx(19 / 36)
    # wholly hidden: nothing objects, and nothing of it is clear
    occluded = np.full((120, 160), 0.3, np.float32)
    assert outline_edges(occluded, CAM, contour, outward, at(0.5)) == (1.0, 1.0, 0.0)
    assert outline_edges(plate_frame(0.6), CAM, contour, outward, at(0.5))[2] == 1.0


def test_counted_among_returns_missing_data_beside_the_outline_is_no_edge():
    contour, outward = outline()
    # nothing beside the outline: an edge, but no return to judge it by (no objection)
    assert outline_edges(plate_frame(None), CAM, contour, outward, at(0.5)) == (1.0, 1.0, 1.0)
    # the left half beside no return, the right half beside a surface 5 mm behind: the
    # missing data makes half the outline an edge, the returns none of it
    half = plate_frame(0.505)
    half[:, :80] = 0.0
    edges, among_returns, _ = outline_edges(half, CAM, contour, outward, at(0.5))
    assert 0.3 < edges < 0.7 and among_returns == 0.0


def test_too_few_pairs_give_no_equations():
    points, normals = plate_model()
    assert depth_equations(np.zeros((120, 160)), CAM, points, normals, at(0.5), 0.03) is None
    A, b, pairs, pn, spread = depth_equations(
        plate_frame(), CAM, points, normals, at(0.51), 0.03, spread=True
    )
    # every point paired, 1 cm behind the plate along its normal (-z): residual n.(q - p) =
    # -1 * (0.5 - 0.51) = 0.01; the spread (1.4826 MAD) of equal residuals is 1.4826 * 0.01
    assert pairs == 81 and pn.shape == (81, 3) and spread == pytest.approx(0.014826)
    x = np.linalg.lstsq(A, b, rcond=None)[0]
    assert x[5] == pytest.approx(-0.01, abs=1e-6)  # the step brings the plate 1 cm nearer
    # Tukey's biweight with c = gate / 2 = 1.5 cm: a 1 cm residual weighs (1 - (2/3)^2)^2 =
    # 25/81, so the z-translation curvature of 81 points is 25; a 2 cm one (inside the 3 cm
    # gate, beyond c) weighs nothing
    assert A[5, 5] == pytest.approx(25.0)
    A2, b2, pairs2, _, _ = depth_equations(plate_frame(), CAM, points, normals, at(0.52), 0.03)
    assert pairs2 == 81 and not A2.any() and not b2.any()
    # surfaces turned away from the camera pair with nothing
    assert depth_equations(plate_frame(), CAM, points, -normals, at(0.51), 0.03) is None


def test_small_motion_update_is_the_rotation_vector():
    x = np.array([0.1, -0.2, 0.3, 0.01, 0.02, -0.03])
    T = _skew_update(x)
    assert T[:3, :3] == pytest.approx(Rotation.from_rotvec(x[:3]).as_matrix(), abs=1e-12)
    assert T[:3, 3].tolist() == [0.01, 0.02, -0.03]
    assert np.array_equal(_skew_update(np.zeros(6)), np.eye(4))


def test_step_size_limits():
    # a 1 cm translation moves every point 1 cm; a 0.1 rad turn about z moves (1, 0, 0) by
    # 0.1 m (linearized: |w x p|)
    p = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    assert largest_move(np.array([0, 0, 0, 0.01, 0, 0]), p) == pytest.approx(0.01)
    assert largest_move(np.array([0, 0, 0.1, 0, 0, 0]), p) == pytest.approx(0.1)
    assert step_is_safe(np.array([0, 0, 0, 0.05, 0, 0]), p, gate_m=0.03)  # 5 cm <= 2 gates
    assert not step_is_safe(np.array([0, 0, 0, 0.07, 0, 0]), p, gate_m=0.03)
    # a turn over MAX_STEP_RAD (0.35 rad) is unsafe even where it moves nothing far
    assert not step_is_safe(np.array([0.36, 0, 0, 0, 0, 0]), np.zeros((1, 3)), gate_m=1.0)
    assert step_is_safe(np.array([0.34, 0, 0, 0, 0, 0]), np.zeros((1, 3)), gate_m=1.0)


BOX = trimesh.creation.box((0.1, 0.06, 0.04))
T_BOX = make_pose(rpy_deg_to_matrix(25, -35, 20), [0.01, -0.005, 0.5])


def box_model(n: int = 3000) -> tuple[np.ndarray, np.ndarray]:
    points, faces = trimesh.sample.sample_surface_even(BOX, n, seed=1)
    return points, BOX.face_normals[faces]


@pytest.fixture(scope="module")
def box_depth() -> np.ndarray:
    from sim2real.sensors.render import DepthRenderer
    from sim2real.sensors.scene import make_scene

    scene = make_scene([validate_mesh(BOX.vertices, BOX.faces, "box")], [T_BOX])
    return DepthRenderer(scene, CAM).render_ideal().depth_m


def pose_error(T: np.ndarray, T_ref: np.ndarray) -> tuple[float, float]:
    """(translation [mm], rotation [deg])."""
    dr = Rotation.from_matrix(T[:3, :3].T @ T_ref[:3, :3]).magnitude()
    return 1e3 * float(np.linalg.norm(T[:3, 3] - T_ref[:3, 3])), float(np.degrees(dr))


def perturbed(R: np.ndarray, dt_m: list[float]) -> np.ndarray:
    """T_BOX turned by R about the box's centre and moved by dt_m."""
    T = T_BOX @ make_pose(R, np.zeros(3))
    T[:3, 3] += dt_m
    return T


def test_align_recovers_the_box_from_a_perturbed_start(box_depth):
    # three faces seen: every degree of freedom is pinned. From 5 mm and 4 deg off, the
    # projective ICP lands within the pixel footprint (3.3 mm at 0.5 m, fx 150) and better
    points, normals = box_model()
    start = perturbed(rpy_deg_to_matrix(2.5, -2.0, 2.3), [0.003, -0.003, 0.003])
    dt0, dr0 = pose_error(start, T_BOX)
    assert dt0 > 4 and dr0 > 3.5
    a = align(box_depth, CAM, points, normals, start)
    dt, dr = pose_error(a.T_cam_part, T_BOX)
    assert dt < 1.0 and dr < 0.5, (dt, dr)
    assert a.score > 0.95 and a.behind < 0.02 * a.visible


def test_align_nearest_pulls_in_from_outside_the_projective_capture(box_depth):
    # scene points = the model's own points at the truth; from 2 cm and 10 deg off, where the
    # projective pairing (gates 3, 1.2, 0.6 cm) does not move at all, the nearest-neighbour
    # pairing converges onto them exactly
    points, normals = box_model()
    scene = points @ T_BOX[:3, :3].T + T_BOX[:3, 3]
    start = perturbed(rpy_deg_to_matrix(6, -5, 6), [0.012, -0.01, 0.012])
    projective = align(box_depth, CAM, points, normals, start).T_cam_part
    assert pose_error(projective, T_BOX)[0] > 15
    T = align_nearest(scene, points, normals, start, gate_m=0.05, iterations=30)
    dt, dr = pose_error(T, T_BOX)
    assert dt < 1e-6 and dr < 1e-6, (dt, dr)
    # fewer than 12 scene points: the start comes back
    assert np.array_equal(align_nearest(scene[:11], points, normals, start, 0.05), start)
