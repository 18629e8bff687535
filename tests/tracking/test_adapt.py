"""Trajectory adaptation: hand-computed displacements, CSV validation, refusals on lost tracks."""

import json
import math

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from sim2real.cli.adapt import adapt_cmd
from sim2real.core.errors import InputError
from sim2real.core.pose import make_pose, rpy_deg_to_matrix
from sim2real.tracking.adapt import (
    AdaptRefused,
    adapt_trajectory,
    observed_pose_from_jsonl,
    part_displacement,
    read_trajectory,
    write_trajectory,
)

S = math.sqrt(0.5)
# camera 1 m above the base origin offset by 0.5 m in x, looking straight down:
# R_base_cam = Rx(180 deg) (camera z -> base -z, camera y -> base -y)
T_BASE_CAM = make_pose(rpy_deg_to_matrix(180, 0, 0), [0.5, 0.0, 1.0])
# part 0.8 m in front of the camera, axes aligned with the camera: at base (0.5, 0, 0.2)
T_CAM_PART = make_pose(np.eye(3), [0.0, 0.0, 0.8])

CSV = (
    "t,x,y,z,qx,qy,qz,qw,gripper,label\n"
    "0.0,0.6,0.0,0.3,0,0,0,1,open,approach\n"
    '1.5,0.5,0.1,0.25,0.0,0.0,0.7071067811865476,0.7071067811865476,closed,"grasp, slow"\n'
    "2.25,0.4,-0.05,0.3,0,0,0,-1,0.125,lift\n"
)


def local_app() -> typer.Typer:
    app = typer.Typer()
    app.command("adapt")(adapt_cmd)
    app.command("noop")(lambda: None)  # two commands: `adapt` stays a subcommand
    return app


def write(tmp_path, text, name="traj.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_identity_displacement_keeps_trajectory_and_extra_columns(tmp_path):
    traj = read_trajectory(write(tmp_path, CSV))
    adapted = adapt_trajectory(traj, T_BASE_CAM, T_CAM_PART, T_CAM_PART)
    assert np.allclose(adapted.position_m, traj.position_m, atol=1e-9)
    # row 3 has qw = -1: the sign closest to the input is kept, not flipped to qw >= 0
    assert np.allclose(adapted.quat_xyzw, traj.quat_xyzw, atol=1e-9)
    out = tmp_path / "out.csv"
    write_trajectory(adapted, out)
    lines = out.read_text().splitlines()
    assert lines[0] == "t,x,y,z,qx,qy,qz,qw,gripper,label"
    rows = [line.split(",") for line in lines[1:]]
    assert [r[0] for r in rows] == ["0.0", "1.5", "2.25"]  # passed through verbatim
    assert [r[8] for r in rows] == ["open", "closed", "0.125"]
    assert lines[2].endswith('"grasp, slow"')
    again = read_trajectory(out)
    assert np.allclose(again.position_m, traj.position_m, atol=1e-9)
    assert np.allclose(again.quat_xyzw, traj.quat_xyzw, atol=1e-9)


def test_part_translated_in_camera_frame_moves_waypoints_by_rotated_offset(tmp_path):
    traj = read_trajectory(write(tmp_path, CSV))
    observed = make_pose(np.eye(3), [0.1, 0.0, 0.8])  # 0.1 m along camera x
    adapted = adapt_trajectory(traj, T_BASE_CAM, T_CAM_PART, observed)
    shift = T_BASE_CAM[:3, :3] @ [0.1, 0.0, 0.0]  # Rx(180) keeps x: (0.1, 0, 0)
    assert np.allclose(shift, [0.1, 0.0, 0.0])
    assert np.allclose(adapted.position_m - traj.position_m, shift, atol=1e-12)
    assert np.allclose(adapted.quat_xyzw, traj.quat_xyzw, atol=1e-12)
    # a camera turned 90 deg about base z: the same camera-x shift is a base-y shift
    T_base_cam = make_pose(rpy_deg_to_matrix(0, 0, 90), [0.0, 0.0, 1.0])
    adapted = adapt_trajectory(traj, T_base_cam, T_CAM_PART, observed)
    assert np.allclose(adapted.position_m - traj.position_m, [0.0, 0.1, 0.0], atol=1e-12)


def test_part_turned_about_camera_z_turns_waypoints_about_part_origin(tmp_path):
    traj = read_trajectory(write(tmp_path, CSV))
    # 90 deg about the camera z axis through the part's origin; camera z is base -z,
    # so in the base frame the waypoints turn -90 deg about z around (0.5, 0, 0.2)
    observed = make_pose(rpy_deg_to_matrix(0, 0, 90), [0.0, 0.0, 0.8])
    adapted = adapt_trajectory(traj, T_BASE_CAM, T_CAM_PART, observed)
    # (0.6, 0, 0.3): offset (0.1, 0, 0.1) -> (0, -0.1, 0.1)
    assert np.allclose(adapted.position_m[0], [0.5, -0.1, 0.3], atol=1e-12)
    # (0.5, 0.1, 0.25): offset (0, 0.1, 0.05) -> (0.1, 0, 0.05)
    assert np.allclose(adapted.position_m[1], [0.6, 0.0, 0.25], atol=1e-12)
    # identity orientation turns -90 deg about z; +90 deg about z turns back to identity
    assert np.allclose(adapted.quat_xyzw[0], [0, 0, -S, S], atol=1e-12)
    assert np.allclose(adapted.quat_xyzw[1], [0, 0, 0, 1], atol=1e-12)
    # row 3 was (0, 0, 0, -1): the result stays in its hemisphere, i.e. qw < 0
    assert np.allclose(adapted.quat_xyzw[2], [0, 0, S, -S], atol=1e-12)
    assert np.allclose(np.linalg.norm(adapted.quat_xyzw, axis=1), 1.0, atol=1e-12)
    assert part_displacement(T_CAM_PART, observed) == pytest.approx((0.0, 90.0))


def test_waypoints_keep_their_pose_relative_to_the_part(tmp_path):
    # independent check on a general case: inv(T_base_part) @ W is unchanged
    traj = read_trajectory(write(tmp_path, CSV))
    T_base_cam = make_pose(rpy_deg_to_matrix(170, 10, -35), [0.4, -0.2, 0.9])
    taught = make_pose(rpy_deg_to_matrix(20, -40, 75), [0.03, -0.02, 0.7])
    observed = make_pose(rpy_deg_to_matrix(-15, 25, 160), [-0.05, 0.04, 0.65])
    adapted = adapt_trajectory(traj, T_base_cam, taught, observed)
    before = np.linalg.inv(T_base_cam @ taught) @ traj.poses()
    after = np.linalg.inv(T_base_cam @ observed) @ adapted.poses()
    assert np.allclose(before, after, atol=1e-12)


def test_columns_found_by_name_in_any_order(tmp_path):
    shuffled = "qw,label,z,x,qz,y,qy,qx\n1,a,0.3,0.6,0,0,0,0\n" + f"{S},b,0.25,0.5,{S},0.1,0,0\n"
    traj = read_trajectory(write(tmp_path, shuffled))
    assert np.allclose(traj.position_m, [[0.6, 0, 0.3], [0.5, 0.1, 0.25]])
    assert np.allclose(traj.quat_xyzw, [[0, 0, 0, 1], [0, 0, S, S]])
    observed = make_pose(np.eye(3), [0.1, 0.0, 0.8])
    out = tmp_path / "out.csv"
    write_trajectory(adapt_trajectory(traj, T_BASE_CAM, T_CAM_PART, observed), out)
    lines = out.read_text().splitlines()
    assert lines[0] == "qw,label,z,x,qz,y,qy,qx"
    assert lines[1].split(",")[1] == "a" and float(lines[1].split(",")[3]) == pytest.approx(0.7)


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        ("x,y,qx,qy,qz,qw\n0,0,0,0,0,1\n", ["header", "missing column(s) z"]),
        ("x,y,z,qx,qy,qz,qw\n0,0,0,0,0,0,1\n0,0,0,0,0,0.5,1\n", ["row 2", "norm 1.11803"]),
        ("x,y,z,qx,qy,qz,qw\n0,0,0,0,0,0,1\n0,zero,0,0,0,0,1\n", ["row 2, y", "'zero'"]),
        ("x,y,z,qx,qy,qz,qw\n0,0,nan,0,0,0,1\n", ["row 1, z", "not finite"]),
        ("x,y,z,qx,qy,qz,qw\n0,0,0,0,0,1\n", ["row 1", "6 cells"]),
        ("x,y,z,qx,qy,qz,qw\n", ["no waypoints"]),
        ("", ["empty file"]),
    ],
)
def test_bad_trajectories_name_the_field_and_row(tmp_path, text, needles):
    path = write(tmp_path, text)
    with pytest.raises(InputError) as err:
        read_trajectory(path)
    message = str(err.value)
    assert message.startswith(str(path)) and "\n" not in message
    for needle in needles:
        assert needle in message, message


def record(status="tracking", score=0.9, T=None, frame=7):
    T = make_pose(np.eye(3), [0.1, 0.0, 0.8]) if T is None else T
    return json.dumps(
        {"frame": frame, "status": status, "score": score, "T_cam_part": T.tolist(), "ms": 4.2}
    )


def run_adapt(tmp_path, observed, *extra):
    traj = write(tmp_path, CSV)
    out = tmp_path / "adapted.csv"
    result = CliRunner().invoke(
        local_app(),
        ["adapt", str(traj), "--taught-pose", "0 0 0.8 0 0 0 1", "--observed", str(observed),
         "--camera-pose", "0.5 0 1 1 0 0 0", "--out", str(out), *extra],
    )  # fmt: skip
    return result, out


def test_lost_last_line_is_refused_with_exit_code_3_and_nothing_written(tmp_path):
    poses = write(tmp_path, record() + "\n" + record("lost", 0.1, frame=8) + "\n\n", "p.jsonl")
    with pytest.raises(AdaptRefused, match="status 'lost'"):
        observed_pose_from_jsonl(poses, 0.5)
    result, out = run_adapt(tmp_path, poses)
    assert result.exit_code == 3, result.output
    assert result.stderr.strip() == (
        f"refused: the last frame (8) of {poses} has status 'lost', not 'tracking'"
    )
    assert not out.exists()
    assert list(tmp_path.glob(".adapted*")) == []


def test_recovered_and_low_score_are_refused(tmp_path):
    poses = write(tmp_path, record("recovered", 0.95) + "\n", "p.jsonl")
    with pytest.raises(AdaptRefused, match="'recovered'"):
        observed_pose_from_jsonl(poses, 0.5)
    poses = write(tmp_path, record("tracking", 0.45) + "\n", "p.jsonl")
    with pytest.raises(AdaptRefused, match=r"score 0\.45, below the threshold 0\.5"):
        observed_pose_from_jsonl(poses, 0.5)
    result, out = run_adapt(tmp_path, poses)
    assert result.exit_code == 3 and "below the threshold" in result.stderr
    assert not out.exists()
    result, out = run_adapt(tmp_path, poses, "--min-score", "0.4")  # a lower bar accepts it
    assert result.exit_code == 0, result.output


def test_good_tracking_line_is_written(tmp_path):
    lost_then_found = record("lost", 0.0, frame=1) + "\n" + record() + "\n"
    poses = write(tmp_path, lost_then_found, "p.jsonl")
    T, rec = observed_pose_from_jsonl(poses, 0.5)
    assert rec.frame == 7 and np.allclose(T[:3, 3], [0.1, 0.0, 0.8])
    result, out = run_adapt(tmp_path, poses)
    assert result.exit_code == 0, result.output
    assert "adapted 3 waypoints" in result.stdout and "100.0 mm, 0.00 deg" in result.stdout
    adapted = read_trajectory(out)
    assert np.allclose(adapted.position_m[:, 0], [0.7, 0.6, 0.5], atol=1e-12)


def test_inline_observed_pose_and_rpy_degrees(tmp_path):
    result, out = run_adapt(tmp_path, "0 0 0.8 0 0 90", "--rpy-deg")
    assert result.exit_code == 0, result.output
    assert "0.0 mm, 90.00 deg" in result.stdout
    assert np.allclose(read_trajectory(out).position_m[0], [0.5, -0.1, 0.3], atol=1e-9)


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ('{"frame": 3, "status": "tracking", "score": 0.9, "T_cam_part": [[1, 0', "line 2"),
        ('{"frame": 3, "status": "tracked", "score": 0.9}', "line 2, status"),
        ('{"frame": 3, "status": "tracking", "score": "high"}', "line 2, score"),
        ('{"frame": 3, "status": "tracking", "score": 0.9}', "line 2, T_cam_part"),
        ('{"frame": 3, "status": "tracking", "score": 0.9, "T_cam_part": [[2, 0, 0, 0]]}',
         "line 2, T_cam_part"),
    ],
)  # fmt: skip
def test_malformed_jsonl_is_input_error_naming_the_line(tmp_path, line, needle):
    poses = write(tmp_path, record() + "\n" + line + "\n", "p.jsonl")
    with pytest.raises(InputError, match=needle):
        observed_pose_from_jsonl(poses, 0.5)
    result, out = run_adapt(tmp_path, poses)
    assert isinstance(result.exception, InputError) and not out.exists()


def test_empty_jsonl_is_input_error(tmp_path):
    with pytest.raises(InputError, match="empty"):
        observed_pose_from_jsonl(write(tmp_path, "\n", "p.jsonl"), 0.5)


def test_poses_in_millimetres_are_refused_with_exit_code_2_and_nothing_written(real_data, tmp_path):
    """The real sequence's first pose written in BOP's millimetres (0.5 m as 506) moved a
    waypoint 505 m with exit code 0: refused as millimetres, naming the option."""
    from bad_inputs import run_main

    entry = json.loads((real_data / "rgbd-visp-rbt" / "scene_gt.json").read_text())["0"][0]
    T_mm = make_pose(np.reshape(entry["cam_R_m2c"], (3, 3)), entry["cam_t_m2c"])
    taught_mm = write(tmp_path, "\n".join(" ".join(map(str, r)) for r in T_mm), "taught_mm.txt")
    traj, out = write(tmp_path, CSV), tmp_path / "adapted.csv"
    good = ["--observed", "0 0 0.8 0 0 0 1", "--camera-pose", "0.5 0 1 1 0 0 0"]
    result = run_main("adapt", traj, "--taught-pose", taught_mm, *good, "--out", out)
    assert result.code == 2 and not out.exists()
    assert result.stderr.startswith(f"error: {taught_mm}: --taught-pose:"), result.stderr
    assert "looks like millimetres" in result.stderr and len(result.stderr.splitlines()) == 1
    T_m = T_mm.copy()
    T_m[:3, 3] /= 1000
    poses = write(tmp_path, record(T=T_mm) + "\n", "p.jsonl")
    for option, value in (("--camera-pose", "500 0 1000 1 0 0 0"), ("--observed", poses)):
        argv = ["--taught-pose", " ".join(map(str, T_m.ravel())), *good, option, value]
        result = run_main("adapt", traj, *argv, "--out", out)
        assert result.code == 2 and "looks like millimetres" in result.stderr, result.stderr
        assert not out.exists()
