"""`depth calibrate` and `depth gap` as a user runs them, on real frames and on bad input."""

import json

import numpy as np
import pytest
from cli_helpers import assert_one_line_error, figures_drawn, run_cli

from sim2real.sensors.profile import load_profile

pytestmark = pytest.mark.slow


def one_line_error(proc, *needles):
    return assert_one_line_error(proc, *needles, warnings_ok=True)  # calibration may warn


def test_calibrate_then_gap_on_the_pcl_frames(real_data, tmp_path, figure_log):
    grabber = real_data / "depth-pcl" / "grabber"
    camera = grabber / "frame_0_camera.xml"
    profile = tmp_path / "pcl.yaml"
    proc = run_cli(
        "depth", "calibrate", "--frames", grabber / "frame_0_depth.tiff", "--camera", camera,
        "--out", profile, "--report", tmp_path / "report",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "disparity.step_px" in proc.stdout and "fitted" in proc.stdout
    # no --base-profile: chosen by evidence, and said why; one frame: a spatial hold-out
    assert "chosen by evidence" in proc.stdout
    assert "no held-out frame (one frame): spatial hold-out" in proc.stdout
    assert "kept from the base" in proc.stdout and "lateral.sigma_px" in proc.stdout
    calibrated = load_profile(profile)  # loadable by `depth render --profile`
    assert calibrated.calibration["axial.a_m"].pixels > 10_000
    assert calibrated.validation.kind == "planes"
    assert calibrated.validation.metrics["noise_bins_counted"] >= 1
    assert (tmp_path / "report" / "index.html").is_file()
    # what the report draws: real, calibrated and base noise per depth and incidence, for the
    # fitted and for the held-out planes; the dropout curves; the reference of the frame
    drawn = figures_drawn(figure_log)
    for image in ("noise_curves.png", "holdout_noise_curves.png"):
        depth_ax, angle_ax = drawn[image]["axes"]
        assert depth_ax["xlabel"] == "depth [m]" and angle_ax["xlabel"] == "incidence angle [deg]"
        labels = [line["label"] for line in depth_ax["lines"]]
        assert labels[:2] == ["real", "calibrated"] and "kinect-v1" in labels[2], labels
        assert len({line["n"] for line in depth_ax["lines"]}) == 1  # the same bins for all
    fitted_bins = drawn["noise_curves.png"]["axes"][0]["lines"][0]["n"]
    held_bins = drawn["holdout_noise_curves.png"]["axes"][0]["lines"][0]["n"]
    assert fitted_bins >= 1 and held_bins >= 1
    rates, edges = drawn["dropout_curves.png"]["axes"]
    assert rates["xlabel"] == "incidence angle [deg]" and "distance" in edges["xlabel"]
    assert [line["label"] for line in rates["lines"]] == ["real", "calibrated", "kinect-v1"]
    assert all(line["ymin"] >= 0 and line["ymax"] <= 100 for line in rates["lines"])
    assert drawn["frame_0_reference.png"]["axes"][0]["images"] == 1
    assert drawn["residuals.png"]["axes"][0]["xlabel"] == "depth - reference [mm]"
    gap_json = tmp_path / "gap.json"
    proc = run_cli(
        "depth", "gap", "--frames", grabber / "frame_0_depth.tiff", grabber / "frame_1_depth.tiff",
        "--camera", camera, "--profile", "ideal", "--profile", "kinect-v1", "--profile", profile,
        "--seeds", 1, "--out", gap_json,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    result = json.loads(gap_json.read_text())["profiles"]
    assert set(result) == {"ideal", "kinect-v1", "pcl"}
    # hold-out by default: the calibrated profile is judged on frame 1 and on the planes of
    # frame 0 it was not fitted to; the presets on both frames
    assert result["pcl"]["judged_on"] == "1 unseen frame(s) + held-out planes of 1 frame(s)"
    assert result["kinect-v1"]["judged_on"] == "2 frame(s)"
    assert result["pcl"]["metrics"]["w1_mm"] < result["ideal"]["metrics"]["w1_mm"]
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


def test_several_frames_hold_one_out_by_default(real_data, tmp_path):
    grabber = real_data / "depth-pcl" / "grabber"
    proc = run_cli(
        "depth", "calibrate", "--frames", grabber / "frame_0_depth.tiff", grabber / "frame_1_depth.tiff",
        "--camera", grabber / "frame_0_camera.xml", "--out", tmp_path / "two.yaml",
        "--base-profile", "kinect-v1",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "2 frames" in proc.stdout and "base profile 'kinect-v1' (given)" in proc.stdout
    record = load_profile(tmp_path / "two.yaml").validation
    assert record.kind == "frames"
    assert [f.source for f in record.heldout_frames] == [str(grabber / "frame_1_depth.tiff")]
    assert [f.source for f in record.fit_frames] == [str(grabber / "frame_0_depth.tiff")]
    assert (
        "out of sample (frames)" in proc.stdout and "target noise_bins_within_25pct" in proc.stdout
    )


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


def test_depth_units_that_contradict_the_camera_and_too_few_planes(real_data, tmp_path):
    from sim2real.core.depth_io import read_depth, write_depth

    grabber = real_data / "depth-pcl" / "grabber"
    out = tmp_path / "p.yaml"
    depth = read_depth(grabber / "frame_0_depth.tiff")
    # a millimetre PNG (its sidecar says 0.001 m per unit) read with a camera file that
    # states 0.0001 m per unit
    png = tmp_path / "mm.png"
    write_depth(png, depth, depth_scale=0.001)
    camera = tmp_path / "cam.json"
    camera.write_text(
        json.dumps({"fx": 525, "fy": 525, "cx": 320, "cy": 240, "width": 640, "height": 480,
                    "depth_scale": 0.0001})
    )  # fmt: skip
    one_line_error(
        run_cli("depth", "calibrate", "--frames", png, "--camera", camera, "--out", out),
        "mm.png",
        "depth_scale",
        "contradicts the camera file",
    )
    # metres stored as integers (1-2), read as millimetres: returns at 1-2 mm
    metres = tmp_path / "metres.png"
    write_depth(metres, np.round(depth).astype(np.float32), depth_scale=1.0)
    (tmp_path / "metres.json").unlink()  # no sidecar: the camera file's 1 mm applies
    one_line_error(
        run_cli(
            "depth", "calibrate", "--frames", metres, "--camera",
            grabber / "frame_0_camera.xml", "--out", out,
        ),
        "metres.png",
        "depth_scale",
        "median return lies at 0.001",
    )  # fmt: skip
    # one flat wall: one usable plane, and no part to make up for it
    wall = tmp_path / "wall.npy"
    rng = np.random.default_rng(0)
    np.save(wall, (1.0 + 0.002 * rng.standard_normal((480, 640))).astype(np.float32))
    one_line_error(
        run_cli(
            "depth", "calibrate", "--frames", wall, "--camera", grabber / "frame_0_camera.xml",
            "--out", out,
        ),
        "wall.npy",
        "planes",
        "1 usable plane(s)",
    )  # fmt: skip
    assert not out.exists()


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
