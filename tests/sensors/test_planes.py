"""Plane segmentation of depth frames (``sensors.planes``) on frames of planes computed by hand
(``plane_scenes``) with depth noise growing as z^2: which planes are found, their geometry,
supports and regions, and the pieces (depth along rays, the total least-squares fit, hole
filling) checked on their own."""

from __future__ import annotations

import numpy as np
import pytest
from sensors.plane_scenes import planes_frame, tilted_normal

from sim2real.core.camera import CameraIntrinsics
from sim2real.sensors import planes as pl

CAM = CameraIntrinsics(fx=100, fy=100, cx=79.5, cy=59.5, width=160, height=120)
WALL = (np.array([0.0, 0.0, -1.0]), 2.0, 0, 160, 0, 60)
"""Facing the camera 2 m away, the upper half (rows 0-59)."""
FLOOR = (tilted_normal(60), 0.8, 0, 160, 60, 120)
"""Tilted 60 deg, 0.8 m from the camera centre, the lower half: 0.8 to 1.6 m deep."""
BOX = (np.array([0.0, 0.0, -1.0]), 1.0, 50, 110, 30, 80)
"""A box's face 1 m away, 60 x 50 px in the middle, over both."""


def noisy(sigma_at_1m: float, seed: int = 0):
    """The three planes, depth noise sigma_at_1m z^2 (a structured-light sensor's growth)."""
    frame = planes_frame([WALL, FLOOR, BOX], CAM)
    depth = frame.depth_m.copy()
    noise = sigma_at_1m * depth**2 * np.random.default_rng(seed).standard_normal(depth.shape)
    return (depth + noise).astype(np.float32), frame.object_id


def test_three_planes_found_with_their_geometry():
    depth, truth = noisy(0.0005)
    fits = pl.find_planes(depth, CAM)
    assert len(fits) == 3
    # largest support first: floor 8400 px, wall 9600 - 1800 under the box = 7800, box 3000
    floor, wall, box = fits
    assert floor.support_px == 8400 and floor.inliers.sum() == (floor.inliers & (truth == 1)).sum()
    assert floor.normal_cam == pytest.approx(tilted_normal(60), abs=1e-3)
    assert floor.offset_m == pytest.approx(0.8, abs=1e-3)
    assert wall.normal_cam == pytest.approx([0, 0, -1], abs=1e-3)
    assert wall.offset_m == pytest.approx(2.0, abs=2e-3)
    assert (wall.inliers & (truth == 0)).sum() >= 0.99 * 7800  # 3 sigma = 6 mm at 2 m
    assert box.support_px == 3000 and box.offset_m == pytest.approx(1.0, abs=1e-3)
    # each plane's inlier rms is its noise: 0.5 mm at 1 m, 2 mm at 2 m
    assert box.inlier_rms_m == pytest.approx(0.0005, rel=0.1)
    assert wall.inlier_rms_m == pytest.approx(0.002, rel=0.1)
    # regions disjoint, each within its own plane's pixels
    assert not (floor.region & wall.region).any() and not (wall.region & box.region).any()
    for fit, k in ((floor, 1), (wall, 0), (box, 2)):
        assert (fit.region <= (truth == k)).all()


def test_the_gate_is_three_sigma_on_a_tilted_plane():
    # noise 2 mm z^2 on the 60 deg floor (0.8-1.6 m deep: 1.3-5 mm): 3 sigma is above the
    # gate's floor, max(2 mm, 0.3 % of depth), and keeps 99.7 % of the floor's 8400 pixels
    # (a 1 sigma gate would keep 68 %)
    depth, truth = noisy(0.002)
    floor = next(f for f in pl.find_planes(depth, CAM) if abs(f.offset_m - 0.8) < 0.01)
    assert (floor.inliers & (truth == 1)).sum() >= 0.98 * 8400
    assert floor.inlier_rms_m == pytest.approx(0.002 * 1.2**2, rel=0.25)


def test_the_same_seed_finds_the_same_planes():
    depth, _ = noisy(0.0005, seed=3)
    a, b = pl.find_planes(depth, CAM, seed=5), pl.find_planes(depth, CAM, seed=5)
    assert [f.offset_m for f in a] == [f.offset_m for f in b]
    assert all(np.array_equal(x.inliers, y.inliers) for x, y in zip(a, b, strict=True))


def test_small_planes_and_the_plane_budget():
    # a 40 x 40 box face (1600 px) is under the 2000 px a plane needs: two planes only
    small_box = (np.array([0.0, 0.0, -1.0]), 1.0, 60, 100, 40, 80)
    frame = planes_frame([WALL, FLOOR, small_box], CAM)
    assert len(pl.find_planes(frame.depth_m, CAM)) == 2
    depth, _ = noisy(0.0005)
    assert len(pl.find_planes(depth, CAM, max_planes=1)) == 1
    # min_support: 30 % of the 19200 valid pixels = 5760 px: the box (3000) is left out
    assert len(pl.find_planes(depth, CAM, min_support=0.3)) == 2
    assert pl.find_planes(np.zeros((120, 160), np.float32), CAM) == []


def test_the_gate_is_three_sigma_on_a_wall_facing_the_camera():
    # noise 1 mm z^2: 4 mm at 2 m; a 3 sigma gate (12 mm) keeps 99.7 % of the wall
    depth, truth = noisy(0.001)
    wall = next(f for f in pl.find_planes(depth, CAM) if f.offset_m > 1.5)
    assert (wall.inliers & (truth == 0)).sum() >= 0.99 * 7800


def test_plane_depth_along_each_ray():
    # z = -d / (n . r): a wall 2 m away is 2 m deep everywhere; the 60 deg floor at pixel row
    # v sees z = 0.8 / (sin 60 (v - cy) / fy + cos 60)
    wall = pl.PlaneFit(np.array([0.0, 0.0, -1.0]), 2.0, np.zeros((120, 160), bool),
                       np.zeros((120, 160), bool), 0.0)  # fmt: skip
    assert np.allclose(wall.depth_m(CAM), 2.0)
    floor = pl.PlaneFit(tilted_normal(60), 0.8, wall.inliers, wall.region, 0.0)
    z = floor.depth_m(CAM)
    a = np.radians(60)
    expected = 0.8 / (np.sin(a) * (100 - 59.5) / 100 + np.cos(a))
    assert z[100, 7] == pytest.approx(expected, rel=1e-6)
    # rays with sin 60 (v - cy) / fy + cos 60 <= 0, i.e. v <= cy - fy cot 60 = 1.77 (rows 0
    # and 1), run parallel to or away from the floor: 0
    assert (z[:2] == 0).all() and (z[2:] > 0).all()


def test_weighted_plane_fit_and_orientation():
    # points exactly on x + 2 y + 2 z = 3 (unit normal (1, 2, 2) / 3, distance 1): the fit
    # finds it, oriented toward the camera (d > 0: n = -(1, 2, 2) / 3, d = 1)
    rng = np.random.default_rng(0)
    xy = rng.uniform(-1, 1, (50, 2))
    pts = np.column_stack([xy, (3 - xy[:, 0] - 2 * xy[:, 1]) / 2])
    plane = pl._weighted_plane(pts, np.ones(50))
    assert plane == pytest.approx(np.array([-1, -2, -2, 3]) / 3, abs=1e-12)
    assert pl._facing_camera(np.array([0.0, 0.0, 2.0, -4.0])) == pytest.approx([0, 0, -1, 2])
    # weights: an outlier with weight 0 changes nothing
    out = np.vstack([pts, [0.0, 0.0, 5.0]])
    assert pl._weighted_plane(out, np.append(np.ones(50), 0.0)) == pytest.approx(plane)


def test_region_fills_dropouts_but_not_objects():
    inliers = np.ones((60, 60), bool)
    inliers[10, 10] = False  # a dropout
    inliers[20:26, 20:26] = False  # 36 px: smaller than 50, filled
    inliers[35:45, 35:45] = False  # 100 px: an object on the plane, kept out
    region = pl._region(inliers)
    assert region[10, 10] and region[20:26, 20:26].all()
    assert not region[36:44, 36:44].any()
    assert region[inliers].all()  # every inlier stays
