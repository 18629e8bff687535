"""Track evaluation on constructed tracks with known errors."""

import json
import math

import numpy as np
import pytest

from sim2real.core.mesh_io import validate_mesh
from sim2real.core.pose import make_pose
from sim2real.core.pose_records import PoseRecord
from sim2real.tracking.evaluation import RECALL_THRESHOLDS, evaluate_track


def plate():
    """A flat 10 cm square: ADD-S of a shift along its normal is exactly the shift."""
    v = np.array([[-0.05, -0.05, 0], [0.05, -0.05, 0], [0.05, 0.05, 0], [-0.05, 0.05, 0]])
    return validate_mesh(v, np.array([[0, 1, 2], [0, 2, 3]]), "test", "plate")


def record(frame, status, shift_rel, d, ms=2.0):
    T = make_pose(np.eye(3), [0, 0, 0.5 + shift_rel * d])
    return PoseRecord(frame=frame, status=status, score=0.9, T_cam_part=T, ms=ms)


def test_recall_auc_and_precision_of_a_constructed_track():
    d = math.sqrt(2) * 0.1
    gt = {f: make_pose(np.eye(3), [0, 0, 0.5]) for f in range(10)}
    plan = [
        (0, "tracking", 0.0),
        (1, "recovered", 0.0),
        (2, "tracking", 0.03),
        (3, "tracking", 0.07),
        (4, "tracking", 0.12),
        (5, "tracking", 0.27),
        (6, "tracking", 0.6),
        (7, "lost", 0.0),
        (9, "tracking", 0.44),
    ]  # frame 8: no record
    records = [record(f, s, e, d, ms=f) for f, s, e in plan]
    ev = evaluate_track(records, gt, plate(), None)
    assert ev.diameter_m == pytest.approx(d)
    assert ev.frames[3]["adds_mm"] == pytest.approx(0.07 * d * 1000, rel=1e-9)
    # recalled: reported tracking/recovered with ADD-S under t; lost and missing are misses
    assert ev.recall == pytest.approx([0.3, 0.4, 0.5, 0.5, 0.5, 0.6, 0.6, 0.6, 0.7, 0.7])
    assert ev.thresholds_rel == list(RECALL_THRESHOLDS)
    assert ev.auc == pytest.approx(0.54)
    assert ev.recall_at_10 == pytest.approx(0.4)
    assert ev.recall_at_10_any_status == pytest.approx(0.5)  # frame 7's pose is right
    assert ev.tracking_precision == pytest.approx(4 / 8)
    assert ev.n_missing == 1 and ev.n_reported_tracking == 8
    assert ev.median_adds_mm == pytest.approx(0.07 * d * 1000)
    assert ev.ms_median == pytest.approx(4.0)  # ms = frame ids 0..7, 9
    assert ev.lost_latency_frames is None
    assert json.loads(ev.to_json())["auc"] == pytest.approx(0.54)
    assert any("precision 50.0 %" in line for line in ev.summary_lines())


def test_records_without_ground_truth_are_counted():
    d = math.sqrt(2) * 0.1
    gt = {f: make_pose(np.eye(3), [0, 0, 0.5]) for f in range(4)}
    records = [record(f, "tracking", 0.0, d) for f in range(6)]  # frames 4, 5: no ground truth
    ev = evaluate_track(records, gt, plate(), None)
    assert ev.n_without_gt == 2 and "2 records without ground truth" in ev.summary_lines()[0]


def test_lost_and_recover_latencies_when_the_part_leaves_and_returns():
    d = math.sqrt(2) * 0.1
    gt = {f: make_pose(np.eye(3), [0, 0, 0.5]) for f in range(12)}
    visible = dict(enumerate([1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1.0]))
    plan = (
        ["tracking"] * 3
        + ["tracking"]
        + ["lost"] * 4
        + ["recovered", "recovered"]
        + ["tracking"] * 2
    )
    errors = [0, 0, 0, 0.6, 0, 0, 0, 0, 0.3, 0, 0, 0]
    records = [record(f, s, e, d) for f, (s, e) in enumerate(zip(plan, errors, strict=True))]
    ev = evaluate_track(records, gt, plate(), None, visible=visible)
    assert ev.lost_latency_frames == [1]  # gone at frame 3, 'lost' at frame 4
    assert ev.recover_latency_frames == [2]  # back at frame 7, right again at frame 9
    assert ev.n_tracking_while_gone == 1
    assert ev.n_eval_frames == 8 and ev.recall_at_10 == pytest.approx(6 / 8)


def test_score_auroc_equals_the_share_of_correct_wrong_pairs_ranked_right():
    from sim2real.tracking.evaluation import score_auroc

    rng = np.random.default_rng(3)
    scores = np.round(rng.random(60), 1)  # rounded: many ties
    correct = rng.random(60) < 0.6
    pairs = [
        1.0 if p > n else 0.5 if p == n else 0.0 for p in scores[correct] for n in scores[~correct]
    ]
    assert score_auroc(scores.tolist(), correct.tolist()) == pytest.approx(np.mean(pairs))
    assert score_auroc([0.9, 0.1], [True, True]) is None  # no wrong pose to tell apart


def test_a_pose_slid_along_a_face_is_wrong_and_a_symmetric_one_right():
    """ADD-S pairs each point with the nearest true one: a plate slid 30 % of its diameter
    along itself scored as right (a probe: a sheet part 37 mm off, 'tracking' precision 100 %).
    Judged by the symmetry-aware ADD it is wrong; turned by a symmetry of the part, right."""
    from sim2real.models.symmetry import parse_symmetry

    d = math.sqrt(2) * 0.1
    gt = {0: make_pose(np.eye(3), [0, 0, 0.5]), 1: make_pose(np.eye(3), [0, 0, 0.5])}
    slid = make_pose(np.eye(3), [0.3 * d, 0, 0.5])
    quarter = make_pose(np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]]), [0, 0, 0.5])
    records = [PoseRecord(frame=0, status="tracking", score=0.9, T_cam_part=slid),
               PoseRecord(frame=1, status="tracking", score=0.9, T_cam_part=quarter)]  # fmt: skip
    ev = evaluate_track(records, gt, plate(), parse_symmetry("discrete:z:4"))
    assert ev.frames[0]["adds_rel"] < 0.1 < ev.frames[0]["add_rel"]  # what ADD-S cannot see
    assert [row["correct"] for row in ev.frames] == [False, True]
    assert ev.tracking_precision == pytest.approx(0.5) and ev.recall_at_10 == pytest.approx(0.5)
