"""`track run --init detect:DET` as a user runs it: a detector of `detect train` starts the
tracker (and proposes poses whenever it is lost); a detector of another part, or frames without
colour, are one-line errors with nothing written."""

import json

import numpy as np
import trimesh
from cli_helpers import assert_one_line_error, run_cli
from detect.standin_frames import BOX
from detect.test_detector import tiny_detector

from sim2real.detect.dataset import generate_dataset
from sim2real.detect.detector import save_detector
from sim2real.detect.scene_config import SceneConfig


def _setup(tmp_path):
    mesh = tmp_path / "box.ply"
    BOX.export(mesh)
    det = tmp_path / "det"
    det.mkdir()
    save_detector(tiny_detector(), det)
    cfg = SceneConfig(width_px=64, height_px=48).model_copy(deep=True)
    cfg.textures.count = 10
    cfg.camera.focal_rel, cfg.camera.principal_px = (1.0, 1.0), (0.0, 0.0)  # one camera: tracked
    seq = tmp_path / "seq"
    generate_dataset(mesh, seq, 2, seed=0, config=cfg)
    return mesh, det, seq


def test_a_detector_starts_the_tracker_and_bad_inputs_are_one_line(tmp_path):
    mesh, det, seq = _setup(tmp_path)
    out = tmp_path / "poses.jsonl"
    proc = run_cli("track", "run", mesh, "--frames", seq, "--init", f"detect:{det}", "--out", out)
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["frame"] for r in records] == [0, 1]
    assert all(r["status"] in ("tracking", "recovered", "lost") for r in records)

    other = tmp_path / "ball.ply"
    trimesh.creation.icosphere(radius=0.03).export(other)
    bad_out = tmp_path / "bad.jsonl"
    proc = run_cli(
        "track", "run", other, "--frames", seq, "--init", f"detect:{det}", "--out", bad_out
    )
    assert_one_line_error(proc, "another part")
    assert not bad_out.exists()

    depth_only = tmp_path / "depth_only"
    depth_only.mkdir()
    for name in ("depth", "scene_camera.json", "scene_gt.json"):
        src = seq / name
        (depth_only / name).symlink_to(src, target_is_directory=src.is_dir())
    proc = run_cli(
        "track", "run", mesh, "--frames", depth_only, "--init", f"detect:{det}", "--out", bad_out
    )
    assert_one_line_error(proc, "needs colour frames")
    assert not bad_out.exists()
    assert np.isfinite([r["score"] for r in records]).all()
