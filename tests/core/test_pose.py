import json

import numpy as np
import pytest

from sim2real.core.errors import InputError
from sim2real.core.pose import (
    invert_pose,
    load_pose_file,
    look_at,
    matrix_to_quat,
    parse_pose,
    pose_from_values,
    rpy_deg_to_matrix,
)


def test_quaternion_pose_90_deg_about_z():
    # qz = qw = sqrt(1/2) is a 90 deg turn about z: x -> y
    T = parse_pose("0.1 0.2 0.3 0 0 0.7071068 0.7071068")
    assert np.allclose(T[:3, :3] @ [1, 0, 0], [0, 1, 0], atol=1e-6)
    assert np.allclose(T[:3, 3], [0.1, 0.2, 0.3])


def test_rpy_degrees_need_the_flag_and_follow_ros_convention():
    with pytest.raises(InputError, match="ambiguous"):
        parse_pose("0 0 1 90 0 0")
    T = parse_pose("0 0 1 0 0 90", rpy_deg=True)  # yaw 90 deg: x -> y
    assert np.allclose(T[:3, :3] @ [1, 0, 0], [0, 1, 0], atol=1e-12)
    # R = Rz(yaw) Ry(pitch) Rx(roll): roll 90 then yaw 90 maps z -> -y -> x
    R = rpy_deg_to_matrix(90, 0, 90)
    assert np.allclose(R @ [0, 0, 1], [1, 0, 0], atol=1e-12)


def test_matrix_text_with_commas_and_rows():
    T = parse_pose("1,0,0,0.5, 0,1,0,0, 0,0,1,2, 0,0,0,1")
    assert T[0, 3] == 0.5 and T[2, 3] == 2


def test_rejects_non_rigid_matrices():
    scaled = np.diag([2.0, 2.0, 2.0, 1.0])
    with pytest.raises(InputError, match="orthonormal"):
        pose_from_values(scaled)
    bad_row = np.eye(4)
    bad_row[3, 0] = 1
    with pytest.raises(InputError, match="last row"):
        pose_from_values(bad_row)
    with pytest.raises(InputError, match="reflection"):
        pose_from_values(np.diag([1.0, 1.0, -1.0, 1.0]))
    with pytest.raises(InputError, match="unit norm"):
        parse_pose("0 0 0 0 0 0 2")


def test_json_and_opencv_yaml_files(tmp_path):
    T = np.eye(4)
    T[:3, 3] = [1, 2, 3]
    (tmp_path / "p.json").write_text(json.dumps({"T": T.tolist()}))
    assert np.allclose(load_pose_file(tmp_path / "p.json"), T)
    (tmp_path / "p.yaml").write_text(
        "%YAML:1.0\npose: !!opencv-matrix\n  rows: 4\n  cols: 4\n  dt: d\n"
        "  data: [1, 0, 0, 1, 0, 1, 0, 2, 0, 0, 1, 3, 0, 0, 0, 1]\n"
    )
    assert np.allclose(load_pose_file(tmp_path / "p.yaml"), T)
    # BOP scene_gt entry: rotation row-major, translation in millimetres
    (tmp_path / "gt.json").write_text(
        json.dumps({"cam_R_m2c": np.eye(3).ravel().tolist(), "cam_t_m2c": [10, 20, 500]})
    )
    assert np.allclose(load_pose_file(tmp_path / "gt.json")[:3, 3], [0.01, 0.02, 0.5])


def test_m3t_pose_file_reads_its_header(real_data):
    T = load_pose_file(real_data / "depth-m3t" / "triangle_pose_detector_test.txt")
    # first row and translation as printed in the file
    assert np.allclose(T[0], [0.607674, 0.786584, -0.10962, -0.081876], atol=1e-5)
    assert T[2, 3] == pytest.approx(0.618302)


def test_inverse_and_quaternion_round_trip():
    rng = np.random.default_rng(0)
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    T = pose_from_values([0.1, -0.2, 0.3, *q])
    assert np.allclose(invert_pose(T) @ T, np.eye(4), atol=1e-12)
    q2 = matrix_to_quat(T[:3, :3])
    assert np.allclose(np.abs(q2 @ q), 1.0, atol=1e-9)


def test_look_at_points_z_at_target():
    T = look_at([1.0, 0, 1.0], [0, 0, 0])
    assert np.allclose(T[:3, 2], np.array([-1, 0, -1]) / np.sqrt(2))
    assert np.linalg.det(T[:3, :3]) == pytest.approx(1.0)


def test_a_pose_with_a_non_finite_number_says_so():
    # was "not a file and not a list of numbers", which sent users looking for a file
    with pytest.raises(InputError, match="nan is not a finite number"):
        parse_pose("0.12 nan 0.5 0 0 0 1", field="--observed")
    with pytest.raises(InputError, match="not a file and not a list of numbers"):
        parse_pose("no-such-pose.txt")


def _visp_first_entry(real_data):
    return json.loads((real_data / "rgbd-visp-rbt" / "scene_gt.json").read_text())["0"][0]


def test_a_bop_scene_gt_or_list_of_entries_gives_the_first_frames_pose(real_data, tmp_path):
    entry = _visp_first_entry(real_data)
    expected = np.asarray(entry["cam_t_m2c"]) / 1000  # about 0.5 m in front of the camera
    listed = tmp_path / "init.json"
    listed.write_text(json.dumps([entry]))
    assert np.allclose(parse_pose(listed, field="--init")[:3, 3], expected)
    other = {**entry, "obj_id": 2, "cam_t_m2c": [0.0, 0.0, 900.0]}
    scene_gt = tmp_path / "scene_gt.json"
    scene_gt.write_text(json.dumps({"7": [other], "3": [other, entry]}))  # frame 3 is the first
    with pytest.raises(InputError, match=r"2 objects \(ids 1, 2\): pass --obj-id"):
        parse_pose(scene_gt, field="--init")
    T = parse_pose(scene_gt, field="--init", obj_id=1)
    assert np.allclose(T[:3, :3], np.reshape(entry["cam_R_m2c"], (3, 3)), atol=1e-6)
    assert np.allclose(T[:3, 3], expected)
    assert np.allclose(parse_pose(scene_gt, obj_id=2)[:3, 3], [0, 0, 0.9])


def test_a_pose_in_millimetres_is_refused(real_data, tmp_path):
    entry = _visp_first_entry(real_data)
    T = np.eye(4)
    T[:3, :3] = np.reshape(entry["cam_R_m2c"], (3, 3))
    T[:3, 3] = entry["cam_t_m2c"]  # millimetres written where metres belong: 0.5 m as 506
    path = tmp_path / "init_mm.txt"
    path.write_text("\n".join(" ".join(f"{v:.9g}" for v in row) for row in T))
    with pytest.raises(InputError, match="looks like millimetres") as err:
        parse_pose(path, field="--init")
    assert err.value.field == "--init" and err.value.source == str(path)
    with pytest.raises(InputError, match="looks like millimetres"):
        parse_pose("0 0 506 0 0 0 1", field="--init")
    assert parse_pose("0 0 19.5 0 0 0 1")[2, 3] == 19.5  # a far camera in a world frame is fine
