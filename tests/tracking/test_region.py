"""The colour (region) modality: histograms, the outline found along correspondence lines, the
pose it pulls to (alone, through its own camera), and the tracker's use of it where depth
cannot say (a dark part), cannot help (thin features) or colour cannot (a colourless scene)."""

import numpy as np
import pytest
from rgbd_scenes import depth_of, figurine, paint, part_mask, without_thin_features

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.pose import invert_pose, look_at, make_pose, rpy_deg_to_matrix
from sim2real.models.viewpoints import build_viewpoints
from sim2real.sensors.demo_part import machined_bracket
from sim2real.sensors.presets import get_preset
from sim2real.tracking.color_histograms import ColorHistograms
from sim2real.tracking.config import TrackerConfig
from sim2real.tracking.fused_align import FusedSettings, fused_align
from sim2real.tracking.region import RegionModality
from sim2real.tracking.tracker import Tracker

D435 = get_preset("realsense-d435")
DEPTH_CAM = D435.camera
COLOR_CAM = CameraIntrinsics(fx=610, fy=612, cx=322.4, cy=238.1, width=640, height=480)
# the colour camera 2.5 cm beside the depth camera, turned 2 degrees: T_depth_color
T_DEPTH_COLOR = make_pose(rpy_deg_to_matrix(1.0, -2.0, 0.5), [0.025, 0.002, -0.001])
T_COLOR_DEPTH = invert_pose(T_DEPTH_COLOR)
BRACKET = machined_bracket()
T_TRUE = invert_pose(look_at([0.12, -0.3, 0.35], [0.0, 0.0, 0.02]))


def test_histograms_tell_the_part_from_the_background_and_say_when_they_cannot():
    h = ColorHistograms(16)
    red = np.tile([200, 30, 20], (500, 1)).astype(np.uint8)
    blue = np.tile([20, 40, 190], (500, 1)).astype(np.uint8)
    h.update(red, blue)
    assert h.foreground_probability(red[:1])[0] > 0.99
    assert h.foreground_probability(blue[:1])[0] < 0.01
    assert h.separation() == pytest.approx(1.0)
    h.update(red, red)  # replaced (no rate): the same colours everywhere
    assert h.separation() == pytest.approx(0.0, abs=1e-12)
    h.update(red, blue)
    h.update(blue, red, rate=0.2)  # blended: 80 % of red is still the part's colour
    assert h.foreground[h.index(red[:1])[0]] == pytest.approx(0.8)


def _region(views, T, color, depth):
    region = RegionModality(COLOR_CAM, T_COLOR_DEPTH)
    region.learn(color, region.lines(views, T, depth, DEPTH_CAM))
    return region


def test_colour_alone_pulls_a_shifted_pose_back_through_its_own_camera():
    views = build_viewpoints(BRACKET, 600, 200, 200)
    color = paint(part_mask(BRACKET, T_COLOR_DEPTH @ T_TRUE, COLOR_CAM))
    no_depth = np.zeros((DEPTH_CAM.height, DEPTH_CAM.width), np.float32)
    region = _region(views, T_TRUE, color, no_depth)
    # 4 mm sideways and 5 degrees about the line of sight (both show in the outline)
    ray = T_TRUE[:3, 3] / np.linalg.norm(T_TRUE[:3, 3])
    c = np.cos(np.radians(5.0))
    s = np.sin(np.radians(5.0))
    K = np.array([[0, -ray[2], ray[1]], [ray[2], 0, -ray[0]], [-ray[1], ray[0], 0]])
    R = np.eye(3) + s * K + (1 - c) * K @ K
    centre = T_TRUE[:3, 3]
    start = make_pose(R, centre - R @ centre + np.array([0.004, -0.002, 0.0])) @ T_TRUE
    settings = FusedSettings((0.01,), depth_weight=0.0)
    T, lines, _ = fused_align(no_depth, DEPTH_CAM, views, start, region, color, settings)
    lateral = np.linalg.norm((T[:3, 3] - T_TRUE[:3, 3]) - ray * (ray @ (T[:3, 3] - T_TRUE[:3, 3])))
    R_err = T[:3, :3] @ T_TRUE[:3, :3].T
    about_ray = np.degrees(
        np.arcsin(np.clip(0.5 * (R_err - R_err.T)[[2, 0, 1], [1, 2, 0]] @ ray, -1, 1))
    )
    assert lateral < 0.001, lateral  # from 4.5 mm
    assert abs(about_ray) < 1.0, about_ray  # from 5 degrees
    assert lines.valid.sum() > 100


def test_a_dark_part_is_tracked_from_colour_and_lost_without_it():
    # the part returns no depth at all (a dark surface) and is held up in front of a far
    # background (the table under a part would lend it returns along its base)
    depth = np.zeros((DEPTH_CAM.height, DEPTH_CAM.width), np.float32)
    color = paint(part_mask(BRACKET, T_COLOR_DEPTH @ T_TRUE, COLOR_CAM), seed=1)
    config = TrackerConfig(views=300)
    start = make_pose(rpy_deg_to_matrix(1.0, 0.0, -1.0), [0.002, 0.001, 0.0]) @ T_TRUE
    with_color = Tracker(BRACKET, DEPTH_CAM, config, COLOR_CAM, T_COLOR_DEPTH)
    with_color.initialize(start)
    r = with_color.update(depth, color)
    assert r.status == "tracking", r.details
    assert r.details["color_score"] is not None
    depth_only = Tracker(BRACKET, DEPTH_CAM, config)
    depth_only.initialize(start)
    assert depth_only.update(depth).status == "lost"  # nothing in the depth image vouches


def test_a_colourless_scene_leaves_the_decision_to_depth():
    depth = depth_of(BRACKET, T_TRUE, DEPTH_CAM, D435.profile, seed=2)
    grey = np.full((COLOR_CAM.height, COLOR_CAM.width, 3), 128, np.uint8)
    tracker = Tracker(BRACKET, DEPTH_CAM, TrackerConfig(views=300), COLOR_CAM, T_COLOR_DEPTH)
    tracker.initialize(T_TRUE)
    r = tracker.update(depth, grey)
    assert r.status == "tracking"
    assert r.details["color_score"] is None  # the colours cannot tell part from background
    assert tracker.region.histograms.separation() < 0.05


def test_thin_features_a_stereo_sensor_loses_do_not_make_a_true_start_lost():
    fig = figurine()
    statuses = {0.0: [], 3.0: []}
    for i, eye in enumerate(([0.1, -0.4, 0.3], [-0.25, -0.35, 0.25], [0.2, -0.38, 0.35])):
        T = invert_pose(look_at(eye, [0.0, 0.0, 0.04]))
        depth = depth_of(fig, T, DEPTH_CAM, D435.profile, seed=i)
        depth = without_thin_features(fig, T, DEPTH_CAM, depth)
        for margin in statuses:
            tracker = Tracker(fig, DEPTH_CAM, TrackerConfig(views=400, outline_margin_px=margin))
            tracker.initialize(T)
            statuses[margin].append(tracker.update(depth).status)
    # with no margin the lost thin features read as see-through: the true start is refused
    assert "lost" in statuses[0.0]
    assert statuses[3.0] == ["tracking"] * 3, statuses


def test_colour_of_another_size_than_its_camera_is_refused():
    from sim2real.core.errors import InputError

    tracker = Tracker(BRACKET, DEPTH_CAM, TrackerConfig(views=50))
    tracker.initialize(T_TRUE)
    depth = np.zeros((DEPTH_CAM.height, DEPTH_CAM.width), np.float32)
    with pytest.raises(InputError, match="give the colour camera"):
        tracker.update(depth, np.zeros((480, 640, 3), np.uint8))  # the depth camera is 848x480
