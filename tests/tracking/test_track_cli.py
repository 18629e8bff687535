"""`track synth` -> `track run` -> `track eval` -> `adapt`, as a user chains them."""

import json

import numpy as np
import pytest
import trimesh
from cli_helpers import figures_drawn, run_cli

from sim2real.sensors.demo_part import machined_bracket

pytestmark = pytest.mark.slow


def test_synth_run_eval_adapt(figure_log, tmp_path):
    part = machined_bracket()
    mesh = tmp_path / "bracket.stl"
    trimesh.Trimesh(part.vertices, part.faces).export(mesh)
    seq = tmp_path / "seq"
    proc = run_cli(
        "track",
        "synth",
        mesh,
        "--mesh-unit",
        "m",
        "--out",
        seq,
        "--sensor",
        "realsense-d435",
        "--motion",
        "smooth",
        "--frames",
        30,
    )
    assert proc.returncode == 0, proc.stderr
    gt0 = json.loads((seq / "scene_gt.json").read_text())["0"][0]
    T0 = np.eye(4)
    T0[:3, :3] = np.reshape(gt0["cam_R_m2c"], (3, 3))
    T0[:3, 3] = np.asarray(gt0["cam_t_m2c"]) / 1000
    poses = tmp_path / "poses.jsonl"
    proc = run_cli(
        "track",
        "run",
        mesh,
        "--mesh-unit",
        "m",
        "--frames",
        seq,
        "--init",
        " ".join(map(str, T0.ravel())),
        "--out",
        poses,
        "--report",
        tmp_path / "report",
    )
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in poses.read_text().splitlines()]
    assert len(records) == 30 and all(r["status"] == "tracking" for r in records)
    # piped: the frames' progress as a line on stderr, its last state at the end
    assert proc.stderr.strip().splitlines()[-1].startswith("frames 30/30 "), proc.stderr
    assert proc.stderr.strip().endswith("tracking 30"), proc.stderr
    # what the report draws: the score of every frame, and (ground truth known) its ADD
    drawn = figures_drawn(figure_log)
    score, error = drawn["track.png"]["axes"]
    assert score["ylabel"] == "score" and score["lines"][0]["n"] == 30
    assert min(r["score"] for r in records) == pytest.approx(score["lines"][0]["ymin"])
    assert error["ylabel"] == "error [mm]"
    add = next(line for line in error["lines"] if line["label"] == "ADD")
    assert add["n"] == 30 and add["ymax"] < 0.1 * 1000 * 0.15  # under 10 % of the diameter
    overlays = drawn["overlays.png"]["axes"]
    assert len(overlays) == 4 and all(ax["images"] == 1 for ax in overlays)
    proc = run_cli(
        "track",
        "eval",
        poses,
        "--gt",
        seq / "scene_gt.json",
        "--mesh",
        mesh,
        "--mesh-unit",
        "m",
        "--out",
        tmp_path / "eval.json",
    )
    assert proc.returncode == 0, proc.stderr
    evaluation = json.loads((tmp_path / "eval.json").read_text())
    assert (
        evaluation["recall_at_10"] == 1.0
    )  # smooth motion: every frame within 10 % of the diameter
    assert evaluation["tracking_precision"] == 1.0
    # adapt a taught trajectory to where the part is in the last frame
    traj = tmp_path / "traj.csv"
    traj.write_text("x,y,z,qx,qy,qz,qw,speed\n0.5,0.0,0.3,0,0,0,1,0.1\n0.5,0.1,0.3,0,0,0,1,0.2\n")
    proc = run_cli(
        "adapt",
        traj,
        "--taught-pose",
        " ".join(map(str, T0.ravel())),
        "--observed",
        poses,
        "--camera-pose",
        "0 0 1 1 0 0 0",
        "--out",
        tmp_path / "adapted.csv",
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "adapted.csv").read_text().splitlines()[0] == "x,y,z,qx,qy,qz,qw,speed"


def test_adapt_refuses_a_lost_track(tmp_path):
    poses = tmp_path / "poses.jsonl"
    poses.write_text(
        json.dumps(
            {
                "frame": 0,
                "status": "lost",
                "score": 0.1,
                "T_cam_part": np.eye(4).tolist(),
                "ms": 3.0,
            }
        )
        + "\n"
    )
    traj = tmp_path / "traj.csv"
    traj.write_text("x,y,z,qx,qy,qz,qw\n0.5,0.0,0.3,0,0,0,1\n")
    proc = run_cli(
        "adapt",
        traj,
        "--taught-pose",
        "0 0 0.5 0 0 0 1",
        "--observed",
        poses,
        "--camera-pose",
        "0 0 1 1 0 0 0",
        "--out",
        tmp_path / "a.csv",
    )
    assert proc.returncode == 3 and "refused" in proc.stderr
    assert not (tmp_path / "a.csv").exists()


def test_run_rejects_an_init_behind_the_camera_and_missing_frames(tmp_path):
    part = machined_bracket()
    mesh = tmp_path / "bracket.stl"
    trimesh.Trimesh(part.vertices, part.faces).export(mesh)
    seq = tmp_path / "seq"
    assert (
        run_cli(
            "track",
            "synth",
            mesh,
            "--mesh-unit",
            "m",
            "--out",
            seq,
            "--motion",
            "smooth",
            "--frames",
            12,
        ).returncode
        == 0
    )
    proc = run_cli(
        "track",
        "run",
        mesh,
        "--mesh-unit",
        "m",
        "--frames",
        seq,
        "--init",
        "0 0 -0.5 0 0 0 1",
        "--out",
        tmp_path / "p.jsonl",
    )
    assert proc.returncode == 2 and "behind the camera" in proc.stderr
    (seq / "depth" / "000003.png").unlink()  # a missing frame number: warned, the rest tracked
    proc = run_cli(
        "track",
        "run",
        mesh,
        "--mesh-unit",
        "m",
        "--frames",
        seq,
        "--init",
        "auto",
        "--out",
        tmp_path / "p.jsonl",
    )
    assert proc.returncode == 0, proc.stderr
    assert "missing frame" in proc.stderr
    assert len((tmp_path / "p.jsonl").read_text().splitlines()) == 11
    # tracker settings from a YAML: a misspelt field is named with its close match, nothing
    # written; a valid one is accepted and every frame tracked
    settings = tmp_path / "tracker.yaml"
    settings.write_text("depth_outlin: false\n")
    args = ["track", "run", mesh, "--mesh-unit", "m", "--frames", seq, "--init", "auto"]
    proc = run_cli(*args, "--out", tmp_path / "q.jsonl", "--settings", settings)
    assert proc.returncode == 2 and "did you mean 'depth_outline'" in proc.stderr
    assert "tracker.yaml" in proc.stderr and not (tmp_path / "q.jsonl").exists()
    settings.write_text("depth_outline: false\nviews: 100\n")
    proc = run_cli(*args, "--out", tmp_path / "q.jsonl", "--settings", settings)
    assert proc.returncode == 0, proc.stderr
    assert len((tmp_path / "q.jsonl").read_text().splitlines()) == 11
