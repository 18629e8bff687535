"""Rendering checked against geometry computed by hand and against an independent ray cast."""

import numpy as np
import pytest
import trimesh

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.mesh_io import load_mesh, validate_mesh
from sim2real.core.pose import make_pose, rpy_deg_to_matrix
from sim2real.sensors.render import DepthRenderer, depth_edges, render_scene, shadow_candidates
from sim2real.sensors.scene import make_scene

VGA = CameraIntrinsics(fx=500, fy=500, cx=320, cy=240, width=640, height=480)
FACING_CAMERA = rpy_deg_to_matrix(
    180, 0, 0
)  # part z axis toward the camera (table seen from above)


def mesh_of(tm: trimesh.Trimesh, name="mesh"):
    return validate_mesh(tm.vertices, tm.faces, name, name)


def wall(distance_m: float, half_size_m: float = 5.0, x_min_m: float | None = None):
    x0 = -half_size_m if x_min_m is None else x_min_m
    v = np.array(
        [
            [x0, -half_size_m, 0],
            [half_size_m, -half_size_m, 0],
            [half_size_m, half_size_m, 0],
            [x0, half_size_m, 0],
        ]
    )
    return mesh_of(trimesh.Trimesh(v, [[0, 1, 2], [0, 2, 3]], process=False), "wall"), make_pose(
        np.eye(3), [0, 0, distance_m]
    )


def test_plane_at_known_distance_renders_exactly():
    # a plane 0.8 m in front of the camera, facing it: every pixel sees z = 0.8 (float32)
    mesh, pose = wall(0.8)
    result = render_scene(make_scene([mesh], [pose]), VGA)
    assert np.allclose(result.depth_m, 0.8, atol=1e-6)
    # head-on: incidence 0 at the optical axis, and atan(r / f) off it (rays hit a fronto-parallel plane)
    assert result.frame.incidence_rad[240, 320] == pytest.approx(0.0, abs=1e-3)
    assert result.frame.incidence_rad[240, 0] == pytest.approx(np.arctan(320 / 500), abs=1e-4)
    assert np.allclose(result.frame.normal_cam[240, 320], [0, 0, -1], atol=1e-6)


def test_pixel_centres_follow_the_opencv_convention():
    # plane covering x >= 0 at z = 1: pixel u sees x = (u - 320) / 500, so columns >= 320 hit
    # (Open3D's create_rays_pinhole would cast through u + 0.5 and put the edge one column left)
    mesh, pose = wall(1.0, x_min_m=0.0005)
    depth = render_scene(make_scene([mesh], [pose]), VGA).depth_m
    row = depth[240] > 0
    assert not row[320] and row[321] and not row[:321].any()


def test_sphere_depth_at_image_centre():
    # UV sphere of radius 0.1 m centred 1.0 m ahead, a pole facing the camera: the central
    # ray hits the pole vertex at z = 1.0 - 0.1 = 0.9
    sphere = mesh_of(trimesh.creation.uv_sphere(radius=0.1, count=[64, 64]), "sphere")
    depth = render_scene(make_scene([sphere], [make_pose(np.eye(3), [0, 0, 1.0])]), VGA).depth_m
    assert depth[240, 320] == pytest.approx(0.9, abs=1e-6)
    # silhouette: the sphere's outline subtends asin(0.1) from the camera; its radius in pixels
    # is f * tan(asin(0.1)) = 50.25 px, minus the tessellation's inward bias
    cols = np.nonzero(depth[240] > 0)[0]
    assert 49 <= (cols.max() - cols.min() + 1) / 2 <= 50.5


def box_on_table(distance_m=0.8, size_m=0.1):
    box = mesh_of(trimesh.creation.box((size_m,) * 3), "box")
    return make_scene([box], [make_pose(FACING_CAMERA, [0, 0, distance_m])], plane=True)


@pytest.mark.parametrize("baseline_m", [0.075, -0.075])
def test_box_on_plane_casts_an_emitter_shadow_on_the_far_side(baseline_m):
    # box front face at z = 0.75, table at 0.85, box edges at x = +-0.05. The band the emitter
    # cannot light is f B (1/0.75 - 1/0.85) = 500 * 0.075 * 0.157 = 5.9 px wide, on the side
    # away from the emitter: left of the box for an emitter at +x, right for one at -x.
    frame = DepthRenderer(box_on_table(), VGA).render_ideal(baseline_m=baseline_m)
    cols = np.nonzero(frame.shadow[240])[0]
    left_edge, right_edge = 320 - 500 * 0.05 / 0.75, 320 + 500 * 0.05 / 0.75  # 286.7, 353.3
    assert 5 <= cols.size <= 7
    if baseline_m > 0:
        assert cols.max() < left_edge and cols.min() > left_edge - 8
    else:
        assert cols.min() > right_edge and cols.max() < right_edge + 8
    assert np.all(frame.depth_m[frame.shadow] == 0)


def test_no_shadow_without_baseline():
    frame = DepthRenderer(box_on_table(), VGA).render_ideal(baseline_m=0.0)
    assert not frame.shadow.any()
    assert (frame.depth_m > 0).all()


def test_shadow_prefilter_matches_the_exhaustive_query():
    # cluttered scene of boxes at several depths: the fast path (image-space pre-filter, then
    # occlusion rays) must find exactly what occlusion rays from every pixel find
    rng = np.random.default_rng(3)
    meshes, poses = [], []
    for _ in range(6):
        meshes.append(mesh_of(trimesh.creation.box(rng.uniform(0.03, 0.12, 3)), "box"))
        R = rpy_deg_to_matrix(*rng.uniform(-40, 40, 3))
        poses.append(
            make_pose(R, [rng.uniform(-0.25, 0.25), rng.uniform(-0.2, 0.2), rng.uniform(0.6, 1.1)])
        )
    plane_mesh, plane_pose = wall(1.3)
    renderer = DepthRenderer(make_scene([*meshes, plane_mesh], [*poses, plane_pose]), VGA)
    fast = renderer.render_ideal(baseline_m=0.05)
    exhaustive = renderer.render_ideal(baseline_m=0.05, shadow_prefilter=False)
    assert fast.shadow.sum() > 500  # the scene does cast shadows
    assert np.array_equal(fast.shadow, exhaustive.shadow)


def test_an_occluder_beyond_the_image_border_shadows_the_border_band_exactly():
    """A box close to the camera and wholly outside the image on the emitter's side (+x) hides
    part of the wall from the emitter inside the image (wall columns 612-639: the segments to
    the emitter pass x 0.33-0.53 at the box's depth); the pre-filter, which sees only what is in
    the image, checks the band fx B / z_min wide at that border by exact rays."""
    box = mesh_of(trimesh.creation.box((0.2, 0.2, 0.05)), "box")
    box_pose = make_pose(np.eye(3), [0.43, 0.0, 0.5])  # x 0.33-0.53 at z 0.475: columns >= 667
    wall_mesh, wall_pose = wall(1.0)
    renderer = DepthRenderer(make_scene([box, wall_mesh], [box_pose, wall_pose]), VGA)
    assert renderer._exact_band_px(0.075) == pytest.approx(500 * 0.075 / 0.475)
    fast = renderer.render_ideal(baseline_m=0.075)
    exhaustive = renderer.render_ideal(baseline_m=0.075, shadow_prefilter=False)
    assert exhaustive.shadow[:, 600:].sum() > 1000 and not exhaustive.shadow[:, :600].any()
    assert np.array_equal(fast.shadow, exhaustive.shadow)


def test_a_room_around_the_camera_does_not_switch_the_prefilter_off():
    """The inner walls of a box room that holds the camera cannot hide anything from an
    emitter inside it: marked ``encloses_camera``, they leave the pre-filter on (band 0), and
    the shadows equal the exhaustive query's."""
    from sim2real.sensors.scene import Scene, SceneObject

    room = trimesh.creation.box((3.0, 3.0, 3.0))
    room.invert()  # faces inward
    inside = SceneObject(
        mesh_of(room, "room"), make_pose(np.eye(3), [0, 0, 1.0]), encloses_camera=True
    )
    box = SceneObject(
        mesh_of(trimesh.creation.box((0.1, 0.1, 0.1)), "box"), make_pose(np.eye(3), [0, 0, 0.8])
    )
    renderer = DepthRenderer(Scene([box, inside]), VGA)
    assert renderer._exact_band_px(0.05) == 0.0
    fast = renderer.render_ideal(baseline_m=0.05)
    exhaustive = renderer.render_ideal(baseline_m=0.05, shadow_prefilter=False)
    assert fast.shadow.sum() > 100
    assert np.array_equal(fast.shadow, exhaustive.shadow)
    plain = DepthRenderer(Scene([box, SceneObject(inside.mesh, inside.T_cam_obj)]), VGA)
    assert plain._exact_band_px(0.05) is None  # unmarked, the walls behind the camera forbid it


def test_shadow_candidates_are_empty_on_a_flat_wall():
    depth = np.full((10, 50), 1.0, np.float32)
    assert not shadow_candidates(depth, 500.0, 0.05).any()


def test_depth_edges_mark_both_sides_of_a_jump():
    depth = np.full((4, 6), 1.0, np.float32)
    depth[:, 3:] = 1.5
    edge = depth_edges(depth)
    assert edge[:, 2:4].all() and not edge[:, :2].any() and not edge[:, 4:].any()


def test_object_ids_follow_scene_order():
    scene = box_on_table()
    frame = DepthRenderer(scene, VGA).render_ideal()
    assert frame.object_id[240, 320] == 0  # the box
    assert frame.object_id[10, 10] == 1  # the table, after the meshes


def moller_trumbore_depth(
    origins_dirs: np.ndarray, vertices: np.ndarray, faces: np.ndarray
) -> np.ndarray:
    """Independent float64 ray cast: nearest hit along each ray (origin 0), as depth z; 0 = none."""
    tri = vertices[faces]
    v0, e1, e2 = tri[:, 0], tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]
    out = np.zeros(len(origins_dirs))
    for start in range(0, len(origins_dirs), 64):
        d = origins_dirs[start : start + 64, None, :]
        p = np.cross(d, e2[None])
        det = np.einsum("rtc,tc->rt", p, e1)
        with np.errstate(divide="ignore", invalid="ignore"):
            inv = 1.0 / det
            s = -v0[None]
            u = np.einsum("rtc,rtc->rt", np.broadcast_to(s, p.shape), p) * inv
            q = np.cross(np.broadcast_to(s, p.shape), e1[None])
            v = np.einsum("rtc,rtc->rt", np.broadcast_to(d, q.shape), q) * inv
            t = np.einsum("tc,rtc->rt", e2, q) * inv
        hit = (np.abs(det) > 1e-15) & (u >= 0) & (v >= 0) & (u + v <= 1) & (t > 0)
        t = np.where(hit, t, np.inf).min(axis=1)
        out[start : start + 64] = np.where(np.isfinite(t), t * d[:, 0, 2], 0)
    return out


@pytest.mark.slow
def test_schauma_matches_an_independent_ray_cast(real_data):
    # Done-when check of the depth-simulation issue: an ideal render of M3T's schauma.obj with
    # M3T's depth camera agrees with an independent float64 ray cast within 0.1 mm
    from sim2real.core.camera_io import load_camera

    folder = real_data / "depth-m3t"
    camera = load_camera(folder / "depth_camera.yaml")
    mesh = load_mesh(folder / "schauma.obj", "m")
    T = make_pose(rpy_deg_to_matrix(110, 15, 30), [0.02, -0.01, 0.45]) @ make_pose(
        np.eye(3), -mesh.vertices.mean(axis=0)
    )
    depth = render_scene(make_scene([mesh], [T]), camera).depth_m
    assert (depth > 0).sum() > 5000
    rng = np.random.default_rng(0)
    v, u = np.nonzero(depth >= 0)  # sample the whole image, silhouettes included
    pick = rng.choice(len(v), 1500, replace=False)
    part_v, part_u = np.nonzero(depth > 0)
    pick_part = rng.choice(len(part_v), 1500, replace=False)
    vv = np.concatenate([v[pick], part_v[pick_part]])
    uu = np.concatenate([u[pick], part_u[pick_part]])
    directions = np.stack(
        [(uu - camera.cx) / camera.fx, (vv - camera.cy) / camera.fy, np.ones(len(uu))], axis=1
    )
    reference = moller_trumbore_depth(directions, mesh.transformed(T), mesh.faces)
    ours = depth[vv, uu]
    both = (ours > 0) & (reference > 0)
    assert both.sum() > 1400
    assert np.abs(ours[both] - reference[both]).max() < 1e-4
    # and they agree on which pixels see the part, except possibly at exact triangle edges
    assert ((ours > 0) != (reference > 0)).sum() <= 2
