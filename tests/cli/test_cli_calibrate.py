"""`depth calibrate` and `depth gap` as a user runs them, on real frames and on bad input."""

import json

import numpy as np
import pytest
from cli_helpers import assert_one_line_error, run_cli

from sim2real.sensors.profile import load_profile

pytestmark = pytest.mark.slow


def one_line_error(proc, *needles):
    return assert_one_line_error(proc, *needles, warnings_ok=True)  # calibration may warn


def test_calibrate_then_gap_on_the_pcl_frames(real_data, tmp_path):
    grabber = real_data / "depth-pcl" / "grabber"
    camera = grabber / "frame_0_camera.xml"
    profile = tmp_path / "pcl.yaml"
    proc = run_cli(
        "depth", "calibrate", "--frames", grabber / "frame_0_depth.tiff", "--camera", camera,
        "--out", profile, "--report", tmp_path / "report",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "disparity.step_px" in proc.stdout and "fitted" in proc.stdout
    calibrated = load_profile(profile)  # loadable by `depth render --profile`
    assert calibrated.calibration["axial.a_m"].pixels > 10_000
    for image in (
        "noise_curves.png",
        "dropout_curves.png",
        "residuals.png",
        "frame_0_reference.png",
        "index.html",
    ):
        assert (tmp_path / "report" / image).stat().st_size > 1000, image
    gap_json = tmp_path / "gap.json"
    proc = run_cli(
        "depth", "gap", "--frames", grabber / "frame_1_depth.tiff", "--camera", camera,
        "--profile", "ideal", "--profile", "kinect-v1", "--profile", profile, "--seeds", 1, "--out", gap_json,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    metrics = json.loads(gap_json.read_text())["profiles"]
    assert set(metrics) == {"ideal", "kinect-v1", "pcl"}
    assert metrics["pcl"]["metrics"]["w1_mm"] < metrics["ideal"]["metrics"]["w1_mm"]
    # the rendered profile works in the renderer too
    render = run_cli(
        "depth",
        "render",
        "--scene",
        _box_scene(tmp_path),
        "--camera",
        camera,
        "--profile",
        profile,
        "--out",
        tmp_path / "r.npy",
    )
    assert render.returncode == 0, render.stderr


def _box_scene(tmp_path):
    import trimesh

    trimesh.creation.box((0.2, 0.2, 0.1)).export(tmp_path / "box.stl")
    (tmp_path / "scene.yaml").write_text(
        "objects:\n  - mesh: box.stl\n    pose: '0 0 1.0 1 0 0 0'\nplane: true\n"
    )
    return tmp_path / "scene.yaml"


def test_several_frames_after_one_flag(real_data, tmp_path):
    grabber = real_data / "depth-pcl" / "grabber"
    proc = run_cli(
        "depth", "calibrate", "--frames", grabber / "frame_0_depth.tiff", grabber / "frame_1_depth.tiff",
        "--camera", grabber / "frame_0_camera.xml", "--out", tmp_path / "two.yaml",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "2 frames" in proc.stdout


def test_bad_frames_give_one_line_and_no_profile(real_data, tmp_path):
    camera = real_data / "depth-pcl" / "grabber" / "frame_0_camera.xml"
    out = tmp_path / "p.yaml"
    zeros = tmp_path / "zeros.npy"
    np.save(zeros, np.zeros((480, 640), np.float32))
    one_line_error(
        run_cli("depth", "calibrate", "--frames", zeros, "--camera", camera, "--out", out),
        "zeros.npy",
        "no valid depth",
    )
    small = tmp_path / "small.npy"
    np.save(small, np.ones((240, 320), np.float32))
    one_line_error(
        run_cli("depth", "calibrate", "--frames", small, "--camera", camera, "--out", out),
        "small.npy",
        "320",
    )
    # a frame of scattered depths: no plane with enough support, and no part given
    noise = tmp_path / "noise.npy"
    np.save(noise, np.random.default_rng(0).uniform(0.5, 4.0, (480, 640)).astype(np.float32))
    one_line_error(
        run_cli("depth", "calibrate", "--frames", noise, "--camera", camera, "--out", out),
        "noise.npy",
        "nothing to calibrate",
    )
    # a part posed behind the camera
    frame = real_data / "depth-pcl" / "grabber" / "frame_0_depth.tiff"
    mesh = real_data / "depth-m3t" / "triangle.obj"
    proc = run_cli(
        "depth",
        "calibrate",
        "--frames",
        frame,
        "--camera",
        camera,
        "--mesh",
        mesh,
        "--pose",
        "0 0 -1 0 0 0 1",
        "--out",
        out,
    )
    one_line_error(proc, "--pose", "outside the image")
    one_line_error(
        run_cli(
            "depth",
            "gap",
            "--frames",
            frame,
            "--camera",
            camera,
            "--profile",
            "kinect-v2",
            "--out",
            tmp_path / "g.json",
        ),
        "sensor",
        "kinect-v1",
    )
    assert not out.exists() and not (tmp_path / "g.json").exists()


def test_nan_values_are_reported_and_read_as_no_return(real_data, tmp_path):
    from sim2real.core.depth_io import read_depth

    grabber = real_data / "depth-pcl" / "grabber"
    depth = read_depth(grabber / "frame_0_depth.tiff")
    depth[:10, :10] = np.nan
    frame = tmp_path / "nan.npy"
    np.save(frame, depth)
    proc = run_cli(
        "depth",
        "calibrate",
        "--frames",
        frame,
        "--camera",
        grabber / "frame_0_camera.xml",
        "--out",
        tmp_path / "p.yaml",
    )
    assert proc.returncode == 0, proc.stderr
    assert "100 non-finite" in proc.stderr
    profile = load_profile(tmp_path / "p.yaml")  # the loader rejects NaN in every term
    assert all(np.isfinite(v.value) for v in profile.calibration.values())
