"""`sim2real model tune` on the real M3T frame: the dark triangle returns depth on few of its
pixels; the tuned model must predict that far better, and the tracker must pick it up."""

import numpy as np
import pytest
import yaml
from cli_helpers import run_cli

from sim2real.models.demo_tune import m3t_reference


@pytest.mark.slow
def test_tune_the_m3t_triangle_with_its_real_frame(real_data, tmp_path):
    folder = real_data / "depth-m3t"
    _, _, _, T = m3t_reference(folder)
    pose = tmp_path / "T_cam_part.txt"
    pose.write_text("\n".join(" ".join(f"{v:.9f}" for v in row) for row in T))
    model = tmp_path / "triangle"
    proc = run_cli(
        "model", "prepare", folder / "triangle.obj", "--out", model, "--unit", "m",
        "--views", "100", "--no-report",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    proc = run_cli(
        "model", "tune", model, "--frames", folder / "depth_camera_image_200.png",
        "--camera", folder / "depth_camera.yaml", "--poses", pose, "--report", tmp_path / "rep",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    summary = yaml.safe_load((model / "tuning.yaml").read_text())
    agreement = summary["valid_pixel_agreement"]
    # without tuning the simulation returns depth on the whole part, the real sensor on ~10 %
    assert agreement["untuned"] < 0.3 and agreement["tuned"] > 0.75, agreement
    assert summary["per_frame"][0]["return_rate"] < 0.3
    assert (tmp_path / "rep" / "tuned_model.png").is_file()
    assert (model / "returns.npz").is_file()
    # the renderer and the tracker pick the tuning up from the MODEL_DIR: rendered from it, the
    # dark part returns on a fraction of the pixels its bare mesh (same geometry) returns on
    valid = {}
    for name, part in (("tuned", model), ("bare", model / "mesh.ply")):
        proc = run_cli(
            "depth", "render", part, "--pose", pose, "--camera", folder / "depth_camera.yaml",
            "--sensor", "realsense-d435", "--mesh-unit", "m", "--out", tmp_path / f"{name}.npy",
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        valid[name] = int((np.load(tmp_path / f"{name}.npy") > 0).sum())
    assert valid["bare"] > 500 and valid["tuned"] < 0.5 * valid["bare"], valid
    proc = run_cli(
        "track", "run", model, "--frames", folder / "depth_camera_image_200.png",
        "--camera", folder / "depth_camera.yaml", "--init", pose, "--out", tmp_path / "p.jsonl",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "using the tuned surface returns" in proc.stdout


def test_tune_refuses_a_mesh_file_and_mismatched_poses(real_data, tmp_path):
    folder = real_data / "depth-m3t"
    proc = run_cli(
        "model", "tune", folder / "triangle.obj", "--frames", folder / "depth_camera_image_200.png",
        "--camera", folder / "depth_camera.yaml", "--poses", "0 0 0.6 0 0 0 1",
    )  # fmt: skip
    assert proc.returncode == 2 and "not a prepared model" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    model = tmp_path / "m"
    model.mkdir()
    (model / "model.yaml").write_text("name: x\n")
    proc = run_cli(
        "model", "tune", model, "--frames", folder / "depth_camera_image_200.png",
        "--camera", folder / "depth_camera.yaml", "--poses", "-0.1 0 0.6 0 0 0 1", "0 0 0.6 0 0 0 1",
    )  # fmt: skip
    assert proc.returncode == 2 and "1 frames but 2 poses" in proc.stderr, proc.stderr
    assert not (model / "returns.npz").exists()
    assert np.all([not p.name.startswith(".") for p in model.iterdir()])


def test_tune_reads_frames_in_another_unit_with_depth_scale(real_data, tmp_path):
    """A D405 / L515 style frame (0.25 mm units) and a camera file without a scale: read as
    millimetres the part was 4x too far and every pixel 'returned nothing' (a probe)."""
    from PIL import Image

    folder = real_data / "depth-m3t"
    _, _, _, T = m3t_reference(folder)
    pose = tmp_path / "T_cam_part.txt"
    pose.write_text("\n".join(" ".join(f"{v:.9f}" for v in row) for row in T))
    mm = np.asarray(Image.open(folder / "depth_camera_image_200.png")).astype(np.int64)
    frame = tmp_path / "quarter_mm.png"
    Image.fromarray(np.clip(mm * 4, 0, 65535).astype(np.uint16)).save(frame)
    model = tmp_path / "triangle"
    proc = run_cli("model", "prepare", folder / "triangle.obj", "--out", model, "--unit", "m",
                   "--views", "60", "--no-report")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rates = {}
    for extra in ((), ("--depth-scale", "0.00025")):
        proc = run_cli("model", "tune", model, "--frames", frame, "--camera",
                       folder / "depth_camera.yaml", "--poses", pose, *extra)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        rates[extra] = yaml.safe_load((model / "tuning.yaml").read_text())["per_frame"][0]
    assert rates[()]["return_rate"] == 0  # millimetres: nothing where the part is
    assert rates[("--depth-scale", "0.00025")]["return_rate"] > 0.05
