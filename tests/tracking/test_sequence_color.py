"""Colour beside depth in a sequence: found in rgb/, paired by frame number, with its own camera
and extrinsic; and the bad inputs of the colour path, each a one-line error before tracking."""

import json

import numpy as np
import pytest
from cli_helpers import run_cli
from PIL import Image

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.errors import InputError
from sim2real.core.pose import make_pose
from sim2real.tracking.sequence import load_sequence
from sim2real.tracking.sequence_write import write_bop_sequence

CAM = CameraIntrinsics(fx=300, fy=300, cx=79.5, cy=59.5, width=160, height=120)


def _sequence(folder, n=3, color_size=(160, 120), color_ids=None):
    frames = [np.full((120, 160), 0.5 + 0.01 * i, np.float32) for i in range(n)]
    write_bop_sequence(folder, CAM, frames, [make_pose(np.eye(3), [0, 0, 0.5])] * n)
    (folder / "rgb").mkdir()
    for i in color_ids if color_ids is not None else range(n):
        rgb = np.full((color_size[1], color_size[0], 3), 10 * i, np.uint8)
        Image.fromarray(rgb).save(folder / "rgb" / f"{i:06d}.png")
    return folder


def test_rgb_beside_depth_is_paired_by_frame_number(tmp_path):
    seq = load_sequence(_sequence(tmp_path / "s"))
    assert seq.has_color and len(seq.color_paths) == 3
    rgb = seq.read_color(2)
    assert rgb.shape == (120, 160, 3) and rgb.dtype == np.uint8 and rgb[0, 0, 0] == 20
    assert seq.color_camera is None and seq.T_depth_color is None  # registered: one camera
    assert not load_sequence(tmp_path / "s", use_color=False).has_color


def test_a_colour_camera_and_extrinsic_are_kept_and_the_extrinsic_must_be_rigid(tmp_path):
    folder = _sequence(tmp_path / "s", color_size=(320, 240))
    cam = tmp_path / "color.json"
    cam.write_text(
        json.dumps({"fx": 600, "fy": 600, "cx": 159.5, "cy": 119.5, "width": 320, "height": 240})
    )
    T = make_pose(np.eye(3), [0.025, 0.0, 0.0])
    seq = load_sequence(folder, color_camera=cam, T_depth_color=T)
    assert seq.color_camera.width == 320 and np.allclose(seq.T_depth_color, T)
    sheared = T.copy()
    sheared[0, 1] = 0.3
    with pytest.raises(InputError, match="--extrinsic"):
        load_sequence(folder, color_camera=cam, T_depth_color=sheared)


def test_colour_of_another_size_without_its_camera_is_refused_before_tracking(tmp_path):
    with pytest.raises(InputError, match="give the colour camera") as err:
        load_sequence(_sequence(tmp_path / "s", color_size=(320, 240)))
    assert err.value.field == "size"


def test_rgb_and_depth_counts_that_differ_are_refused(tmp_path):
    with pytest.raises(InputError, match="2 colour images for 3 depth frames"):
        load_sequence(_sequence(tmp_path / "a", color_ids=[0, 1]))
    with pytest.raises(InputError, match="no colour image for depth frames 2"):
        load_sequence(_sequence(tmp_path / "b", color_ids=[0, 1, 5]))


def test_track_run_refuses_a_non_rigid_extrinsic_in_one_line_and_writes_nothing(tmp_path):
    import trimesh

    folder = _sequence(tmp_path / "s")
    trimesh.creation.box((0.05, 0.05, 0.05)).export(tmp_path / "box.stl")
    out = tmp_path / "poses.jsonl"
    proc = run_cli(
        "track", "run", tmp_path / "box.stl", "--mesh-unit", "m", "--frames", folder,
        "--init", "0 0 0.5 0 0 0 1", "--extrinsic", "1 0.5 0 0 0 1 0 0 0 0 1 0 0 0 0 1",
        "--out", out,
    )  # fmt: skip
    assert proc.returncode == 2 and proc.stderr.count("\n") <= 1, proc.stderr
    assert "--extrinsic" in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists()


def test_tum_frames_named_by_timestamps_run_in_time_order_with_the_nearest_colour(tmp_path):
    """TUM RGB-D names frames by timestamps (1305031102.975304.png): their last digits are
    microseconds, which ordered frame 1.0 s before 0.9 s and paired nothing (a probe)."""
    from sim2real.core.camera_io import save_camera
    from sim2real.core.depth_io import write_depth

    (tmp_path / "depth").mkdir()
    (tmp_path / "rgb").mkdir()
    depth_t = [1305031102.900000, 1305031102.966667, 1305031103.033333, 1305031103.5]
    for k, t in enumerate(depth_t):
        write_depth(tmp_path / "depth" / f"{t:.6f}.png", np.full((120, 160), 0.5 + 0.01 * k))
    for k, t in enumerate(depth_t[:3]):  # colour 12 ms before each depth frame; none for the last
        rgb = np.full((120, 160, 3), 10 * k, np.uint8)
        Image.fromarray(rgb).save(tmp_path / "rgb" / f"{t - 0.012:.6f}.png")
    save_camera(CAM, tmp_path / "camera.json")
    with pytest.warns(UserWarning, match="1 depth frames have no colour image within 20 ms"):
        seq = load_sequence(tmp_path, tmp_path / "camera.json")
    assert seq.frame_ids == [0, 1, 2]  # time order; the frame without colour left out
    assert [float(np.median(seq.read(i))) for i in range(3)] == pytest.approx([0.5, 0.51, 0.52])
    assert [int(seq.read_color(i)[0, 0, 0]) for i in range(3)] == [0, 10, 20]


def test_itodd_grey_images_in_gray_are_read_as_colour(real_data, tmp_path):
    from visp_bop import visp_bop_scene

    scene = visp_bop_scene(real_data, tmp_path / "s", color_dir="gray")
    for path in (scene / "gray").iterdir():  # ITODD: one 8-bit grey channel
        Image.open(path).convert("L").save(path)
    seq = load_sequence(scene)
    assert seq.has_color and [p.parent.name for p in seq.color_paths] == ["gray", "gray"]
    rgb = seq.read_color(1)
    grey = np.array(Image.open(scene / "gray" / "000001.png"))
    assert rgb.shape == (480, 640, 3) and all((rgb[..., c] == grey).all() for c in range(3))
    assert not load_sequence(visp_bop_scene(real_data, tmp_path / "d", color_dir=None)).has_color
