"""The part's motion in synthetic sequences (``tracking.synth_motion``): the minimum-jerk
profile, where the camera stands, the speed of the fast moves and the frames the part spends
wholly outside the view, each against the geometry worked by hand."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.errors import InputError
from sim2real.core.mesh_io import validate_mesh
from sim2real.tracking import synth_motion as sm

CAMERA = CameraIntrinsics(fx=300, fy=300, cx=159.5, cy=119.5, width=320, height=240)
BOX = trimesh.creation.box((0.1, 0.06, 0.04))
MESH = validate_mesh(BOX.vertices + np.array([0.2, 0.0, 0.0]), BOX.faces, "box")  # off origin
RADIUS = float(np.linalg.norm([0.05, 0.03, 0.02]))  # 0.0616 m, half the box's diagonal
DIAMETER = 2 * RADIUS


def test_minimum_jerk_profile():
    # 10 t^3 - 15 t^4 + 6 t^5: 0 -> 1, symmetric, peak slope 30/16 = 1.875 at t = 1/2
    t = np.linspace(0, 1, 100001)
    s = sm._minjerk(t)
    assert (s[0], s[-1], s[50000]) == (0.0, 1.0, pytest.approx(0.5))
    assert np.gradient(s, t).max() == pytest.approx(sm.MINJERK_PEAK, rel=1e-6)
    assert sm._minjerk(np.array([-1.0, 2.0])).tolist() == [0.0, 1.0]  # clipped


def test_layout_puts_the_part_in_view_from_50_degrees():
    layout = sm.scene_layout(MESH, CAMERA, DIAMETER)
    assert layout.centre_part == pytest.approx([0.2, 0.0, 0.0])
    assert layout.radius_m == pytest.approx(RADIUS)
    # the part spans 30 % of the image width: z = D fx / (0.3 W) = 0.1233 * 300 / 96 = 0.385
    # m, below the 0.4 m floor; and at least radius + 0.3 = 0.362 m
    assert layout.distance_m == pytest.approx(0.4)
    assert layout.height_m == pytest.approx(RADIUS + 0.01)
    T = layout.T_world_cam
    target = np.array([0.0, 0.0, layout.height_m])
    view = T[:3, 2]  # the camera's z axis (forward) in the world
    assert target - T[:3, 3] == pytest.approx(0.4 * view)
    assert np.degrees(np.arcsin(-view[2])) == pytest.approx(50.0)  # looking down 50 deg
    # half the image at the part's distance: 0.4 * 160 / 300 and 0.4 * 120 / 300
    assert (layout.half_width_m, layout.half_height_m) == pytest.approx((0.21333, 0.16), rel=1e-4)


def test_a_large_part_stands_back():
    big = validate_mesh(BOX.vertices * 10, BOX.faces, "big")  # 1 x 0.6 x 0.4 m
    layout = sm.scene_layout(big, CAMERA, 10 * DIAMETER)
    # z = 1.233 * 300 / 96 = 3.85 m clipped to 1.2, then at least radius + 0.3 = 0.916: 1.2
    assert layout.distance_m == pytest.approx(1.2)


def test_the_part_stands_beyond_the_sensor_s_minimum_range():
    # a Kinect returns nothing nearer than 0.5 m: 0.5 + radius 0.0616 + margin 0.03 = 0.5916 m
    assert sm.scene_layout(MESH, CAMERA, DIAMETER, min_range_m=0.5).distance_m == pytest.approx(
        0.5 + RADIUS + 0.03
    )
    # a D435's 0.28 m leaves the 0.4 m floor as it was
    assert sm.scene_layout(MESH, CAMERA, DIAMETER, min_range_m=0.28).distance_m == 0.4


def centres(poses: list[np.ndarray], layout: sm.Layout) -> np.ndarray:
    """(N, 3) world positions of the part's bounding-sphere centre."""
    return np.array([T[:3, :3] @ layout.centre_part + T[:3, 3] for T in poses])


def test_smooth_drift_stays_near_the_target():
    layout = sm.scene_layout(MESH, CAMERA, DIAMETER)
    poses = sm.trajectory("smooth", 300, np.random.default_rng(0), layout, CAMERA)  # 10 s
    assert len(poses) == 300
    c = centres(poses, layout)
    # offsets of at most 5, 3 and 2 cm (x, y, z: 1 + sin, 1 cm) around (0, 0, height)
    off = c - [0.0, 0.0, layout.height_m]
    assert np.all(np.abs(off).max(axis=0) <= [0.05 + 1e-9, 0.03 + 1e-9, 0.02 + 1e-9])
    assert off[:, 2].min() >= -1e-12  # never below the table's rest height
    for T in poses:
        assert T[:3, :3] @ T[:3, :3].T == pytest.approx(np.eye(3), abs=1e-12)
    # steps of a slow drift: at most a few cm/s, 20 deg/s give < 5 mm a frame
    assert np.linalg.norm(np.diff(c, axis=0), axis=1).max() < 0.005


def test_fast_moves_peak_at_the_set_speed():
    layout = sm.scene_layout(MESH, CAMERA, DIAMETER)
    poses = sm.trajectory("fast", 300, np.random.default_rng(1), layout, CAMERA)
    speed = np.linalg.norm(np.diff(centres(poses, layout), axis=0), axis=1) * sm.FPS
    # each move's minimum-jerk peak is FAST_SPEED_M_S (1 m/s) when it is long enough (its
    # steps a whole number of frames: the peak may fall a little short of 1, never over)
    assert speed.max() <= sm.FAST_SPEED_M_S * 1.01
    assert speed.max() > 0.85 * sm.FAST_SPEED_M_S  # seen 0.93-0.99


def test_leaving_the_view_leaves_it_wholly_for_a_while():
    layout = sm.scene_layout(MESH, CAMERA, DIAMETER)
    n = 100
    poses = sm.trajectory("leave-view", n, np.random.default_rng(2), layout, CAMERA)
    c = centres(poses, layout)
    cam = np.linalg.inv(layout.T_world_cam)
    p = c @ cam[:3, :3].T + cam[:3, 3]  # sphere centres in the camera frame
    # the bounding sphere is outside the view when it lies beyond the left or right frustum
    # plane by more than its radius: plane normals (fx, 0, -+(c + 0.5)) / norm
    nl = np.array([CAMERA.fx, 0, CAMERA.cx + 0.5])
    nr = np.array([-CAMERA.fx, 0, CAMERA.width - 0.5 - CAMERA.cx])
    out = (p @ nl / np.linalg.norm(nl) < -RADIUS) | (p @ nr / np.linalg.norm(nr) < -RADIUS)
    assert not out[0] and not out[-1]  # starts and ends in view
    assert 17 <= out.sum() <= 23  # 20 frames unseen are planned at n = 100 (seen 19-20)
    gone = np.flatnonzero(out)
    assert np.all(np.diff(gone) == 1)  # one stretch: out, then back in
    with pytest.raises(InputError, match="--frames: leave-view needs at least"):
        sm.trajectory("leave-view", 10, np.random.default_rng(2), layout, CAMERA)
