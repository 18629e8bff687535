"""The tracker on frames rendered from known poses: accuracy, occlusion, honesty of its status."""

import numpy as np
import pytest
import trimesh

from sim2real.core.errors import InputError
from sim2real.core.mesh_io import validate_mesh
from sim2real.core.pose import invert_pose, look_at, make_pose, rpy_deg_to_matrix
from sim2real.models.part import PreparedModel
from sim2real.sensors.demo_part import machined_bracket
from sim2real.sensors.presets import get_preset
from sim2real.sensors.render import DepthRenderer
from sim2real.sensors.scene import make_scene
from sim2real.tracking.tracker import Tracker, TrackerConfig

D435 = get_preset("realsense-d435")
CAMERA = D435.camera
BRACKET = machined_bracket()
T_TRUE = invert_pose(look_at([0.15, -0.25, 0.45], [0.0, 0.0, 0.02]))


def frame(meshes_poses, seed=0, plane=True):
    meshes, poses = zip(*meshes_poses, strict=True)
    scene = make_scene(list(meshes), list(poses), plane=plane)
    return DepthRenderer(scene, CAMERA).render(D435.profile, seed=seed).depth_m


def errors(T, T_ref):
    dt = 1e3 * np.linalg.norm(T[:3, 3] - T_ref[:3, 3])
    cos = (np.trace(T[:3, :3].T @ T_ref[:3, :3]) - 1) / 2
    return dt, np.degrees(np.arccos(np.clip(cos, -1, 1)))


@pytest.fixture(scope="module")
def tracker():
    return Tracker(BRACKET, CAMERA, TrackerConfig(views=300))


def test_converges_from_perturbed_starts(tracker):
    depth = frame([(BRACKET, T_TRUE)])
    rng = np.random.default_rng(0)
    for _ in range(5):
        tracker.initialize(
            T_TRUE @ make_pose(rpy_deg_to_matrix(*rng.normal(0, 3, 3)), rng.normal(0, 0.005, 3))
        )
        r = tracker.update(depth)
        dt, dr = errors(r.T_cam_part, T_TRUE)
        assert r.status == "tracking" and dt < 1.0 and dr < 1.0, (dt, dr)


def test_an_occluder_in_front_does_not_pull_the_pose(tracker):
    # a box hanging 10 cm in front of the part hides about half of it
    box = validate_mesh(
        trimesh.creation.box((0.06, 0.2, 0.02)).vertices,
        trimesh.creation.box((0.06, 0.2, 0.02)).faces,
        "box",
    )
    T_box = T_TRUE @ make_pose(np.eye(3), [0.03, 0.0, 0.0])
    T_box[:3, 3] -= 0.1 * T_TRUE[:3, 3] / np.linalg.norm(T_TRUE[:3, 3])
    depth = frame([(BRACKET, T_TRUE), (box, T_box)])
    tracker.initialize(T_TRUE @ make_pose(rpy_deg_to_matrix(2, -2, 1), [0.003, -0.002, 0.002]))
    r = tracker.update(depth)
    dt, dr = errors(r.T_cam_part, T_TRUE)
    assert r.details["inliers"] < 0.8 * r.details["visible"]  # the occluder did hide part of it
    assert dt < 1.5 and dr < 1.5, (dt, dr)


def test_reports_lost_when_the_part_is_gone_and_never_a_wrong_pose(tracker):
    tracker.initialize(T_TRUE)
    assert tracker.update(frame([(BRACKET, T_TRUE)])).status == "tracking"
    empty_table = frame(
        [(BRACKET, make_pose(np.eye(3), [0, 0, -3]))], plane=False
    )  # nothing in view
    statuses = [tracker.update(empty_table).status for _ in range(3)]
    assert statuses[0] == "lost"  # at once: the part's place is seen through
    assert statuses == ["lost"] * 3
    r = tracker.update(np.zeros((CAMERA.height, CAMERA.width), np.float32))  # all invalid: no crash
    assert r.status == "lost"


def test_finds_the_part_again_elsewhere(tracker):
    tracker.initialize(T_TRUE)
    tracker.update(frame([(BRACKET, T_TRUE)]))
    tracker.update(np.zeros((CAMERA.height, CAMERA.width), np.float32))
    moved = T_TRUE @ make_pose(rpy_deg_to_matrix(0, 0, 40), [0.06, 0.03, 0.0])
    depth = frame([(BRACKET, moved)], seed=3)
    results = [tracker.update(depth) for _ in range(10)]  # RANSAC draws differ: allow a few
    good = [r for r in results if r.status != "lost"]
    assert good, [r.status for r in results]
    for r in good:  # whatever it reports as found must be right
        dt, dr = errors(r.T_cam_part, moved)
        assert dt < 3 and dr < 3, (r.status, dt, dr)


def test_bad_inputs(tracker):
    with pytest.raises(InputError, match="behind the camera"):
        tracker.initialize(make_pose(np.eye(3), [0, 0, -0.5]))
    tracker.initialize(T_TRUE)
    with pytest.raises(InputError, match="depth"):
        tracker.update(np.zeros((10, 10), np.float32))


def m3t_frame(real_data):
    """The M3T frame's depth camera, M3T's one-step pose of the triangle (T_depth_part), the
    depth image and the triangle's mesh."""
    from sim2real.core.camera_io import load_camera, load_camera_pose
    from sim2real.core.depth_io import read_depth
    from sim2real.core.mesh_io import load_mesh
    from sim2real.core.pose import load_pose_file

    d = real_data / "depth-m3t"
    T_ref = (
        invert_pose(load_camera_pose(d / "depth_camera.yaml"))
        @ load_pose_file(d / "triangle_pose_optimizer_test.txt")
        @ load_pose_file(d / "triangle.yaml")
    )
    depth = read_depth(d / "depth_camera_image_200.png", depth_scale=0.001)
    return load_camera(d / "depth_camera.yaml"), T_ref, depth, load_mesh(d / "triangle.obj", "m")


def starts_off(T_ref, count, seed=1):
    """``count`` poses 1 cm and 10 deg (random axes) off ``T_ref``, in the part's frame."""
    from scipy.spatial.transform import Rotation

    rng = np.random.default_rng(seed)
    for _ in range(count):
        axis, shift = rng.normal(size=3), rng.normal(size=3)
        R = Rotation.from_rotvec(axis / np.linalg.norm(axis) * np.radians(10)).as_matrix()
        yield T_ref @ make_pose(R, 0.01 * shift / np.linalg.norm(shift))


@pytest.mark.slow
def test_real_m3t_frame_never_tracks_a_wrong_pose(real_data):
    """The M3T triangle returns depth on few of its pixels: from starts 1 cm / 10 deg off M3T's
    pose, the tracker may fail to converge, but whatever it reports as tracking must be close."""
    camera, T_ref, depth, mesh = m3t_frame(real_data)
    # also with the part's surface returns tuned on this very frame: it then expects few
    # returns, which must not let a patch of them confirm a pose
    from sim2real.models.tune_returns import tune_surface_returns

    tuned = tune_surface_returns(mesh, [depth], camera, [T_ref]).returns
    for returns in (None, tuned):
        tracker = Tracker(PreparedModel(mesh, returns=returns), camera, TrackerConfig(views=200))
        for start in starts_off(T_ref, 8):
            tracker.initialize(start)
            for _ in range(3):
                r = tracker.update(depth)
                if r.status == "tracking":
                    dt, dr = errors(r.T_cam_part, T_ref)
                    assert dt < 6 and dr < 4, (returns is not None, dt, dr)


@pytest.mark.slow
def test_real_m3t_thin_part_is_not_refound_on_a_flat_face_beside_dark_things(real_data):
    """Depth alone cannot see the dark triangle, so its starts are lost and the part is searched
    for: the brush beside it has a flat wooden side whose borders are mostly dark bristles and
    the triangle (no returns). Counting that missing data as the part's outline once let the
    thin prism be re-found there (11-12 cm, 144-167 deg off) and reported tracking."""
    from scipy.spatial.transform import Rotation

    camera, T_ref, depth, mesh = m3t_frame(real_data)
    ray = T_ref[:3, 3] / np.linalg.norm(T_ref[:3, 3])
    across = np.linalg.svd(ray[None])[2][1:]
    for turn_deg, angle in ((-10, 6.09), (-10, 0.67)):
        tracker = Tracker(mesh, camera, TrackerConfig(views=1000))
        # 10 deg about the line of sight through the part, 1 cm across it
        R = Rotation.from_rotvec(ray * np.radians(turn_deg)).as_matrix()
        c = T_ref[:3, 3]
        shift = 0.01 * (np.cos(angle) * across[0] + np.sin(angle) * across[1])
        tracker.initialize(make_pose(R, c - R @ c + shift) @ T_ref)
        for _ in range(3):
            r = tracker.update(depth)
            if r.status in ("tracking", "recovered"):
                dt, dr = errors(r.T_cam_part, T_ref)
                assert dt < 6 and dr < 4, (turn_deg, angle, dt, dr)


@pytest.mark.slow
def test_real_m3t_frame_with_colour_never_tracks_a_pose_the_evidence_leaves_loose(real_data):
    """With colour, the triangle's outline is half hidden (bottle, brush) and its face returns no
    depth: tilt and distance trade along a valley both modalities agree with. From 1 cm / 10 deg
    starts colour once vouched for poses 19 mm / 8 deg (median) from M3T's; the pose's spread
    under the fused step's information now says it is not pinned, and it is not tracking."""

    from sim2real.core.camera_io import load_camera, load_camera_pose
    from sim2real.core.image_io import read_rgb

    camera, T_ref, depth, mesh = m3t_frame(real_data)
    d = real_data / "depth-m3t"
    T_color_depth = invert_pose(load_camera_pose(d / "color_camera.yaml")) @ load_camera_pose(
        d / "depth_camera.yaml"
    )
    color = read_rgb(d / "color_camera_image_200.png")
    for start in starts_off(T_ref, 4):
        tracker = Tracker(
            mesh,
            camera,
            TrackerConfig(views=1000),
            load_camera(d / "color_camera.yaml"),
            T_color_depth,
        )
        tracker.initialize(start)
        for _ in range(2):
            r = tracker.update(depth, color)
            if r.status in ("tracking", "recovered"):
                dt, dr = errors(r.T_cam_part, T_ref)
                assert dt < 6 and dr < 4, (dt, dr, r.details["pose_spread"])


def test_a_frame_of_another_size_mid_sequence_is_lost_not_tracked(tmp_path):
    from PIL import Image

    from sim2real.tracking.run import track_sequence
    from sim2real.tracking.sequence import load_sequence
    from sim2real.tracking.sequence_write import write_bop_sequence

    depth = frame([(BRACKET, T_TRUE)])
    write_bop_sequence(tmp_path / "seq", CAMERA, [depth] * 3, [T_TRUE] * 3)
    Image.fromarray(np.zeros((120, 160), np.uint16)).save(tmp_path / "seq" / "depth" / "000001.png")
    sequence = load_sequence(tmp_path / "seq")
    with pytest.warns(UserWarning, match="reported lost"):
        run = track_sequence(BRACKET, sequence, T_TRUE, TrackerConfig(views=300))
    # the odd frame is lost (never tracked); the next good frame must be earned back
    assert [r.status for r in run.records] == ["tracking", "lost", "recovered"]
