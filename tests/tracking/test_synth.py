"""Synthetic sequences: written and read back exactly, the motions do what they promise, and
the `track synth` / `track eval` commands."""

import json

import numpy as np
import pytest
import trimesh
from typer.testing import CliRunner

from sim2real.cli.track import app
from sim2real.core.camera import CameraIntrinsics
from sim2real.core.errors import InputError
from sim2real.sensors.presets import get_preset
from sim2real.tracking.sequence import load_sequence
from sim2real.tracking.synth import synthesize_sequence

CAMERA = CameraIntrinsics.from_hfov(320, 240, 70.0, depth_scale=0.001)


def synth(part, motion, frames, profile=None, seed=0):
    return synthesize_sequence(
        part, motion=motion, frames=frames, seed=seed, profile=profile, camera=CAMERA
    )


def test_smooth_sequence_writes_and_reads_back(part, tmp_path):
    d435 = get_preset("realsense-d435").profile
    seq = synth(part, "smooth", 10, d435)
    assert len(seq) == 10 and seq.T_cam_part.shape == (10, 4, 4)
    assert np.all(seq.visible > 0.95) and seq.status_gt == ["tracking"] * 10
    assert 0.005 < seq.peak_speed_m_s < 0.08 and 5 < seq.peak_turn_deg_s < 30
    part_px = [np.sum(d > 0) for d in seq.depth_m]
    assert min(part_px) > 1000  # the scene (table, part, boxes) fills the view
    seq.write(tmp_path)
    back = load_sequence(tmp_path)
    assert back.frame_ids == list(range(10))
    for i in range(10):
        assert np.allclose(back.gt[i], seq.T_cam_part[i], atol=1e-6)
        # 0.1 mm BOP units: half a unit of rounding (the D435 output is in whole mm anyway)
        assert np.abs(back.read(i) - seq.depth_m[i]).max() <= 0.05e-3 + 1e-6
    assert back.visible == pytest.approx(dict(enumerate(seq.visible.tolist())))
    info = json.loads((tmp_path / "synth.json").read_text())
    assert info["motion"] == "smooth" and info["profile"] == "realsense-d435"


def test_a_small_part_stands_where_a_kinect_returns_its_depth(part):
    # at the 0.4 m floor the part would be inside the Kinect's 0.5 m minimum range: no depth
    seq = synth(part, "smooth", 3, get_preset("kinect-v1").profile)
    assert seq.distance_m > 0.5 + 0.03
    assert seq.median_returns > 0.8 and np.all(seq.visible > 0.95)


def test_cli_warns_when_the_part_returns_no_depth(part_file, tmp_path):
    from sim2real.sensors.profile import save_profile

    kinect = get_preset("kinect-v1").profile
    near_only = kinect.range.model_copy(update={"min_m": 0.1, "max_m": 0.3})  # the part: none
    save_profile(kinect.model_copy(update={"range": near_only}), tmp_path / "far.yaml")
    args = ["synth", str(part_file), "--out", str(tmp_path / "seq"), "--frames", "2"]
    args += ["--sensor", "kinect-v1", "--profile", str(tmp_path / "far.yaml"), "--mesh-unit", "m"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "returns depth on only 0% of the part's visible pixels" in result.output


def test_same_seed_same_sequence(part):
    a, b = synth(part, "smooth", 2, seed=4), synth(part, "smooth", 2, seed=4)
    assert np.array_equal(a.T_cam_part, b.T_cam_part)
    assert np.array_equal(a.depth_m[1], b.depth_m[1])


def test_leave_view_has_frames_where_nothing_of_the_part_is_seen(part):
    seq = synth(part, "leave-view", 24)
    assert seq.visible[0] > 0.9 and seq.visible[-1] > 0.9
    gone = np.flatnonzero(seq.visible == 0)
    assert len(gone) >= 4 and "lost" in seq.status_gt
    assert np.all(np.diff(gone) == 1)  # one stretch out of view
    # it comes back elsewhere: the first and last positions in the image differ
    first, last = seq.T_cam_part[0][:3, 3], seq.T_cam_part[-1][:3, 3]
    assert abs(first[0] / first[2] - last[0] / last[2]) > 0.1


def test_occluder_hides_at_least_30_percent_and_at_most_half(part):
    seq = synth(part, "occluded", 12)
    hidden = 1 - seq.visible
    assert hidden.max() >= 0.30
    assert hidden.max() <= 0.50
    assert hidden[0] < 0.05  # it starts beside the part


def test_fast_motion_peaks_near_one_metre_and_180_degrees_per_second(part):
    seq = synth(part, "fast", 40)
    assert 0.5 < seq.peak_speed_m_s <= 1.0 + 1e-6
    assert 120 < seq.peak_turn_deg_s <= 180.5
    assert np.all(seq.visible > 0.5)  # it stays in view


def test_bad_motion_and_frame_count(part):
    with pytest.raises(InputError) as err:
        synth(part, "wobble", 3)
    assert err.value.field == "--motion"
    with pytest.raises(InputError, match="leave-view needs"):
        synth(part, "leave-view", 6)


@pytest.fixture(scope="module")
def part_file(part, tmp_path_factory):
    path = tmp_path_factory.mktemp("mesh") / "ell.obj"
    trimesh.Trimesh(part.vertices, part.faces).export(path)
    return path


def test_cli_synth_then_eval_of_the_ground_truth_itself(part_file, tmp_path):
    from sim2real.core.camera_io import save_camera

    save_camera(CAMERA, tmp_path / "cam.json")
    out = tmp_path / "seq"
    runner = CliRunner()
    args = [
        "synth",
        str(part_file),
        "--out",
        str(out),
        "--camera",
        str(tmp_path / "cam.json"),
        "--motion",
        "occluded",
        "--frames",
        "6",
        "--mesh-unit",
        "m",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "6 frames of 'occluded'" in result.output
    assert (out / "visible.json").is_file() and (out / "depth" / "000005.png").is_file()
    again = runner.invoke(app, args)
    assert isinstance(again.exception, InputError) and "--overwrite" in str(again.exception)
    assert runner.invoke(app, [*args[:-4], "--frames", "4", "--overwrite"]).exit_code == 0
    assert not (out / "depth" / "000005.png").exists()  # no stale frames left behind

    gt = json.loads((out / "scene_gt.json").read_text())
    lines = []
    for frame, entries in gt.items():
        T = np.eye(4)
        T[:3, :3] = np.reshape(entries[0]["cam_R_m2c"], (3, 3))
        T[:3, 3] = np.array(entries[0]["cam_t_m2c"]) / 1000
        lines.append(
            {
                "frame": int(frame),
                "status": "tracking",
                "score": 1.0,
                "T_cam_part": T.tolist(),
                "ms": 1.0,
            }
        )
    poses = tmp_path / "poses.jsonl"
    poses.write_text("".join(json.dumps(r) + "\n" for r in lines))
    result = runner.invoke(
        app,
        [
            "eval",
            str(poses),
            "--gt",
            str(out / "scene_gt.json"),
            "--mesh",
            str(part_file),
            "--out",
            str(tmp_path / "eval.json"),
        ],
    )
    assert result.exit_code == 0, result.output
    ev = json.loads((tmp_path / "eval.json").read_text())
    assert ev["recall_at_10"] == 1.0 and ev["tracking_precision"] == 1.0
    assert ev["median_adds_mm"] < 1e-6
    assert ev["lost_latency_frames"] == []  # visible.json was found beside scene_gt.json
    bad = runner.invoke(
        app, ["eval", str(poses), "--gt", str(out), "--mesh", str(part_file), "--symmetry", "axis:"]
    )
    assert isinstance(bad.exception, InputError) and bad.exception.field == "--symmetry"
    for line in lines:  # the same poses written in millimetres: was scored, ADD 400 m
        line["T_cam_part"] = [[*row[:3], 1000 * row[3]] for row in line["T_cam_part"][:3]] + [
            line["T_cam_part"][3]
        ]
    poses.write_text("".join(json.dumps(r) + "\n" for r in lines))
    bad = runner.invoke(app, ["eval", str(poses), "--gt", str(out), "--mesh", str(part_file)])
    assert isinstance(bad.exception, InputError) and bad.exception.field == "T_cam_part"
    assert "millimetres" in str(bad.exception)
