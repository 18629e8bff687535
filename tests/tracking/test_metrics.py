"""Pose errors against hand-computed values, symmetry parsing, and track evaluation."""

import json
import math

import numpy as np
import pytest
import trimesh

from sim2real.core.errors import InputError
from sim2real.core.mesh_io import validate_mesh
from sim2real.core.pose import make_pose, rpy_deg_to_matrix
from sim2real.tracking.metrics import (
    RECALL_THRESHOLDS,
    add_m,
    adds_m,
    diameter_m,
    evaluate_track,
    model_points,
    read_poses_jsonl,
    rotation_error_deg,
    symmetric_add_m,
    translation_error_m,
)
from sim2real.tracking.symmetry import axis_rotation, parse_symmetry

T_GT = make_pose(rpy_deg_to_matrix(20, -35, 110), [0.05, -0.02, 0.6])


def mesh_of(tm, name="part"):
    return validate_mesh(tm.vertices, tm.faces, "test", name)


@pytest.fixture(scope="module")
def cylinder():
    return mesh_of(trimesh.creation.cylinder(radius=0.03, height=0.1, sections=64))


def spin_z(T, deg, point=(0, 0, 0)):
    """T composed with a rotation about the part's z axis through ``point``."""
    R = axis_rotation(np.array([0, 0, 1.0]), math.radians(deg))
    p = np.asarray(point, float)
    return T @ make_pose(R, p - R @ p)


def test_add_of_a_translation_error_equals_it():
    points = np.random.default_rng(0).normal(size=(500, 3)) * 0.05
    T_est = T_GT.copy()
    T_est[:3, 3] += [0.003, 0.004, 0.0]  # 5 mm
    assert add_m(T_est, T_GT, points) == pytest.approx(0.005, abs=1e-12)
    assert adds_m(T_est, T_GT, points) <= 0.005 + 1e-12
    assert translation_error_m(T_est, T_GT) == pytest.approx(0.005, abs=1e-12)
    assert rotation_error_deg(T_est, T_GT) == pytest.approx(0.0, abs=1e-6)


def test_cylinder_turned_about_its_axis_is_right_for_adds_and_symmetric_add(cylinder):
    points = model_points(cylinder, 2000)
    T_est = spin_z(T_GT, 37.3)  # between two 5-degree samples: the refinement must find it
    add = add_m(T_est, T_GT, points)
    # points at radius r move by 2 r sin(37.3/2 deg); the samples average r of about 2.3 cm
    assert 0.012 < add < 0.02
    assert adds_m(T_est, T_GT, points) < 0.15 * add  # only the sampling gaps remain
    sym = parse_symmetry("axis:z")
    assert symmetric_add_m(T_est, T_GT, points, sym) < 1e-6
    assert rotation_error_deg(T_est, T_GT) == pytest.approx(37.3, abs=1e-6)
    assert rotation_error_deg(T_est, T_GT, sym) == pytest.approx(0.0, abs=1e-4)
    assert translation_error_m(T_est, T_GT, sym) == pytest.approx(0.0, abs=1e-12)


def test_continuous_errors_match_brute_force_for_an_offset_axis():
    sym = parse_symmetry("axis:0.3,0.1,1@0.01,-0.02,0.005")
    rng = np.random.default_rng(3)
    for _ in range(5):
        T_est = make_pose(rpy_deg_to_matrix(*rng.uniform(-180, 180, 3)), rng.normal(size=3) * 0.05)
        S = sym.transforms(n_continuous=20000)
        G = T_GT @ S
        rel = np.einsum("ji,njk->nik", T_est[:3, :3], G[:, :3, :3])
        brute_rot = np.degrees(np.arccos(np.clip((np.trace(rel, axis1=1, axis2=2) - 1) / 2, -1, 1)))
        brute_t = np.linalg.norm(G[:, :3, 3] - T_est[:3, 3], axis=1)
        assert rotation_error_deg(T_est, T_GT, sym) == pytest.approx(brute_rot.min(), abs=0.02)
        assert translation_error_m(T_est, T_GT, sym) == pytest.approx(brute_t.min(), abs=1e-6)


def test_discrete_four_fold_symmetry_of_a_square_block():
    block = mesh_of(trimesh.creation.box((0.1, 0.1, 0.04)))
    points = model_points(block, 1000)
    sym = parse_symmetry("discrete:z:4")
    assert sym.transforms().shape == (4, 4, 4)
    turned = spin_z(T_GT, 90)
    assert add_m(turned, T_GT, points) > 0.03
    assert symmetric_add_m(turned, T_GT, points, sym) == pytest.approx(0.0, abs=1e-12)
    assert rotation_error_deg(turned, T_GT) == pytest.approx(90.0, abs=1e-6)
    assert rotation_error_deg(turned, T_GT, sym) == pytest.approx(0.0, abs=1e-4)
    # 100 deg: 10 deg from the nearest symmetric pose
    assert rotation_error_deg(spin_z(T_GT, 100), T_GT, sym) == pytest.approx(10.0, abs=1e-6)


def test_symmetry_text_and_files(tmp_path):
    assert parse_symmetry(None).kind == "none" and parse_symmetry("none").transforms().shape == (
        1,
        4,
        4,
    )
    sym = parse_symmetry("axis:0,0,2@0,0,0.01")
    assert np.allclose(sym.axis, [0, 0, 1]) and np.allclose(sym.point, [0, 0, 0.01])
    S = sym.transforms(8)
    assert S.shape == (8, 4, 4) and np.allclose(S[0], np.eye(4))
    assert np.allclose(S[:, :3, 3] @ [0, 0, 1], 0)  # a z axis through (0, 0, z) moves nothing
    flip = [1, 0, 0, 0, 0, -1, 0, 0, 0, 0, -1, 20, 0, 0, 0, 1]  # 180 deg about x, 20 mm up
    info = {
        "3": {"diameter": 100, "symmetries_discrete": [flip]},
        "4": {
            "symmetries_continuous": [{"axis": [0, 0, 1], "offset": [0, 0, 0]}],
            "symmetries_discrete": [flip],
        },
    }
    path = tmp_path / "models_info.json"
    path.write_text(json.dumps(info))
    three = parse_symmetry(str(path), obj_id=3)
    assert three.kind == "discrete" and np.allclose(three.discrete[0][:3, 3], [0, 0, 0.02])
    four = parse_symmetry(str(path), obj_id=4)
    assert four.kind == "continuous" and four.transforms(10).shape == (20, 4, 4)
    with pytest.raises(InputError, match="pick one"):
        parse_symmetry(str(path))


@pytest.mark.parametrize(
    "text", ["axis:", "axis:w", "axis:0,0,0", "discrete:z:1", "discrete:z:four", "spin", "axis:1,2"]
)
def test_bad_symmetry_text_raises_naming_the_option(text):
    with pytest.raises(InputError) as err:
        parse_symmetry(text)
    assert err.value.field == "--symmetry"


def test_diameter_and_model_points():
    cube = mesh_of(trimesh.creation.box((0.1, 0.1, 0.1)))
    assert diameter_m(cube.vertices) == pytest.approx(math.sqrt(3) * 0.1)
    pts = model_points(cube, 500, seed=1)
    assert pts.shape == (500, 3)
    assert np.allclose(np.abs(pts).max(axis=1), 0.05)  # every point lies on a face
    assert np.array_equal(pts, model_points(cube, 500, seed=1))


def plate():
    """A flat 10 cm square: ADD-S of a shift along its normal is exactly the shift."""
    v = np.array([[-0.05, -0.05, 0], [0.05, -0.05, 0], [0.05, 0.05, 0], [-0.05, 0.05, 0]])
    return validate_mesh(v, np.array([[0, 1, 2], [0, 2, 3]]), "test", "plate")


def record(frame, status, shift_rel, d, ms=2.0):
    T = make_pose(np.eye(3), [0, 0, 0.5 + shift_rel * d])
    return {"frame": frame, "status": status, "score": 0.9, "T_cam_part": T.tolist(), "ms": ms}


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


def test_read_poses_jsonl_and_its_errors(tmp_path):
    good = {
        "frame": 0,
        "status": "tracking",
        "score": 0.8,
        "T_cam_part": np.eye(4).tolist(),
        "ms": 3,
    }
    path = tmp_path / "poses.jsonl"
    path.write_text(
        json.dumps(good)
        + "\n\n"
        + json.dumps({"frame": 1, "status": "lost", "T_cam_part": None})
        + "\n"
    )
    recs = read_poses_jsonl(path)
    assert (
        len(recs) == 2 and recs[0]["T_cam_part"].shape == (4, 4) and recs[1]["T_cam_part"] is None
    )
    second = {**good, "frame": 1}
    cases = [
        ("{not json", "not valid JSON"),
        (json.dumps({**second, "status": "fine"}), "status"),
        (json.dumps({**second, "frame": -1}), "frame"),
        (json.dumps({**second, "T_cam_part": (2 * np.eye(4)).tolist()}), "T_cam_part"),
        (json.dumps({**second, "T_cam_part": None}), "T_cam_part"),
        (json.dumps({**second, "score": "high"}), "score"),
        (json.dumps(good), "appears twice"),
    ]
    for line, needle in cases:
        path.write_text(json.dumps(good) + "\n" + line + "\n")
        with pytest.raises(InputError, match=needle) as err:
            read_poses_jsonl(path)
        assert err.value.field == "line 2" and str(path) in str(err.value)
    path.write_text("\n")
    with pytest.raises(InputError, match="no pose records"):
        read_poses_jsonl(path)
