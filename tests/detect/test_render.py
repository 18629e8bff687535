"""Randomized RGB-D samples: shading against hand computations, shadows by geometry, the mask
and the depth against independent casts, determinism per (seed, index), the switches."""

from __future__ import annotations

import numpy as np
import pytest

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.mesh_io import Mesh
from sim2real.detect.render_rgbd import SampleRenderer
from sim2real.detect.scene_config import SceneConfig
from sim2real.detect.shading import CameraLight, grid_visibility, shade, shadow_visibility
from sim2real.sensors.render import DepthRenderer, render_scene
from sim2real.sensors.scene import make_scene

CAM = CameraIntrinsics(fx=50.0, fy=50.0, cx=19.5, cy=14.5, width=40, height=30)


def _plane(z_m: float, half_m: float = 5.0) -> Mesh:
    v = np.array([[-half_m, -half_m, 0], [half_m, -half_m, 0], [half_m, half_m, 0],
                  [-half_m, half_m, 0.0]])  # fmt: skip
    T = np.eye(4)
    T[2, 3] = z_m
    return Mesh(v @ T[:3, :3].T + T[:3, 3], np.array([[0, 1, 2], [0, 2, 3]], np.int32))


def _box(centre, size) -> Mesh:
    import trimesh

    box = trimesh.creation.box(extents=size)
    return Mesh(np.asarray(box.vertices) + centre, np.asarray(box.faces, np.int32))


def test_plane_under_one_directional_light_is_lambert_by_hand():
    # a plane 1 m in front of the camera, facing it (normal (0, 0, -1) toward the camera); a
    # sun 60 deg off the normal: every pixel is albedo * (ambient + cos 60 deg * light colour)
    renderer = DepthRenderer(make_scene([_plane(0.0)], [np.eye(4) @ _shift(1.0)]), CAM)
    frame = renderer.render_ideal()
    valid = frame.depth_m > 0
    assert valid.all()
    points = (CAM.pixel_rays() * frame.depth_m[..., None])[valid]
    normals = frame.normal_cam[valid]
    toward = np.array([np.sin(np.radians(60)), 0.0, -np.cos(np.radians(60))], np.float32)
    sun = CameraLight("directional", toward, np.array([0.8, 0.6, 1.0]))
    albedo = np.full((len(points), 3), 0.4, np.float32)
    zero = np.zeros(len(points), np.float32)
    out = shade(points.T, normals.T, albedo.T, zero, zero + 10, [sun], ambient=0.1)  # planar
    expected = 0.4 * 0.1 + 0.4 * 0.5 * np.array([0.8, 0.6, 1.0])  # 0.2, 0.16, 0.24
    np.testing.assert_allclose(out.T, np.broadcast_to(expected, out.T.shape), atol=1e-6)


def _shift(z_m: float) -> np.ndarray:
    T = np.eye(4)
    T[2, 3] = z_m
    return T


def test_specular_lobe_peaks_at_the_mirror_direction():
    # point on the optical axis, normal toward the camera, light behind the camera: the half
    # vector is the normal, n.H = 1, so the lobe adds k_s * light colour whatever the exponent
    p = np.array([[0.0, 0.0, 1.0]], np.float32)
    n = np.array([[0.0, 0.0, -1.0]], np.float32)
    light = CameraLight("point", np.array([0.0, 0.0, -1.0], np.float32), np.ones(3), 2.0)
    out = shade(p.T, n.T, np.full((3, 1), 0.5, np.float32), np.array([0.3], np.float32),
                np.array([40.0], np.float32), [light], ambient=0.0).T  # fmt: skip
    # the point light is 2 m away, at its reference distance: fall-off 1; 0.5 * 1 + 0.3
    np.testing.assert_allclose(out, [[0.8, 0.8, 0.8]], atol=1e-6)
    off = CameraLight("directional", np.array([0.6, 0.0, -0.8], np.float32), np.ones(3))
    tilted = shade(p.T, n.T, np.full((3, 1), 0.5, np.float32), np.array([0.3], np.float32),
                   np.array([40.0], np.float32), [off], ambient=0.0).T  # fmt: skip
    # H = normalize(L + V) = normalize(0.6, 0, -1.8): n.H = 1.8 / sqrt(3.6); 0.5 * 0.8 + lobe
    lobe = 0.3 * (1.8 / np.sqrt(3.6)) ** 40
    np.testing.assert_allclose(tilted, [[0.4 + lobe] * 3], rtol=1e-5)


def test_a_box_shadows_the_plane_where_geometry_says():
    # plane at z = 1 m, a thin 10 cm box at z = 0.5 m on the axis, sun 45 deg toward -x: the
    # shadow ray from (x, 0, 1) meets z = 0.5 at x + 0.5, so x in [-0.55, -0.45] is dark
    scene = make_scene([_plane(0.0), _box([0, 0, 0], [0.1, 0.1, 0.01])],
                       [_shift(1.0), _shift(0.5)])  # fmt: skip
    renderer = DepthRenderer(scene, CAM)
    sun = CameraLight("directional", np.array([np.sqrt(0.5), 0, -np.sqrt(0.5)], np.float32),
                      np.ones(3))  # fmt: skip
    xs = np.array([-0.5, -0.53, 0.5, -0.6, 0.0])
    points = np.stack([xs, np.zeros(5), np.ones(5)], axis=1).astype(np.float32)
    normals = np.tile(np.array([0, 0, -1.0], np.float32), (5, 1))
    visible = shadow_visibility(renderer.test_occlusions, points.T, normals.T, [sun])[0]
    assert visible.tolist() == [False, False, True, True, True]


def test_coarse_to_fine_shadows_equal_every_sample_with_fewer_rays():
    # two square cards over a plane under a sun and a point light, 160x120: rays every 2nd
    # pixel found coarse to fine give what one ray on every 2nd pixel gives when no shadow or
    # surface is narrower than two samples (a box's side seen edge-on is: it can be missed),
    # for far fewer rays
    cam = CameraIntrinsics(fx=150.0, fy=150.0, cx=79.5, cy=59.5, width=160, height=120)
    scene = make_scene([_plane(0.0), _plane(0.0, 0.08), _plane(0.0, 0.04)],
                       [_shift(1.0), _shift(0.6), _shift(0.8) @ _shift_xy(0.15, 0.1)])  # fmt: skip
    renderer = DepthRenderer(scene, cam)
    frame = renderer.render_ideal()
    points = np.moveaxis(cam.pixel_rays(), 2, 0) * frame.depth_m
    normals = np.ascontiguousarray(np.moveaxis(frame.normal_cam, 2, 0))
    lights = [
        CameraLight("directional", np.array([0.5, 0.3, -0.81], np.float32), np.ones(3)),
        CameraLight("point", np.array([-0.3, -0.2, 0.2], np.float32), np.ones(3), 1.0),
    ]
    rays = []

    def counted(r, tfar):
        rays.append(len(r))
        return renderer.test_occlusions(r, tfar)

    valid = frame.depth_m > 0
    found = grid_visibility(counted, points, normals, valid, lights, 2)
    every = shadow_visibility(counted, points[:, ::2, ::2].reshape(3, -1),
                              normals[:, ::2, ::2].reshape(3, -1), lights)  # fmt: skip
    every = every.reshape(2, 60, 80)
    np.testing.assert_array_equal(found[:, ::2, ::2], every)
    np.testing.assert_array_equal(found, np.repeat(np.repeat(every, 2, 1), 2, 2))
    assert 0.05 < (~every).mean() < 0.5  # the cards shadow the plane
    assert sum(rays[:-1]) < 0.5 * rays[-1]


def _shift_xy(x_m: float, y_m: float) -> np.ndarray:
    T = np.eye(4)
    T[:2, 3] = x_m, y_m
    return T


FAST = SceneConfig(width_px=80, height_px=60, textures={"count": 20, "size_px": 16})
NO_CLUTTER = FAST.model_copy(update={"distractors": FAST.distractors.model_copy(
    update={"enabled": False})})  # fmt: skip


@pytest.fixture(scope="module")
def cube():
    import trimesh

    box = trimesh.creation.box(extents=(0.06, 0.04, 0.03))
    return Mesh(np.asarray(box.vertices), np.asarray(box.faces, np.int32), "cube")


def test_mask_is_the_parts_ray_hits_and_its_depth_is_the_depth_renderers(cube):
    renderer = SampleRenderer(cube, NO_CLUTTER, seed=1)
    checked = measured = 0
    for index in range(4):
        s = renderer.sample(index)
        # an independent cast: the part alone, placed by the sample's pose, in the camera
        # frame, through the sample's camera
        alone = render_scene(make_scene([cube], [s.T_cam_part]), s.camera).frame
        hits = alone.depth_m > 0
        if not hits.any():
            continue
        checked += 1
        # nothing stands between camera and part without distractors (it rests on the table)
        assert np.count_nonzero(s.mask != hits) <= 2
        both = s.mask & hits
        np.testing.assert_allclose(s.depth_ideal_m[both], alone.depth_m[both], atol=1e-5)
        assert s.visible_fraction > 0.95
        # the sensor's depth (D435 profile) stays near the truth on the part
        noisy = s.depth_m[both]
        ok = noisy > 0  # none when the camera is nearer than the sensor's minimum range
        if ok.any():
            measured += 1
            assert np.median(np.abs(noisy[ok] - alone.depth_m[both][ok])) < 0.005
        # the labelled centre projects where the part is
        u, v = np.round(s.centre_px).astype(int)
        if 0 <= u < 80 and 0 <= v < 60:
            assert s.mask_full[max(v - 1, 0) : v + 2, max(u - 1, 0) : u + 2].any()
    assert checked >= 3 and measured >= 2


def test_a_sample_depends_on_seed_and_index_only(cube):
    a = SampleRenderer(cube, FAST, seed=5)
    first = a.sample(3)
    a.sample(0)
    again = a.sample(3)
    fresh = SampleRenderer(cube, FAST, seed=5).sample(3)
    for other in (again, fresh):
        np.testing.assert_array_equal(first.rgb, other.rgb)
        np.testing.assert_array_equal(first.depth_m, other.depth_m)
        np.testing.assert_array_equal(first.T_cam_part, other.T_cam_part)
    assert not np.array_equal(first.rgb, a.sample(4).rgb)
    assert not np.array_equal(first.rgb, SampleRenderer(cube, FAST, seed=6).sample(3).rgb)
    T, cam = a.labels(3)
    np.testing.assert_array_equal(T, first.T_cam_part)
    assert cam == first.camera


def test_a_frame_without_the_part_is_the_same_frame_with_the_part_gone(cube):
    renderer = SampleRenderer(cube, NO_CLUTTER, seed=2)
    for index in range(3):
        with_part = renderer.sample(index)
        without = renderer.sample(index, part_absent=True)
        assert with_part.mask.any() and not without.mask.any() and without.visible_fraction == 0
        assert without.camera == with_part.camera  # the same draws: camera, lights, room
        # where the part and its shadows were, the table now; elsewhere the same depth
        away = ~with_part.mask_full
        same = without.depth_ideal_m[away] == with_part.depth_ideal_m[away]
        assert same.mean() > 0.99
        assert np.all(
            without.depth_ideal_m[with_part.mask] > with_part.depth_ideal_m[with_part.mask]
        )


def test_switches_turn_their_terms_off(cube):
    on = SampleRenderer(cube, FAST, seed=0)
    counts = [sum(s.role == "distractor" for s in on.draw(i)[0].surfaces) for i in range(40)]
    assert max(counts) <= 10 and min(counts) == 0 and len(set(counts)) > 3
    off = SampleRenderer(cube, NO_CLUTTER, seed=0)
    assert all(s.role != "distractor" for i in range(10) for s in off.draw(i)[0].surfaces)
    # camera jitter off: the nominal camera at one distance and height, every frame
    still = FAST.model_copy(update={"camera": FAST.camera.model_copy(update={"jitter": False})})
    fixed = SampleRenderer(cube, still, seed=0)
    draws = [fixed.draw(i)[0] for i in range(5)]
    assert all(d.camera == fixed.base_camera for d in draws)
    assert len({tuple(np.round(d.T_world_cam[:3, 3], 9)) for d in draws}) == 1
    jittered = {on.draw(i)[0].camera.fx for i in range(5)}
    assert len(jittered) == 5
    assert len(SampleRenderer(cube, FAST.model_copy(update={"textures": FAST.textures.model_copy(
        update={"count": 10})}), 0).bank) == 10  # fmt: skip


def test_distractors_occlude_the_part_at_times_not_always(cube):
    renderer = SampleRenderer(cube, FAST, seed=2)
    fractions = np.array([renderer.sample(i).visible_fraction for i in range(16)])
    assert (fractions < 0.9).sum() >= 2  # some frames occluded
    assert (fractions > 0.5).sum() >= 10  # most frames show the part


def test_dark_objects_return_no_depth_and_nothing_else_moves(cube):
    # no_return_share: the part and each distractor dark (no return) at that chance, drawn
    # apart from every other draw: the colour and the other pixels' depth do not change
    dark_cfg = FAST.model_copy(update={"depth": FAST.depth.model_copy(
        update={"no_return_share": 0.5})})  # fmt: skip
    plain, dark = SampleRenderer(cube, FAST, seed=3), SampleRenderer(cube, dark_cfg, seed=3)
    part_dark = []
    for index in range(12):
        a, b = plain.sample(index), dark.sample(index)
        assert np.array_equal(a.rgb, b.rgb) and np.array_equal(a.mask, b.mask)
        kept = b.depth_m > 0
        assert np.array_equal(a.depth_m[kept], b.depth_m[kept])  # only zeroed, never moved
        if a.mask.sum() and (a.depth_m[a.mask] > 0).any():
            part_dark.append(not (b.depth_m[a.mask] > 0).any())
        # without the part, the same distractors are dark
        pa, pb = plain.sample(index, part_absent=True), dark.sample(index, part_absent=True)
        away = ~a.mask_full
        with_part = ((a.depth_m > 0) & (b.depth_m == 0))[away]
        without = ((pa.depth_m > 0) & (pb.depth_m == 0))[away]
        assert np.mean(with_part == without) > 0.99
    assert 0 < sum(part_dark) < len(part_dark)  # dark in some frames, not in all
