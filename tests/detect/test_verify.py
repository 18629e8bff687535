"""Detections checked against the depth image (detect/verify.py): a pose near the part is
refined onto it and confirmed by the depth; the same check at an object of another shape
beside it, or buried in the table, confirms far fewer of the part's points; and the decoder
keeps the confirmed peak over a higher one at the decoy."""

from dataclasses import replace

import numpy as np
import pytest
import trimesh
from scipy.spatial.transform import Rotation

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.mesh_io import Mesh
from sim2real.core.pose import invert_pose, look_at, make_pose
from sim2real.detect.decode import NetFrame, verified_candidate
from sim2real.detect.detection import Detection
from sim2real.detect.detector import DetectorSettings
from sim2real.detect.verify import check_pose, check_poses, depth_agreement, surface_samples
from sim2real.sensors.render import DepthRenderer
from sim2real.sensors.scene import make_scene


def _mesh(tm: trimesh.Trimesh, name: str) -> Mesh:
    return Mesh(np.asarray(tm.vertices), np.asarray(tm.faces, np.int32), name)


BOX = _mesh(trimesh.creation.box(extents=[0.08, 0.08, 0.08]), "cube")
BALL = _mesh(trimesh.creation.icosphere(subdivisions=3, radius=0.05), "ball")
CAMERA = CameraIntrinsics(fx=300.0, fy=300.0, cx=159.5, cy=119.5, width=320, height=240)
T_WORLD_CAM = look_at([0.0, -0.45, 0.35], [0.05, 0.0, 0.04])
T_CUBE = invert_pose(T_WORLD_CAM) @ make_pose(Rotation.from_euler("z", 20, degrees=True)
                                             .as_matrix(), [0.0, 0.0, 0.04])  # fmt: skip
T_BALL = invert_pose(T_WORLD_CAM) @ make_pose(np.eye(3), [0.16, 0.02, 0.05])
SURFACE = surface_samples(BOX)
CENTRE = np.zeros(3)
DIAMETER = BOX.diameter_m


@pytest.fixture(scope="module")
def depth():
    scene = make_scene([BOX, BALL], [T_CUBE, T_BALL], plane=True)
    return DepthRenderer(scene, CAMERA).render_ideal().depth_m


def _moved(T, shift_m, tilt_deg, axis=(1.0, 0.0, 0.0)):
    """T turned by ``tilt_deg`` about ``axis`` (camera frame) through the part's centre and
    shifted by ``shift_m`` (camera frame)."""
    R = Rotation.from_rotvec(np.radians(tilt_deg) * np.asarray(axis)).as_matrix()
    out = T.copy()
    out[:3, :3] = R @ T[:3, :3]
    out[:3, 3] = T[:3, 3] + np.asarray(shift_m)
    return out


def _errors(T, T_ref):
    dt = 1e3 * np.linalg.norm(T[:3, 3] - T_ref[:3, 3])
    cos = (np.trace(T[:3, :3].T @ T_ref[:3, :3]) - 1) / 2
    return dt, np.degrees(np.arccos(np.clip(cos, -1, 1)))


def test_surface_samples_lie_on_the_part_with_unit_normals():
    assert SURFACE.shape == (256, 6)
    assert np.allclose(np.abs(SURFACE[:, :3]).max(axis=1), 0.04, atol=1e-9)  # on a face
    assert np.allclose(np.linalg.norm(SURFACE[:, 3:], axis=1), 1.0)
    assert np.array_equal(surface_samples(BOX), SURFACE)  # seeded


def test_the_true_pose_is_confirmed_and_a_buried_one_is_not(depth):
    confirmed, facing = depth_agreement(SURFACE, T_CUBE, depth, CAMERA.K, DIAMETER)
    assert facing > 60 and confirmed / facing > 0.95
    buried = _moved(T_CUBE, [0, 0, 0.12], 0)  # 12 cm further along the line of sight
    confirmed, facing = depth_agreement(SURFACE, buried, depth, CAMERA.K, DIAMETER)
    assert confirmed / facing < 0.1


@pytest.mark.parametrize("axis", [(1.0, 0, 0), (0, 1.0, 0), (0.7, -0.7, 0)])
def test_a_start_2_cm_and_25_deg_off_is_refined_onto_the_part(depth, axis):
    start = _moved(T_CUBE, [0.015, -0.01, 0.008], 25, axis)
    check = check_pose(SURFACE, start, CENTRE, depth, CAMERA.K, DIAMETER)
    assert check is not None
    dt, _ = _errors(check.T_cam_part, T_CUBE)
    assert dt < 5 and check.agreement > 0.8, (dt, check)


def test_the_part_placed_on_the_decoy_confirms_fewer_points(depth):
    at_ball = T_BALL.copy()
    at_ball[:3, :3] = T_CUBE[:3, :3]
    right = check_pose(SURFACE, _moved(T_CUBE, [0.01, 0, 0], 20), CENTRE, depth, CAMERA.K,
                       DIAMETER)  # fmt: skip
    wrong = check_pose(SURFACE, at_ball, CENTRE, depth, CAMERA.K, DIAMETER)
    assert right.confirmed > 1.5 * wrong.confirmed, (right, wrong)


def test_starts_checked_together_equal_each_checked_alone(depth):
    """The ICP runs of several starts share two threads: the results must not depend on it."""
    starts = [_moved(T_CUBE, [0.01, 0, 0], 20), None, T_BALL, _moved(T_CUBE, [0, 0.01, 0], -15)]
    together = check_poses(SURFACE, starts, CENTRE, depth, CAMERA.K, DIAMETER)
    assert together[1] is None
    for T, check in zip(starts, together, strict=True):
        if T is not None:
            alone = check_pose(SURFACE, T, CENTRE, depth, CAMERA.K, DIAMETER)
            assert np.array_equal(alone.T_cam_part, check.T_cam_part)
            assert alone.confirmed == check.confirmed


def _check_in_child(depth, queue):
    queue.put(check_pose(SURFACE, T_CUBE, CENTRE, depth, CAMERA.K, DIAMETER).confirmed)


def test_a_forked_process_checks_after_its_parent_did(depth):
    """The check's threads are started once per process: a child forked after the parent used
    them has none of them and must start its own, not wait forever."""
    import multiprocessing

    parent = check_pose(SURFACE, T_CUBE, CENTRE, depth, CAMERA.K, DIAMETER).confirmed
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_check_in_child, args=(depth, queue))
    child.start()
    child.join(timeout=60)
    hung = child.is_alive()
    if hung:
        child.kill()
    assert not hung and queue.get(timeout=5) == parent


def _detector():
    """A detector of the test cube without a network: what verified_candidate reads."""
    from sim2real.detect.detector import Detector, DetectorFile
    from sim2real.detect.network import NetworkConfig

    info = DetectorFile(
        network=NetworkConfig(input="rgbd"),
        model_name="cube",
        model_path="cube.obj",
        model_hash="-",
        centre_part_m=CENTRE.tolist(),
        keypoints_part_m=np.eye(8, 3).tolist(),
        symmetries=[np.eye(4).tolist()],
        surface_part_m=SURFACE.tolist(),
        diameter_m=DIAMETER,
    )
    return Detector(None, info)


def _cand(T, conf):
    return Detection(True, conf, T[:3, 3].copy(), np.zeros(2), T)


def _decoy_and_part(depth):
    """(detector, frame, a pose at the decoy ball, a pose 1.6 cm and 20 degrees off the cube)."""
    at_ball = T_BALL.copy()
    at_ball[:3, :3] = T_CUBE[:3, :3]
    near = _moved(T_CUBE, [0.012, 0.0, -0.01], 20, (0, 1.0, 0))
    frame = NetFrame(np.zeros((240, 320, 3), np.uint8), depth, CAMERA.K, (1.0, 0, 0))
    return _detector(), frame, at_ball, near


def test_the_decoder_keeps_the_confirmed_peak_over_a_higher_one_at_the_decoy(depth):
    det, frame, at_ball, near = _decoy_and_part(depth)
    chosen, checks = verified_candidate(det, [_cand(at_ball, 0.8), _cand(near, 0.7)], frame)
    assert chosen is not None and chosen.confidence == 0.7 and len(checks) == 2
    assert checks[1].confirmed > checks[0].confirmed
    assert _errors(chosen.T_cam_part, T_CUBE)[0] < 5 and chosen.depth_agreement > 0.8
    assert np.allclose(chosen.position_m, chosen.T_cam_part[:3, 3])  # the centre, refined
    # a lone candidate at the decoy: kept by default (the most confirmed), with its low
    # agreement to tell; refused under a bar it does not reach
    lone, checks = verified_candidate(det, [_cand(at_ball, 0.8)], frame)
    assert lone is not None and lone.depth_agreement == checks[0].agreement < 0.5
    det.info.settings = DetectorSettings(min_agreement=0.5)
    assert verified_candidate(det, [_cand(at_ball, 0.8)], frame)[0] is None
    # without depth, or with checking off: nothing is checked
    blank = replace(frame, depth_m=np.zeros_like(depth))
    assert verified_candidate(det, [_cand(at_ball, 0.8), _cand(near, 0.7)], blank) == (
        None,
        [None] * 2,
    )
    det.info.settings = DetectorSettings(verify=False)
    assert verified_candidate(det, [_cand(near, 0.7)], frame) == (None, [None])


def test_the_checks_stop_once_a_candidate_is_confirmed_well_enough(depth):
    det, frame, at_ball, near = _decoy_and_part(depth)
    det.info.settings = DetectorSettings(check_first=1, accept_agreement=0.6)
    # the decoy first: its agreement is low, so the rest are checked and the part wins
    chosen, checks = verified_candidate(det, iter([_cand(at_ball, 0.8), _cand(near, 0.7)]), frame)
    assert chosen.confidence == 0.7 and len(checks) == 2 and checks[0].agreement < 0.6
    # the part first: confirmed at more than 0.6 of its points, the decoy is never checked
    chosen, checks = verified_candidate(det, iter([_cand(near, 0.8), _cand(at_ball, 0.7)]), frame)
    assert chosen.confidence == 0.8 and len(checks) == 1 and checks[0].agreement >= 0.6
    # no bar: every candidate is checked
    det.info.settings = DetectorSettings(check_first=1, accept_agreement=None)
    assert len(verified_candidate(det, [_cand(near, 0.8), _cand(at_ball, 0.7)], frame)[1]) == 2


def test_a_candidate_without_a_keypoint_pose_is_checked_from_fixed_rotations(depth):
    """PnP fails on many candidates of flat, symmetric parts: such a candidate is started from
    the 12 rotations at its position, and counts only at ``rotation_agreement``."""
    det, frame, at_ball, _ = _decoy_and_part(depth)
    part = Detection(True, 0.7, T_CUBE[:3, 3] + [0.01, -0.008, 0.005], np.zeros(2), None)
    decoy = replace(_cand(at_ball, 0.8), T_cam_part=None)
    chosen, checks = verified_candidate(det, [decoy, part], frame)
    assert chosen is not None and chosen.confidence == 0.7 and checks[1].agreement > 0.8
    assert _errors(chosen.T_cam_part, T_CUBE)[0] < 5  # the centre, refined onto the part
    # the decoy alone: its best rotation fits part of the ball, below the bar: not kept, while
    # the same fit from a keypoint pose needs only min_agreement (0) and is
    alone, checks = verified_candidate(det, [decoy], frame)
    assert alone is None and checks[0] is not None and checks[0].agreement < 0.5
    assert verified_candidate(det, [_cand(at_ball, 0.8)], frame)[0] is not None
    # off: a candidate without a pose is not checked
    det.info.settings = DetectorSettings(rotation_agreement=None)
    assert verified_candidate(det, [decoy, part], frame) == (None, [None, None])


def test_detect_run_sums_up_the_depth_checks():
    from sim2real.detect.run import DetectRun

    dets = [(i, Detection(True, 0.9, np.zeros(3), np.zeros(2), depth_agreement=a))
            for i, a in enumerate((0.8, 0.5, 0.7))]  # fmt: skip
    dets.append((3, Detection(True, 0.9, np.zeros(3), np.zeros(2))))  # not checked
    lines = DetectRun(dets, [10.0] * 4, [], None).summary_lines()
    assert any("3 detections" in x and "0.70" in x and "lowest 0.50" in x for x in lines), lines
    unchecked = DetectRun(dets[3:], [10.0], [], None).summary_lines()
    assert not any("depth" in x for x in unchecked)
    # a detector that measured its false detections says so beside what it found
    warned = DetectRun(dets, [10.0] * 4, [], None, absent_found=0.58).summary_lines()
    assert any("58 % of randomized frames without its part" in x for x in warned), warned
    assert not any("presence" in x for x in lines)  # not measured: nothing to say


def test_detect_run_times_the_first_frame_apart():
    from sim2real.detect.run import DetectRun

    dets = [(i, Detection(True, 0.9, np.zeros(3), np.zeros(2))) for i in range(11)]
    ms = [400.0] + [20.0] * 8 + [30.0, 50.0]  # start-up, steady frames, two slow ones
    line = DetectRun(dets, ms, [], None).summary_lines()[0]
    # the start-up frame neither sets the percentile nor hides in the median
    # (numpy's percentile: 30 + 0.1 * (50 - 30); with the first frame in it, 50)
    assert "20.0 ms per frame (median; 90th percentile 32.0), the first 400.0 ms" in line, line
    one = DetectRun(dets[:1], [400.0], [], None).summary_lines()[0]
    assert "400.0 ms (one frame, start-up included)" in one, one


def test_lower_peaks_become_candidates_only_when_the_depth_can_tell():
    from sim2real.detect.decode import candidate_peaks

    heat = np.zeros((30, 40))
    for (i, j), score in {(5, 5): 0.7, (10, 20): 0.45, (20, 30): 0.25, (25, 8): 0.05}.items():
        heat[i, j] = score
    settings = DetectorSettings(candidates=8, candidate_confidence=0.1)
    # checkable: every peak down to 0.1 (the part can score low on real frames)
    assert candidate_peaks(heat, settings, True) == [(5, 5), (10, 20), (20, 30)]
    assert candidate_peaks(heat, settings.model_copy(update={"candidates": 2}), True) == [
        (5, 5),
        (10, 20),
    ]
    # without depth: the highest peak alone, as the score calls it
    assert candidate_peaks(heat, settings, False) == [(5, 5)]
    # found only when the highest peak reaches min_confidence, whatever lies below
    heat[5, 5], heat[10, 20] = 0.28, 0.2
    assert candidate_peaks(heat, settings, True) == []
    assert candidate_peaks(heat, settings, False) == []


def test_a_highest_peak_over_a_depth_hole_is_kept_unchecked_when_asked(depth):
    """A dark cube returns no depth on its own pixels (the ball decoy is measured as usual):
    with ``no_return_share`` the highest peak there is kept, unchecked, instead of the
    decoy; off, and on a frame where the cube is measured, nothing changes."""
    ideal = DepthRenderer(make_scene([BOX, BALL], [T_CUBE, T_BALL], plane=True), CAMERA)
    ids = ideal.render_ideal().object_id
    dark = np.where(ids == 0, 0.0, depth).astype(depth.dtype)
    det, frame, at_ball, near = _decoy_and_part(dark)
    candidates = [_cand(near, 0.8), _cand(at_ball, 0.7)]
    off, _ = verified_candidate(det, candidates, frame)
    assert off.confidence == 0.7  # the decoy: the dark cube's pose confirms nothing
    det.info.settings = DetectorSettings(no_return_share=0.8)
    chosen, checks = verified_candidate(det, candidates, frame)
    assert chosen.confidence == 0.8 and chosen.depth_agreement == 0.0
    assert np.array_equal(chosen.T_cam_part, near) and len(checks) == 2
    # the highest peak at the measured decoy: not over a hole, the rule keeps out
    chosen, _ = verified_candidate(det, [_cand(at_ball, 0.8), _cand(near, 0.7)], frame)
    assert chosen.confidence == 0.8 and chosen.depth_agreement > 0
    # the cube measured: confirmed as before, the rule never asked
    chosen, _ = verified_candidate(det, candidates, replace(frame, depth_m=depth))
    assert chosen.confidence == 0.8 and chosen.depth_agreement > 0.8


def test_unmeasured_share_counts_the_facing_points_over_no_return(depth):
    from sim2real.detect.verify import unmeasured_share

    assert unmeasured_share(SURFACE, T_CUBE, depth, CAMERA.K) == 0.0
    assert unmeasured_share(SURFACE, T_CUBE, np.zeros_like(depth), CAMERA.K) == 1.0
    off_image = T_CUBE.copy()
    off_image[0, 3] += 5.0  # far to the side: off the image counts as measured
    assert unmeasured_share(SURFACE, off_image, np.zeros_like(depth), CAMERA.K) == 0.0
