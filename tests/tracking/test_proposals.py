"""Pose proposals for a tracker without a pose (``tracking.proposals``): a proposal near the
truth is found at once, wrong proposals never make a wrong ``tracking`` (the tracker's own
search takes over), and the coarse orientations put the part's centre where the proposal says."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from sim2real.core.pose import invert_pose, look_at, make_pose, poses_at, rpy_deg_to_matrix
from sim2real.sensors.demo_part import machined_bracket
from sim2real.sensors.presets import get_preset
from sim2real.sensors.render import DepthRenderer
from sim2real.sensors.scene import make_scene
from sim2real.tracking.proposals import (
    coarse_rotations,
    cube_rotations,
    proposal_centres,
)
from sim2real.tracking.relocalize import NEAR_DIAMETERS, LostSearch
from sim2real.tracking.tracker import Tracker, TrackerConfig

D435 = get_preset("realsense-d435")
CAMERA = D435.camera
BRACKET = machined_bracket()
T_TRUE = invert_pose(look_at([0.15, -0.25, 0.45], [0.0, 0.0, 0.02]))


@pytest.fixture(scope="module")
def depth():
    scene = make_scene([BRACKET], [T_TRUE], plane=True)
    return DepthRenderer(scene, CAMERA).render(D435.profile, seed=0).depth_m


def errors(T, T_ref):
    dt = 1e3 * np.linalg.norm(T[:3, 3] - T_ref[:3, 3])
    cos = (np.trace(T[:3, :3].T @ T_ref[:3, :3]) - 1) / 2
    return dt, np.degrees(np.arccos(np.clip(cos, -1, 1)))


def test_cube_rotations_are_24_distinct_rotations():
    R = cube_rotations()
    assert R.shape == (24, 3, 3)
    assert np.allclose(np.einsum("nij,nkj->nik", R, R), np.eye(3), atol=1e-12)
    assert np.allclose(np.linalg.det(R), 1.0)
    assert len({tuple(np.round(r, 6).ravel()) for r in R}) == 24


def test_coarse_rotations_cover_every_orientation_within_the_icp_reach():
    R = coarse_rotations()
    assert R.shape == (168, 3, 3) and np.allclose(np.linalg.det(R), 1.0)
    samples = Rotation.random(2000, random_state=0).as_matrix()

    def worst_deg(cover):  # angle to the nearest rotation of the cover, from tr(R_s^T R_c)
        traces = np.einsum("sij,cij->sc", samples, cover).max(axis=1)
        return np.degrees(np.arccos(np.clip((traces - 1) / 2, -1, 1))).max()

    assert worst_deg(R) < 50  # 47.5 deg over these samples
    assert worst_deg(cube_rotations()) > 55  # the group alone leaves up to 62 deg


def test_poses_at_put_the_part_centre_at_the_position():
    centre, position = np.array([0.01, -0.02, 0.03]), np.array([0.1, 0.2, 0.6])
    rotations = Rotation.random(5, random_state=1).as_matrix()
    for R, T in zip(rotations, poses_at(position, centre, rotations), strict=True):
        assert np.allclose(T[:3, :3], R)
        assert np.allclose(T[:3, :3] @ centre + T[:3, 3], position)


def test_a_proposal_near_the_truth_is_tracked_from_the_first_frame(depth):
    tracker = Tracker(BRACKET, CAMERA, TrackerConfig(views=300))
    near = T_TRUE @ make_pose(rpy_deg_to_matrix(4, -3, 5), [0.004, -0.003, 0.002])
    calls = []
    tracker.proposer = lambda d, c: calls.append(d.shape) or [near]
    tracker.initialize(None)
    r = tracker.update(depth)
    dt, dr = errors(r.T_cam_part, T_TRUE)
    assert calls == [depth.shape]
    assert r.status == "recovered" and dt < 1.5 and dr < 1.5, (r.status, dt, dr)
    assert tracker.update(depth).status == "tracking"
    assert len(calls) == 1  # a held track asks for no proposals


def test_wrong_proposals_never_make_a_wrong_track(depth):
    """Poses a wrong detection might give (the part upside down a few centimetres off, behind
    the camera, far away): over several frames, no status that vouches for a pose
    (``tracking``, ``recovered``) comes with a wrong one. Whether the tracker's own RANSAC search
    finds the part on a given frame is a matter of its draws (about 1 frame in 5 here, with
    Open3D 0.19 and 0.20 alike), so this asserts the safety, not a recovery."""
    wrong = [
        T_TRUE @ make_pose(rpy_deg_to_matrix(180, 0, 0), [0.03, 0.0, 0.0]),
        make_pose(np.eye(3), [0.0, 0.0, -0.5]),
        make_pose(np.eye(3), [0.3, 0.3, 2.0]),
    ]
    tracker = Tracker(BRACKET, CAMERA, TrackerConfig(views=300))
    tracker.proposer = lambda d, c: wrong
    tracker.initialize(None)
    for _ in range(3):
        r = tracker.update(depth)
        if r.status in ("tracking", "recovered"):
            assert max(errors(r.T_cam_part, T_TRUE)) < 1.5, (r.status, errors(r.T_cam_part, T_TRUE))
        else:
            assert r.status == "lost"


def test_proposal_centres_gives_one_point_per_place():
    centre = BRACKET.centre_m
    here, there = np.array([0.02, -0.01, 0.5]), np.array([0.2, 0.1, 0.7])
    poses = poses_at(here, centre, coarse_rotations()) + poses_at(there, centre, cube_rotations())
    places = proposal_centres(poses, BRACKET)
    assert places.shape == (2, 3)
    assert np.allclose(places, [here, there])
    assert proposal_centres([], BRACKET).shape == (0, 3)


def test_after_failed_proposals_the_search_looks_only_near_them(depth, monkeypatch):
    """A finder has looked at the whole frame: when its proposals fail the bars, the tracker's
    own search runs only near where they put the part, and not at all without a proposal."""
    frame_points = CAMERA.backproject(depth)
    to_part = np.linalg.norm(frame_points - T_TRUE[:3, 3], axis=1)
    table = frame_points[np.argmin(np.abs(to_part - 0.4))]  # a point of the table 40 cm away
    elsewhere = make_pose(np.eye(3), table - BRACKET.centre_m)
    seen = []
    original = LostSearch.find

    def spy(self, depth, last_T, lost_frames, align, align_nearest, around=None, noise_m=None):
        regions = list(self.regions(depth, last_T, lost_frames, around))
        seen.append((around, regions, self.views.diameter_m))
        return original(self, depth, last_T, lost_frames, align, align_nearest, around, noise_m)

    monkeypatch.setattr(LostSearch, "find", spy)
    tracker = Tracker(BRACKET, CAMERA, TrackerConfig(views=300))
    tracker.proposer = lambda d, c: [elsewhere]
    tracker.initialize(None)
    tracker.update(depth)
    ((around, regions, diameter),) = seen
    assert np.allclose(around, proposal_centres([elsewhere], BRACKET))
    ((points, _),) = regions
    gaps = np.linalg.norm(points - around[0], axis=1)
    frame_gaps = np.linalg.norm(frame_points - around[0], axis=1)
    assert len(points) == np.count_nonzero(frame_gaps < NEAR_DIAMETERS * diameter) > 100
    assert gaps.max() < NEAR_DIAMETERS * diameter
    # the part itself is out of that region: this search cannot re-find it
    assert np.linalg.norm(T_TRUE[:3, 3] - around[0]) > NEAR_DIAMETERS * diameter + 0.05

    seen.clear()
    tracker = Tracker(BRACKET, CAMERA, TrackerConfig(views=300))
    tracker.proposer = lambda d, c: []
    tracker.initialize(None)
    assert tracker.update(depth).status == "lost"
    assert seen == []  # nothing proposed: nothing searched


def test_a_right_proposal_among_wrong_ones_is_found(depth):
    """The wrong proposals above beside one near the truth, listed last: the tracker takes the
    right one on the first frame, whatever its search draws."""
    near = T_TRUE @ make_pose(rpy_deg_to_matrix(-5, 4, 3), [-0.004, 0.003, 0.003])
    wrong = [
        T_TRUE @ make_pose(rpy_deg_to_matrix(180, 0, 0), [0.03, 0.0, 0.0]),
        make_pose(np.eye(3), [0.0, 0.0, -0.5]),
        make_pose(np.eye(3), [0.3, 0.3, 2.0]),
    ]
    tracker = Tracker(BRACKET, CAMERA, TrackerConfig(views=300))
    tracker.proposer = lambda d, c: [*wrong, near]
    tracker.initialize(None)
    r = tracker.update(depth)
    assert r.status == "recovered" and max(errors(r.T_cam_part, T_TRUE)) < 1.5


def _box_detector(tmp_path):
    """(the box's mesh, a tiny detector's folder for it, a 64x48 camera)."""
    from detect.standin_frames import BOX
    from detect.test_detector import tiny_detector

    from sim2real.core.camera import CameraIntrinsics
    from sim2real.detect.detector import save_detector
    from sim2real.models.part import load_part

    mesh = tmp_path / "box.ply"
    BOX.export(mesh)
    det = tmp_path / "det"
    det.mkdir()
    save_detector(tiny_detector(), det)
    camera = CameraIntrinsics(fx=60.0, fy=60.0, cx=32.0, cy=24.0, width=64, height=48)
    return load_part(mesh).mesh, det, camera


def test_a_detection_below_min_confidence_proposes_nothing(tmp_path, monkeypatch):
    # the detector may report a lower peak the depth check preferred; the tracker starts only
    # from one that reaches min_confidence itself
    import sim2real.detect.detector as detector_module
    from sim2real.detect.detection import Detection
    from sim2real.tracking.proposals import detector_proposer

    mesh, det, camera = _box_detector(tmp_path)
    confidence = {"value": 0.29}

    def detect(detector, rgb, depth, K):
        return Detection(True, confidence["value"], np.array([0.0, 0.0, 0.5]), np.zeros(2))

    monkeypatch.setattr(detector_module, "detect_frame", detect)
    propose = detector_proposer(det, mesh, camera)
    depth, rgb = np.full((48, 64), 0.6, np.float32), np.zeros((48, 64, 3), np.uint8)
    assert propose(depth, rgb) == []  # 0.29 < 0.3, the shipped min_confidence
    confidence["value"] = 0.3
    assert len(propose(depth, rgb)) == len(coarse_rotations())  # no keypoint pose given


def test_a_loaded_detector_proposes_as_its_folder_does(tmp_path, monkeypatch):
    # a caller holding the detector (a benchmark, a cell running several trackers) need not
    # have it read from disk again for every tracker; another part is refused either way
    import sim2real.detect.detector as detector_module
    from sim2real.core.errors import InputError
    from sim2real.core.mesh_io import Mesh
    from sim2real.detect.detection import Detection
    from sim2real.detect.detector import load_detector
    from sim2real.tracking.proposals import detector_proposer

    mesh, det, camera = _box_detector(tmp_path)
    pose = make_pose(rpy_deg_to_matrix(10, 20, 30), [0.01, 0.0, 0.5])

    def detect(detector, rgb, depth, K):
        return Detection(True, 0.8, np.array([0.0, 0.0, 0.5]), np.zeros(2), pose)

    monkeypatch.setattr(detector_module, "detect_frame", detect)
    depth, rgb = np.full((48, 64), 0.6, np.float32), np.zeros((48, 64, 3), np.uint8)
    from_folder = detector_proposer(det, mesh, camera)(depth, rgb)
    from_object = detector_proposer(load_detector(det), mesh, camera)(depth, rgb)
    assert len(from_object) == len(coarse_rotations()) + 1  # the keypoint pose first
    np.testing.assert_array_equal(np.array(from_object), np.array(from_folder))
    other = Mesh(mesh.vertices * 2.0, mesh.faces)
    with pytest.raises(InputError, match="the detector given"):
        detector_proposer(load_detector(det), other, camera)
