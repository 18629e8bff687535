"""Reference geometry of real frames: planes, refined part poses, edges; checked against
synthetic scenes with known geometry and against what the real frames show."""

import warnings

import numpy as np
import pytest
import trimesh

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.camera_io import load_camera, load_camera_pose
from sim2real.core.errors import InputError
from sim2real.core.mesh_io import load_mesh, validate_mesh
from sim2real.core.pose import invert_pose, load_pose_file, look_at, make_pose
from sim2real.sensors.reference import (
    build_reference,
    fill_gaps_along_rows,
    find_planes,
    load_real_frame,
    refine_part_pose,
    scene_edges,
)
from sim2real.sensors.reference_frame import NO_REGION, NOISE_WINDOW_PX
from sim2real.sensors.render import DepthRenderer
from sim2real.sensors.scene import make_scene

VGA = CameraIntrinsics(fx=525, fy=525, cx=319.5, cy=239.5, width=640, height=480)
WIDE = CameraIntrinsics(fx=400, fy=400, cx=319.5, cy=239.5, width=640, height=480)


def kinect_sigma_m(z):
    """Kinect v1 axial noise (Nguyen et al. 2012): grows with z^2."""
    return 0.0012 + 0.0019 * (z - 0.4) ** 2


def noisy(depth, seed=0):
    rng = np.random.default_rng(seed)
    out = depth + rng.standard_normal(depth.shape) * kinect_sigma_m(depth)
    return np.where(depth > 0, out, 0).astype(np.float32)


def quad(half_m=20.0):
    v = np.array(
        [[-half_m, -half_m, 0], [half_m, -half_m, 0], [half_m, half_m, 0], [-half_m, half_m, 0]]
    )
    return validate_mesh(v, [[0, 1, 2], [0, 2, 3]], "quad", "quad")


def angle_deg(a, b):
    return np.degrees(
        np.arccos(np.clip(np.dot(a, b) / np.linalg.norm(a) / np.linalg.norm(b), -1, 1))
    )


# --- gaps and edges ---------------------------------------------------------------------


def test_fill_gaps_takes_the_farther_bound_and_leaves_the_border():
    d = np.array([[0, 1.0, 0, 0, 2.0, 0, 3.0, 0], [0] * 8], dtype=np.float32)
    # [0 1 _ _ 2 _ 3 0]: the runs between 1 and 2 take 2, between 2 and 3 take 3; borders stay 0
    assert fill_gaps_along_rows(d).tolist() == [[0, 1, 2, 2, 2, 3, 3, 0], [0] * 8]


def test_shadow_band_is_not_an_edge_but_the_foreground_boundary_is():
    # a row: background 2 m, a shadow band (no return), then the near part at 1 m
    row = np.array([2, 2, 2, 0, 0, 1, 1, 1], dtype=np.float32)
    edge = scene_edges(np.tile(row, (3, 1)))
    # the band takes 2 m: the only jump is between columns 4 and 5, the part's boundary
    assert edge[1].tolist() == [False] * 4 + [True, True] + [False] * 2


# --- planes ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def floor_and_wall():
    """A camera 0.5 m above a floor, pitched down 25 deg, a wall 4 m ahead: the floor spans
    0.5-3.8 m of depth, the wall 3.5-3.8 m, with Kinect-like noise growing as z^2."""
    tilt = np.radians(25)
    forward = np.array([0, np.cos(tilt), -np.sin(tilt)])
    right = np.array([1.0, 0, 0])
    T_world_cam = make_pose(
        np.stack([right, np.cross(forward, right), forward], axis=1), [0, 0, 0.5]
    )
    T_cam_world = invert_pose(T_world_cam)
    wall_in_world = make_pose(np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]]), [0, 4.0, 0])
    poses = [T_cam_world, T_cam_world @ wall_in_world]
    frame = DepthRenderer(make_scene([quad(), quad()], poses), WIDE).render_ideal()
    # true planes, facing the camera: n . x + d = 0 with d = distance of the camera
    truth = [(T_cam_world[:3, :3] @ [0, 0, 1], 0.5), (T_cam_world[:3, :3] @ [0, -1, 0], 4.0)]
    return noisy(frame.depth_m), frame.object_id, truth


def test_floor_and_wall_found_under_depth_growing_noise(floor_and_wall):
    depth, object_id, truth = floor_and_wall
    assert depth[object_id == 0].min() < 0.55 and depth[object_id == 1].max() > 3.7
    planes = find_planes(depth, WIDE)
    assert len(planes) == 2
    taken = np.zeros(depth.shape, dtype=int)
    for plane, (normal, offset), obj in zip(planes, truth, (0, 1), strict=True):
        assert angle_deg(plane.normal_cam, normal) < 1.0
        assert plane.offset_m == pytest.approx(offset, abs=0.005)
        mine = object_id == obj
        assert (plane.region & mine).sum() > 0.95 * mine.sum()  # covers its plane
        assert (plane.inliers & ~mine).sum() < 0.005 * mine.sum()  # little of the other
        taken += plane.region
    assert taken.max() == 1  # each pixel in one region at most
    # the wall's noise at ~3.7 m is sigma ~ 2 cm: its inliers' RMS says so; the floor's less
    assert planes[1].inlier_rms_m == pytest.approx(kinect_sigma_m(3.7), rel=0.25)
    assert planes[0].inlier_rms_m < planes[1].inlier_rms_m / 3


# --- parts -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def box_on_table():
    """A 10 x 8 x 6 cm box on a table, seen obliquely from 0.6 m (three faces visible)."""
    tm = trimesh.creation.box([0.10, 0.08, 0.06])
    box = validate_mesh(tm.vertices + np.array([0, 0, 0.03]), tm.faces, "box", "box")
    T = invert_pose(look_at(eye=[0.25, -0.35, 0.45], target=[0.0, 0.0, 0.03]))
    frame = DepthRenderer(make_scene([box], [T], plane=True), VGA).render_ideal()
    return box, T, noisy(frame.depth_m, seed=1), frame


def perturbed(T, shift_m, deg, axis=(0.3, 0.5, 0.8)):
    """T moved by ``shift_m`` and turned by ``deg`` about ``axis``, in the part's frame."""
    a = np.asarray(axis) / np.linalg.norm(axis)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    th = np.radians(deg)
    return T @ make_pose(np.eye(3) + np.sin(th) * K + (1 - np.cos(th)) * K @ K, shift_m)


def pose_error(T, T_true, point):
    """(metres ``point`` (part frame) is off, rotation error in degrees)."""
    p = np.append(point, 1.0)
    E = T @ invert_pose(T_true)
    return np.linalg.norm((T @ p - T_true @ p)[:3]), np.degrees(
        np.arccos(np.clip((np.trace(E[:3, :3]) - 1) / 2, -1, 1))
    )


def test_icp_recovers_a_small_pose_error(box_on_table):
    box, T_true, depth, _ = box_on_table
    fit = refine_part_pose(depth, VGA, box, perturbed(T_true, [0.003, -0.004, 0.0], 2.0))
    assert fit.report["accepted"], fit.report["reason"]
    assert fit.report["correction_deg"] == pytest.approx(2.0, abs=0.3)
    t_err, r_err = pose_error(fit.T_cam_part, T_true, [0, 0, 0.03])
    assert t_err < 0.001 and r_err < 0.3
    assert fit.report["correspondences"] > 5000 and fit.report["fitness"] > 0.9


def test_icp_converges_from_5cm_but_rejects_a_correction_beyond_the_limit(box_on_table):
    # 5 cm sideways: the box top still overlaps, so ICP slides it back to the truth; with the
    # default 2 cm limit the correction is refused and the given pose is kept
    box, T_true, depth, _ = box_on_table
    T_off = perturbed(T_true, [0.05, 0.0, 0.0], 0.0)
    fit = refine_part_pose(depth, VGA, box, T_off)
    assert not fit.report["accepted"] and "exceeds" in fit.report["reason"]
    assert np.array_equal(fit.T_cam_part, T_off)
    loose = refine_part_pose(depth, VGA, box, T_off, max_correction_m=0.1)
    assert loose.report["accepted"]
    assert pose_error(loose.T_cam_part, T_true, [0, 0, 0.03])[0] < 0.001


def test_part_outside_the_image_is_an_input_error(box_on_table):
    box, _, depth, _ = box_on_table
    behind = make_pose(np.eye(3), [0, 0, -1.0])
    with pytest.raises(InputError, match="outside the image") as err:
        refine_part_pose(depth, VGA, box, behind)
    assert err.value.field == "--pose"


def test_reference_puts_the_part_before_the_table(box_on_table):
    box, T_true, depth, frame = box_on_table
    ref = build_reference(depth, VGA, source="synthetic", parts=[(box, T_true)])
    assert [r.kind for r in ref.regions][:2] == ["part", "plane"]
    assert ref.regions[0].info["accepted"] and ref.regions[0].info["correction_m"] < 0.001
    part, true_part = ref.region_id == 0, frame.object_id == 0
    assert (part & true_part).sum() > 0.98 * (part | true_part).sum()  # IoU with the truth
    both = part & true_part
    assert np.median(np.abs(ref.ref_depth_m[both] - frame.depth_m[both])) < 5e-4
    table = ref.region_id == 1
    assert (table & (frame.object_id == 1)).sum() > 0.95 * table.sum()
    # the table's reference depth matches the render to well under its noise
    both = table & (frame.object_id == 1)
    assert np.abs(ref.ref_depth_m[both] - frame.depth_m[both]).max() < 0.002
    # interior: the whole 9x9 window in the pixel's own region
    v, u = np.argwhere(ref.interior)[::997].T
    h = NOISE_WINDOW_PX // 2
    for vi, ui in zip(v, u, strict=True):
        window = ref.region_id[vi - h : vi + h + 1, ui - h : ui + h + 1]
        assert window.shape == (NOISE_WINDOW_PX,) * 2 and (window == ref.region_id[vi, ui]).all()
    assert not ref.interior[ref.region_id == NO_REGION].any()
    # edges: the box outline; the distance is 0 on edges
    assert ref.edge[frame.edge].mean() > 0.5
    assert (ref.edge_distance_px[ref.edge] == 0).all()
    cos = np.cos(ref.incidence_rad[table])
    assert cos.min() > 0 and np.allclose(
        np.linalg.norm(ref.normal_cam[table], axis=1), 1, atol=1e-5
    )


# --- bad input ---------------------------------------------------------------------------


def test_bad_frames_are_input_errors(tmp_path):
    np.save(tmp_path / "zero.npy", np.zeros((480, 640), np.float32))
    with pytest.raises(InputError, match="no valid depth") as err:
        load_real_frame(tmp_path / "zero.npy", VGA)
    assert err.value.field == "depth"
    np.save(tmp_path / "small.npy", np.ones((240, 320), np.float32))
    with pytest.raises(InputError, match=r"320x240 px but the camera is 640x480") as err:
        load_real_frame(tmp_path / "small.npy", VGA)
    assert err.value.field == "--camera"
    with pytest.raises(InputError, match="pass --camera"):
        load_real_frame(tmp_path / "small.npy", None)
    with pytest.raises(InputError) as err:
        build_reference(np.ones((10, 10), np.float32), VGA, source="x.npy")
    assert err.value.field == "--camera"


def test_nan_and_negative_depth_are_counted_and_read_as_no_return(tmp_path):
    depth = np.full((480, 640), 1.5, np.float32)
    depth[:2, :5] = np.nan
    depth[5, :3] = -1.0
    np.save(tmp_path / "d.npy", depth)
    with pytest.warns(UserWarning, match=r"d\.npy: 10 non-finite and 3 negative"):
        out, _ = load_real_frame(tmp_path / "d.npy", VGA)
    assert (out == 0).sum() == 13 and np.isfinite(out).all()


def test_no_plane_and_no_part_is_an_input_error():
    # independent depths per pixel: no surface at all
    rng = np.random.default_rng(0)
    depth = rng.uniform(0.5, 4.0, (480, 640)).astype(np.float32)
    with pytest.raises(InputError, match="nothing to calibrate against") as err:
        build_reference(depth, VGA, source="noise.npy")
    assert err.value.field == "planes" and err.value.source == "noise.npy"


def test_point_clouds_must_be_organised_pinhole_clouds(tmp_path):
    rng = np.random.default_rng(0)
    pts = rng.uniform(0.5, 1.0, (6 * 4, 3))  # 6 x 4, but not on pinhole rays
    header = "VERSION .7\nFIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 1 1 1\n"
    body = "\n".join(" ".join(f"{c:.5f}" for c in p) for p in pts)
    (tmp_path / "c.pcd").write_text(
        header + f"WIDTH 6\nHEIGHT 4\nVIEWPOINT 0 0 0 1 0 0 0\nPOINTS 24\nDATA ascii\n{body}\n"
    )
    with pytest.raises(InputError, match="not a pinhole organised cloud"):
        load_real_frame(tmp_path / "c.pcd", None)
    (tmp_path / "u.pcd").write_text(
        header + f"WIDTH 24\nHEIGHT 1\nVIEWPOINT 0 0 0 1 0 0 0\nPOINTS 24\nDATA ascii\n{body}\n"
    )
    with pytest.raises(InputError, match="unorganised") as err:
        load_real_frame(tmp_path / "u.pcd", None)
    assert err.value.field == "HEIGHT"


def test_a_ply_frame_that_is_not_a_ply_is_one_error_and_nothing_else(tmp_path, capfd):
    (tmp_path / "junk.ply").write_text("not a ply file\n")
    with pytest.raises(InputError, match="not a PLY file"):
        load_real_frame(tmp_path / "junk.ply", VGA)
    assert capfd.readouterr() == ("", "")  # no "RPly: Wrong magic number" of Open3D's


# --- real frames -------------------------------------------------------------------------


def test_pcl_grabber_frame_floor_wall_and_box_top(real_data):
    folder = real_data / "depth-pcl" / "grabber"
    depth, camera = load_real_frame(
        folder / "frame_0_depth.tiff", load_camera(folder / "frame_0_camera.xml")
    )
    assert depth.shape == (480, 640)
    ref = build_reference(depth, camera, source="frame_0")
    planes = [r for r in ref.regions if r.kind == "plane"]
    assert len(planes) >= 2
    # the floor fills most of the view (about 70 % of the valid pixels), facing up: -y
    floor = np.array(planes[0].info["normal_cam"])
    assert planes[0].info["inliers"] > 0.6 * (depth > 0).sum()
    assert floor[1] < -0.6
    # the wall (top right) stands at right angles to the floor; a box top lies parallel to it
    angles = [angle_deg(floor, p.info["normal_cam"]) for p in planes[1:]]
    assert min(abs(a - 90) for a in angles) < 2.0
    assert min(angles) < 2.0


def test_open3d_frame_yields_the_wall(real_data):
    folder = real_data / "depth-open3d"
    depth, camera = load_real_frame(
        folder / "depth.png", load_camera(folder / "camera_primesense.json")
    )
    ref = build_reference(depth, camera, source="depth.png")
    wall = ref.regions[0]
    assert wall.kind == "plane" and wall.info["inliers"] > 0.35 * (depth > 0).sum()
    n = np.array(wall.info["normal_cam"])
    assert abs(n[1]) < 0.1  # a vertical wall seen by a level camera
    assert np.argwhere(ref.region_id == 0)[:, 1].mean() < 200  # left of the person
    assert 1.4 < wall.info["offset_m"] < 1.7
    assert wall.info["inlier_rms_m"] < 0.01


def test_m3t_triangle_on_its_table(real_data):
    folder = real_data / "depth-m3t"
    camera = load_camera(folder / "depth_camera.yaml")
    T = (
        invert_pose(load_camera_pose(folder / "depth_camera.yaml"))
        @ load_pose_file(folder / "triangle_pose_optimizer_test.txt")
        @ load_pose_file(folder / "triangle.yaml")
    )
    mesh = load_mesh(folder / "triangle.obj", "m")
    depth, camera = load_real_frame(folder / "depth_camera_image_200.png", camera)
    ref = build_reference(depth, camera, source="m3t", parts=[(mesh, T)])
    part = ref.regions[0]
    assert part.kind == "part" and part.pixels > 300
    assert part.info["occluded_pixels"] > 50  # the bottle in front of it is left out
    report = part.info
    # the dark triangle returns little depth: ICP is refused, or moves it a few mm at most
    if report["accepted"]:
        assert report["correction_m"] < 0.005 and report["correction_deg"] < 3
    else:
        assert np.array_equal(np.array(report["T_cam_part"]), T)
    table = ref.regions[1]
    assert table.kind == "plane" and table.pixels > 50_000
    # independent check: M3T's pose puts the triangle's base (z = 0 face) on our table plane
    n, d = np.array(table.info["normal_cam"]), table.info["offset_m"]
    base = mesh.transformed(T)[mesh.vertices[:, 2] < 1e-6]
    height = base @ n + d
    assert np.abs(height).max() < 0.01 and np.ptp(height) < 0.003


def test_organised_stereo_cloud_becomes_a_depth_image(real_data):
    path = real_data / "depth-pcl" / "table_scene_mug_stereo_textured.pcd"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        depth, camera = load_real_frame(path, None)
    assert depth.shape == (480, 640) and (camera.width, camera.height) == (640, 480)
    assert camera.fx == pytest.approx(964.36, abs=0.05)
    assert camera.fy == pytest.approx(964.36, abs=0.05)
    assert (camera.cx, camera.cy) == pytest.approx((319.81, 223.36), abs=0.05)
    assert (depth > 0).sum() == 209_280  # the finite points of the cloud
    assert depth[depth > 0].min() > 0.6 and depth.max() < 2.7
    with pytest.raises(InputError, match="640x480 px but the camera is 320x240"):
        load_real_frame(path, VGA.scaled(0.5))
