"""The detector's folder, detect_frame, and the detect train / run / finetune commands on a
tiny part and tiny images (the numbers learnt are not judged here: benchmarks/ does that)."""

import json
import re

import numpy as np
import pytest
import torch
import trimesh
import yaml
from cli_helpers import assert_one_line_error, run_cli
from detect.standin_frames import MESH, standin_sample

from sim2real.detect.decode import prepare_frame, scale_intrinsics
from sim2real.detect.detector import (
    Detector,
    DetectorFile,
    detect_frame,
    load_detector,
    mesh_hash,
    save_detector,
)
from sim2real.detect.keypoints import bbox_corners
from sim2real.detect.network import NetworkConfig, build_network

TINY = {
    "network": {"width": 4, "height_px": 48, "width_px": 64},
    "scene": {"textures": {"count": 10, "size_px": 8}},
    "optim": {"max_steps": 2, "batch_size": 2},
    "frames": 4,
    "val_frames": 2,
    "absent_frames": 3,
}


def tiny_detector(inp="rgbd") -> Detector:
    torch.manual_seed(0)
    cfg = NetworkConfig(input=inp, width=4, height_px=48, width_px=64)
    info = DetectorFile(
        network=cfg,
        model_name="box",
        model_path="box.ply",
        model_hash=mesh_hash(MESH),
        centre_part_m=MESH.centre_m.tolist(),
        keypoints_part_m=bbox_corners(MESH).tolist(),
        symmetries=[np.eye(4).tolist()],
    )
    net = build_network(cfg)
    with torch.no_grad():  # non-trivial BatchNorm statistics, so the round trip tests them
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
    return Detector(net.eval(), info)


def test_save_load_round_trip_gives_the_same_outputs(tmp_path):
    det = tiny_detector()
    det.info.settings.min_confidence = 0.0  # always "found", so every output is compared
    save_detector(det, tmp_path)
    back = load_detector(tmp_path)
    s = standin_sample(5)
    a = detect_frame(det, s.rgb, s.depth_m, s.K)
    b = detect_frame(back, s.rgb, s.depth_m, s.K)
    assert a.found and b.found
    assert a.confidence == pytest.approx(b.confidence, abs=1e-7)
    assert np.allclose(a.position_m, b.position_m, atol=1e-7)
    assert np.allclose(a.keypoints_px, b.keypoints_px, atol=1e-5)


def test_another_image_size_is_letterboxed_with_the_intrinsics_scaled():
    cfg = NetworkConfig(height_px=48, width_px=64)
    K = np.array([[100.0, 0, 63.5], [0, 100.0, 35.5], [0, 0, 1]])
    rgb = np.zeros((72, 128, 3), np.uint8)  # 16:9 -> scale 0.5, 6 rows of padding on top
    f = prepare_frame(rgb, np.ones((72, 128), np.float32), K, cfg)
    assert f.rgb.shape == (48, 64, 3) and f.scale == (0.5, 0, 6)
    assert np.allclose(f.K, [[50, 0, 31.5], [0, 50, 23.5], [0, 0, 1]])
    assert f.depth_m[:6].max() == 0 and f.depth_m[6:42].min() == 1.0
    # a point's pixel scales with the intrinsics: u' = (u + 0.5) s - 0.5 + ox
    p = np.array([0.1, -0.05, 1.0])
    uv = (K @ p)[:2] / p[2]
    uv2 = (f.K @ p)[:2] / p[2]
    assert np.allclose(uv2, (uv + 0.5) * 0.5 - 0.5 + [0, 6])
    assert np.allclose(scale_intrinsics(K, 1.0), K)


def test_detection_json_fields():
    det = tiny_detector()
    det.info.settings.min_confidence = 0.0
    s = standin_sample(1)
    rec = detect_frame(det, s.rgb, s.depth_m, s.K).to_json(7)
    assert set(rec) >= {"frame", "found", "confidence", "position_m"}
    assert rec["frame"] == 7 and rec["found"] is True and len(rec["position_m"]) == 3
    det.info.settings.min_confidence = 1.0  # nothing reaches it: not found, no position
    rec = detect_frame(det, s.rgb, None, s.K).to_json(8)
    assert rec["found"] is False and rec["position_m"] is None and "T_cam_part" not in rec


@pytest.fixture(scope="module")
def cli_setup(tmp_path_factory):
    """A tiny part, a tiny DET trained by the command, and a tiny BOP sequence of it."""
    from sim2real.detect.dataset import generate_dataset
    from sim2real.detect.scene_config import SceneConfig

    root = tmp_path_factory.mktemp("detect_cli")
    part = root / "box.ply"
    trimesh.creation.box(extents=[0.06, 0.04, 0.03]).export(part)
    (root / "tiny.yaml").write_text(yaml.safe_dump(TINY))
    proc = run_cli("detect", "train", part, "--out", root / "DET", "--config", root / "tiny.yaml",
                   "--quiet")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert re.search(
        r"; 3 frames without the part: found in \d+ % \(found is a peak to check, not a "
        r"presence test: docs/detect.md\)$",
        proc.stdout.strip(),
    )
    scene = SceneConfig.model_validate({**TINY["scene"], "width_px": 64, "height_px": 48})
    generate_dataset(part, root / "seq", 3, seed=5, config=scene)
    return root


@pytest.mark.slow
def test_train_writes_the_detector_folder_and_run_writes_one_line_per_frame(cli_setup):
    root = cli_setup
    det = root / "DET"
    for name in ("weights.pt", "detector.yaml", "config.yaml", "train_log.jsonl"):
        assert (det / name).is_file(), name
    assert (det / "report" / "index.html").is_file() and (det / "report" / "samples.png").is_file()
    assert "found in frames without the part" in (det / "report" / "index.html").read_text()
    assert 0.0 <= yaml.safe_load((det / "detector.yaml").read_text())["absent_found"] <= 1.0
    cfg = yaml.safe_load((det / "config.yaml").read_text())
    assert cfg["frames"] == 4 and cfg["optim"]["max_steps"] == 2  # the resolved config
    out = root / "detections.jsonl"
    proc = run_cli("detect", "run", det, "--frames", root / "seq", "--out", out)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["frame"] for r in lines] == [0, 1, 2]
    for r in lines:
        assert {"frame", "found", "confidence", "position_m"} <= set(r)
        assert (r["position_m"] is None) == (not r["found"])
    # --min-confidence moves the level that calls the part found: 0 always, 1 never
    for level, found in ((0.0, [True] * 3), (1.0, [False] * 3)):
        proc = run_cli("detect", "run", det, "--frames", root / "seq", "--out", out,
                       "--min-confidence", level)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert [json.loads(x)["found"] for x in out.read_text().splitlines()] == found
        # piped: the frames' progress, its last state on stderr
        outcome = "found 3" if level == 0.0 else "not found 3"
        assert proc.stderr.strip().splitlines()[-1].startswith("frames 3/3 "), proc.stderr
        assert proc.stderr.strip().endswith(outcome), proc.stderr


@pytest.mark.slow
def test_bad_inputs_are_one_line_errors_and_write_nothing(cli_setup, tmp_path):
    root = cli_setup
    det = root / "DET"
    # a detector run on a part it was not trained for
    other = tmp_path / "other.ply"
    trimesh.creation.icosphere(radius=0.03).export(other)
    out = tmp_path / "d.jsonl"
    proc = run_cli("detect", "run", det, "--frames", root / "seq", "--out", out, "--model", other)
    assert_one_line_error(proc, "other.ply", "model", "another part")
    assert not out.exists()
    # a labels file whose frame ids are not in the frames
    labels = tmp_path / "scene_gt.json"
    gt = json.loads((root / "seq" / "scene_gt.json").read_text())
    labels.write_text(json.dumps({str(int(k) + 100): v for k, v in gt.items()}))
    out2 = tmp_path / "DET2"
    proc = run_cli("detect", "finetune", det, "--frames", root / "seq", "--labels", labels,
                   "--out", out2, "--k", "1")  # fmt: skip
    assert_one_line_error(proc, "scene_gt.json", "frame ids", "not in the frames")
    assert not out2.exists()
    # labels of another object than the part, a frame without labels, a --model of another part
    for doc, extra, needles in (
        ({k: [{**e, "obj_id": 2} for e in v] for k, v in gt.items()}, (), ("obj_id", "object 2")),
        ({**gt, "0": []}, (), ("0: frame 0 has no labels at all",)),
        (gt, ("--model", other), ("other.ply", "model", "another part")),
    ):
        labels.write_text(json.dumps(doc))
        proc = run_cli("detect", "finetune", det, "--frames", root / "seq", "--labels", labels,
                       "--out", out2, "--k", "1", *extra)  # fmt: skip
        assert_one_line_error(proc, *needles)
        assert not out2.exists()
    # a detector folder without its weights
    broken = tmp_path / "DET_broken"
    broken.mkdir()
    (broken / "detector.yaml").write_text((det / "detector.yaml").read_text())
    proc = run_cli("detect", "run", broken, "--frames", root / "seq", "--out", out)
    assert_one_line_error(proc, "weights.pt", "no weights")
    assert not out.exists()


def first_camera(seq):
    """K of a generated sequence's first frame, and its fields for a camera.json."""
    K = np.array(json.loads((seq / "scene_camera.json").read_text())["0"]["cam_K"]).reshape(3, 3)
    return K, {"fx": K[0, 0], "fy": K[1, 1], "cx": K[0, 2], "cy": K[1, 2]}


@pytest.mark.slow
def test_run_on_colour_images_alone_with_their_camera(cli_setup, tmp_path):
    """A colour camera without depth: --color and --camera, no --frames; each line is what
    detect_frame gives for that image without depth."""
    from sim2real.core.image_io import read_rgb

    root = cli_setup
    K, fields = first_camera(root / "seq")
    cam = tmp_path / "camera.json"
    cam.write_text(json.dumps({**fields, "width": 64, "height": 48, "depth_scale": 0.001}))
    out = tmp_path / "d.jsonl"
    proc = run_cli("detect", "run", root / "DET", "--color", root / "seq" / "rgb",
                   "--camera", cam, "--out", out, "--quiet")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # --quiet: no progress
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["frame"] for r in lines] == [0, 1, 2]
    det = load_detector(root / "DET")
    for r in lines:
        rgb = read_rgb(root / "seq" / "rgb" / f"{r['frame']:06d}.png")
        expected = detect_frame(det, rgb, None, K).to_json(r["frame"])
        assert r["found"] == expected["found"]
        assert r["confidence"] == pytest.approx(expected["confidence"], abs=1e-4)
    # bad inputs: nothing to run on; colour without its camera; a camera of another size
    for args, needle in (
        ((), "--frames"),
        (("--color", root / "seq" / "rgb"), "--camera"),
    ):
        proc = run_cli("detect", "run", root / "DET", *args, "--out", tmp_path / "x.jsonl")
        assert_one_line_error(proc, needle)
    cam.write_text(json.dumps({**fields, "width": 640, "height": 480, "depth_scale": 0.001}))
    proc = run_cli("detect", "run", root / "DET", "--color", root / "seq" / "rgb",
                   "--camera", cam, "--out", tmp_path / "x.jsonl")  # fmt: skip
    assert_one_line_error(proc, "000000.png", "size", "640x480")
    assert not (tmp_path / "x.jsonl").exists()


@pytest.mark.slow
def test_finetune_on_colour_images_alone(cli_setup, tmp_path):
    """detect finetune takes the frames as detect run does: colour images and their camera."""
    root = cli_setup
    _, fields = first_camera(root / "seq")
    cam = tmp_path / "camera.json"
    cam.write_text(json.dumps({**fields, "width": 64, "height": 48, "depth_scale": 0.001}))
    labels = root / "seq" / "scene_gt.json"
    out = tmp_path / "DET2"
    proc = run_cli("detect", "finetune", root / "DET", "--color", root / "seq" / "rgb",
                   "--camera", cam, "--labels", labels, "--k", "1", "--minutes", "0.01",
                   "--out", out)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (out / "weights.pt").is_file() and "real held-out" in proc.stdout
    # piped: each stage's line as it ends on stderr (measuring ends after the fine-tuning)
    lines = proc.stderr.strip().splitlines()
    assert [line.split()[:2] for line in lines] == [
        ["render", "100%"], ["fine-tune", "100%"], ["measure", "100%"]
    ], lines  # fmt: skip
    # labels for frames that are not among the colour images
    shifted = tmp_path / "scene_gt.json"
    gt = json.loads(labels.read_text())
    shifted.write_text(json.dumps({str(int(k) + 100): v for k, v in gt.items()}))
    proc = run_cli("detect", "finetune", root / "DET", "--color", root / "seq" / "rgb",
                   "--camera", cam, "--labels", shifted, "--k", "1", "--out", tmp_path / "D3")  # fmt: skip
    assert_one_line_error(proc, "scene_gt.json", "frame ids", "not in the frames")
    assert not (tmp_path / "D3").exists()


def test_run_on_a_bop_folder_of_several_objects_scores_the_one_of_obj_id(real_data, tmp_path):
    """detect run scores its detections against the folder's scene_gt.json: with two objects
    in each frame it asks which one is the part (--obj-id) rather than take the first."""
    from bad_inputs import run_main
    from visp_bop import visp_bop_scene

    def with_a_neighbour(entries, i):  # object 2 listed first, 20 cm beside the cube
        return [{**entries[0], "obj_id": 2, "cam_t_m2c": [200.0, 0.0, 600.0]}, *entries]

    seq = visp_bop_scene(real_data, tmp_path / "s", n=1, gt_entries=with_a_neighbour)
    (tmp_path / "DET").mkdir()
    save_detector(tiny_detector(), tmp_path / "DET")
    out = tmp_path / "d.jsonl"
    result = run_main("detect", "run", tmp_path / "DET", "--frames", seq, "--out", out)
    assert result.code == 2 and not out.exists()
    assert "2 objects per frame (ids 1, 2): pass --obj-id" in result.stderr
    result = run_main("detect", "run", tmp_path / "DET", "--frames", seq, "--out", out,
                      "--obj-id", "1")  # fmt: skip
    assert result.code == 0, result.stderr
    assert [json.loads(line)["frame"] for line in out.read_text().splitlines()] == [0]
