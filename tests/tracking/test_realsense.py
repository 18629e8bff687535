"""RealSense recordings as tracking sequences: recordings written here through pyrealsense2
itself (a software device with a depth and a colour sensor, recorded by ``rs.recorder``), read
back through the SDK's playback and compared with what was written; a ``.bag`` written by SDK
2.57 (the last that writes ROS 1 bags); bad input; ``track run --frames x.db3``."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import trimesh
from cli_helpers import assert_one_line_error, run_cli

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.errors import InputError
from sim2real.core.pose import invert_pose, look_at, make_pose, rpy_deg_to_matrix
from sim2real.tracking.realsense import RealSenseRecording, open_live_camera
from sim2real.tracking.sequence import load_sequence

DATA = Path(__file__).parent / "data"
DEPTH_CAM = CameraIntrinsics(fx=70.0, fy=71.0, cx=39.5, cy=29.5, width=80, height=60)
COLOR_CAM = CameraIntrinsics(fx=80.0, fy=80.0, cx=59.5, cy=37.5, width=120, height=75)
UNITS_M = 1e-4  # not the SDK's default 1 mm: the scale must come from the recorded sensor


@pytest.fixture
def rs():
    return pytest.importorskip(
        "pyrealsense2", reason="pyrealsense2 is not available on this platform"
    )


def _suffix(rs) -> str:
    """SDK 2.58 and later record only ROS 2 ``.db3`` files; earlier ones ROS 1 ``.bag``."""
    major, minor = (int(x) for x in getattr(rs, "__version__", "2.0").split(".")[:2])
    return ".db3" if (major, minor) >= (2, 58) else ".bag"


def _rs_intrinsics(rs, cam: CameraIntrinsics):
    intr = rs.intrinsics()
    intr.width, intr.height = cam.width, cam.height
    intr.fx, intr.fy, intr.ppx, intr.ppy = cam.fx, cam.fy, cam.cx, cam.cy
    intr.model = rs.distortion.none
    intr.coeffs = [0.0] * 5
    return intr


def _stream(rs, kind, uid, cam, fmt, bpp, fps=30):
    vs = rs.video_stream()
    vs.type, vs.index, vs.uid = kind, 0, uid
    vs.width, vs.height, vs.fps, vs.bpp, vs.fmt = cam.width, cam.height, fps, bpp, fmt
    vs.intrinsics = _rs_intrinsics(rs, cam)
    return vs


def record(rs, path, depth_units=None, colors=None, *, numbers, T_color_depth=None):
    """Write a recording through a software device: ``depth_units`` (n, H, W) uint16 frames of
    ``DEPTH_CAM`` (None: no depth stream), ``colors`` (n, h, w, 3) uint8 RGB of ``COLOR_CAM``
    (None: no colour; a None item: that frame has no colour), frame ``numbers`` at 30 fps, and
    the colour camera's pose seen from depth ``T_color_depth`` (maps depth into colour)."""
    sd = rs.software_device()
    sensors = []
    if depth_units is not None:
        depth_sensor = sd.add_sensor("Depth")
        depth_sensor.add_read_only_option(rs.option.depth_units, UNITS_M)
        stream = _stream(rs, rs.stream.depth, 0, DEPTH_CAM, rs.format.z16, 2)
        depth_profile = depth_sensor.add_video_stream(stream).as_video_stream_profile()
        sensors.append((depth_sensor, depth_profile, depth_units, 2))
    if colors is not None:
        color_sensor = sd.add_sensor("Color")
        stream = _stream(rs, rs.stream.color, 1, COLOR_CAM, rs.format.rgb8, 3)
        color_profile = color_sensor.add_video_stream(stream).as_video_stream_profile()
        sensors.append((color_sensor, color_profile, colors, 3))
    if depth_units is not None and colors is not None:
        T = np.eye(4) if T_color_depth is None else T_color_depth
        extr = rs.extrinsics()
        extr.rotation = T[:3, :3].ravel(order="F").tolist()  # librealsense: column-major
        extr.translation = T[:3, 3].tolist()
        depth_profile.register_extrinsics_to(color_profile, extr)
    recorder = rs.recorder(str(path), sd)
    for sensor, profile, _, _ in sensors:
        sensor.open(profile)
        sensor.start(lambda f: None)
    kept = []  # the SDK reads the pixels after on_video_frame returns: keep them alive
    for i, number in enumerate(numbers):
        for sensor, profile, images, bpp in sensors:
            if images[i] is None:
                continue
            pixels = np.ascontiguousarray(images[i])
            kept.append(pixels)
            frame = rs.software_video_frame()
            frame.pixels, frame.bpp, frame.stride = pixels, bpp, pixels.shape[1] * bpp
            frame.timestamp, frame.frame_number = 1000.0 + i * 1000.0 / 30, number
            frame.domain, frame.profile = rs.timestamp_domain.hardware_clock, profile
            sensor.on_video_frame(frame)
    for sensor, _, _, _ in sensors:
        sensor.stop()
        sensor.close()
    recorder.pause()
    del recorder
    return path


def ramp_colors(n, missing=()):
    """Colour images of ``COLOR_CAM``: red = 2 u, green = 3 v, blue = 20 * frame index."""
    v, u = np.mgrid[0 : COLOR_CAM.height, 0 : COLOR_CAM.width]
    out = []
    for i in range(n):
        if i in missing:
            out.append(None)
            continue
        rgb = np.stack([2 * u, 3 * v, np.full_like(u, 20 * i)], axis=2)
        out.append(rgb.astype(np.uint8))
    return out


def plane_units(n, z0_m=0.5):
    """Frames of a fronto-parallel plane, ``z0_m + 0.1 i`` metres away, top-left 8x8 px without
    a return; in ``UNITS_M`` units."""
    frames = []
    for i in range(n):
        d = np.full((DEPTH_CAM.height, DEPTH_CAM.width), round((z0_m + 0.1 * i) / UNITS_M))
        d[:8, :8] = 0
        frames.append(d.astype(np.uint16))
    return frames


def bracket_depth_m(T_cam_part) -> np.ndarray:
    from sim2real.sensors.demo_part import machined_bracket
    from sim2real.sensors.render import DepthRenderer
    from sim2real.sensors.scene import make_scene

    scene = make_scene([machined_bracket()], [T_cam_part], plane=True)
    return DepthRenderer(scene, DEPTH_CAM).render(None).depth_m


def bracket_pose(i: int) -> np.ndarray:
    T_world_cam = look_at([0.25 + 0.01 * i, -0.2, 0.25], [0.06, 0.03, 0.02])
    return invert_pose(T_world_cam)


def test_depth_comes_back_in_metres_with_the_recorded_scale_intrinsics_and_frame_numbers(
    rs, tmp_path
):
    rendered = [bracket_depth_m(bracket_pose(i)) for i in range(4)]
    units = [np.round(d / UNITS_M).astype(np.uint16) for d in rendered]
    path = record(rs, tmp_path / f"rec{_suffix(rs)}", units, numbers=[7, 8, 9, 12])
    seq = RealSenseRecording(path)
    assert len(seq) == 4 and seq.frame_ids == [7, 8, 9, 12]  # the depth stream's numbers
    assert seq.camera == DEPTH_CAM.model_copy(update={"depth_scale": seq.depth_scale})
    assert seq.depth_scale == pytest.approx(UNITS_M, rel=1e-6)  # float32 in the SDK
    assert not seq.has_color and seq.read_color(0) is None and seq.gt is None
    for i in (0, 1, 2, 3, 1):  # going back to frame 1 plays the file again
        depth = seq.read(i)
        assert depth.dtype == np.float32 and depth.shape == (60, 80)
        expected = units[i].astype(np.float64) * seq.depth_scale
        assert np.abs(depth - expected).max() <= 1e-6  # float32 of metres
        assert np.array_equal(depth > 0, units[i] > 0)  # no return stays 0
        assert np.abs(depth - rendered[i])[depth > 0].max() <= 0.5 * UNITS_M + 1e-6
    seq.close()


def test_colour_is_registered_to_depth_by_the_sdk(rs, tmp_path):
    # the colour camera sits 4 cm to the left of the depth camera (a point at x in the depth
    # frame is at x + 0.04 in the colour frame): depth pixel u sees colour column
    # u_c = fx_c ((u - cx) / fx + 0.04 / z) + cx_c, by hand
    T_color_depth = make_pose(np.eye(3), [0.04, 0.0, 0.0])
    n = 4
    path = record(
        rs, tmp_path / f"rec{_suffix(rs)}", plane_units(n), ramp_colors(n),
        numbers=range(n), T_color_depth=T_color_depth,
    )  # fmt: skip
    seq = RealSenseRecording(path, align_color=True)
    assert seq.has_color and seq.color_camera is None and seq.T_depth_color is None
    v, u = np.mgrid[0:60, 0:80]
    for i in range(n):
        depth, rgb = seq.read(i), seq.read_color(i)
        assert rgb.shape == (60, 80, 3) and rgb.dtype == np.uint8  # the depth camera's size
        z = depth[30, 30]
        u_c = COLOR_CAM.fx * ((u - DEPTH_CAM.cx) / DEPTH_CAM.fx + 0.04 / z) + COLOR_CAM.cx
        v_c = COLOR_CAM.fy * (v - DEPTH_CAM.cy) / DEPTH_CAM.fy + COLOR_CAM.cy
        seen = depth > 0
        # rs.align gives a depth pixel the last colour pixel its footprint (+-0.5 px, i.e.
        # +-0.5 fx_c / fx colour px) covers, rounded: within 0.5 fx_c / fx + 0.5 px of the
        # centre's column (1.07 px here; a wrong sign or depth unit would be 6-13 px off)
        u_tol = 0.5 * COLOR_CAM.fx / DEPTH_CAM.fx + 0.5 + 1e-3
        v_tol = 0.5 * COLOR_CAM.fy / DEPTH_CAM.fy + 0.5 + 1e-3
        assert np.abs(rgb[..., 0][seen] / 2.0 - u_c[seen]).max() <= u_tol
        assert np.abs(rgb[..., 1][seen] / 3.0 - v_c[seen]).max() <= v_tol
        assert np.all(rgb[..., 2][seen] == 20 * i)  # the colour frame of the same instant
        assert np.all(rgb[~seen] == 0)  # no depth return: no colour
    seq.close()


def test_colour_in_its_own_camera_with_the_recorded_extrinsic(rs, tmp_path):
    R = rpy_deg_to_matrix(2.0, -5.0, 1.0)
    T_color_depth = make_pose(R, [0.015, -0.002, 0.001])
    colors = ramp_colors(3)
    path = record(
        rs, tmp_path / f"rec{_suffix(rs)}", plane_units(3), colors,
        numbers=range(3), T_color_depth=T_color_depth,
    )  # fmt: skip
    seq = RealSenseRecording(path)  # the default: colour in its own camera
    assert seq.color_camera == COLOR_CAM.model_copy(update={"depth_scale": seq.depth_scale})
    # T_depth_color maps colour-camera coordinates into the depth camera's: the inverse
    assert np.allclose(seq.T_depth_color, invert_pose(T_color_depth), atol=1e-6)
    for i in (2, 0, 1):
        rgb = seq.read_color(i)
        assert np.array_equal(rgb, colors[i])  # the recorded image, untouched
        # its own pixels, as documented: a view would keep the SDK's frame alive with it
        assert rgb.flags.owndata
    seq.close()


def test_a_depth_frame_without_colour_near_it_is_depth_only_and_warned(rs, tmp_path):
    path = record(
        rs, tmp_path / f"rec{_suffix(rs)}", plane_units(4), ramp_colors(4, missing={2}),
        numbers=range(4),
    )  # fmt: skip
    with pytest.warns(UserWarning, match=r"no colour frame within 16.7 ms of depth frames 2"):
        seq = RealSenseRecording(path, align_color=True)
    assert seq.read_color(2) is None
    assert np.all(seq.read_color(3)[..., 2][seq.read(3) > 0] == 60)  # frame 3's own colour
    seq.close()


def test_load_sequence_opens_a_recording_and_refuses_camera_files_beside_it(rs, tmp_path):
    path = record(rs, tmp_path / f"rec{_suffix(rs)}", plane_units(2), numbers=[3, 4])
    for source in (path, [path]):
        seq = load_sequence(source)
        assert isinstance(seq, RealSenseRecording) and seq.frame_ids == [3, 4]
        seq.close()
    with pytest.raises(InputError, match=r"--camera.*carries its own"):
        load_sequence(path, tmp_path / "camera.json")


def test_a_recording_without_a_depth_stream_raises_naming_the_file(rs, tmp_path):
    path = record(rs, tmp_path / f"colour_only{_suffix(rs)}", None, ramp_colors(2), numbers=[0, 1])
    with pytest.raises(InputError) as err:
        RealSenseRecording(path)
    assert err.value.source == str(path) and err.value.field == "depth"
    assert "no depth stream" in str(err.value) and "\n" not in str(err.value)


def test_a_file_that_is_not_a_recording_and_a_missing_one_raise(rs, tmp_path):
    fake = tmp_path / "notes.bag"
    fake.write_text("not a ROS bag\n")
    with pytest.raises(InputError, match=r"notes\.bag: not a readable RealSense recording"):
        RealSenseRecording(fake)
    with pytest.raises(InputError, match="recording not found"):
        RealSenseRecording(tmp_path / "absent.db3")


def test_without_pyrealsense2_a_recording_raises_that_it_is_not_available(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyrealsense2", None)  # import fails as on aarch64
    path = tmp_path / "rec.bag"
    path.write_bytes(b"#ROSBAG V2.0\n")
    with pytest.raises(InputError, match="pyrealsense2 is not available on this platform"):
        load_sequence(path)
    with pytest.raises(InputError, match="pyrealsense2 is not available on this platform"):
        open_live_camera()


def _sdk257_bag(tmp_path: Path, name: str) -> Path:
    out = tmp_path / name
    with gzip.open(DATA / f"{name}.gz", "rb") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def test_a_ros1_bag_recorded_by_sdk_2_57_is_read(rs, tmp_path):
    # written by tests/tracking/data/make_realsense_bag.py under pyrealsense2 2.57.7 (the SDK
    # recorder writes only .db3 since 2.58); its pixels follow the formulas there
    seq = RealSenseRecording(_sdk257_bag(tmp_path, "sdk257.bag"), align_color=False)
    assert seq.frame_ids == [5, 6, 7] and seq.depth_scale == pytest.approx(1e-4, rel=1e-6)
    assert (seq.camera.fx, seq.camera.cx, seq.camera.width) == (30.0, 11.5, 24)
    assert np.allclose(seq.T_depth_color[:3, 3], [-0.01, 0, 0], atol=1e-7)
    v, u = np.mgrid[0:16, 0:24]
    for i in range(3):
        assert np.allclose(seq.read(i), (4000 + 1000 * i + u) * seq.depth_scale, atol=1e-6)
        expected = np.stack([10 * u, 10 * v, np.full_like(u, 50 * i)], axis=2)
        assert np.array_equal(seq.read_color(i), expected)
    seq.close()
    with pytest.raises(InputError, match="no depth stream"):
        RealSenseRecording(_sdk257_bag(tmp_path, "sdk257_colour_only.bag"))


def test_leaving_a_recording_midway_exits_cleanly(rs, tmp_path):
    # the player waits on a full queue after frame 0 of 12; Python must stop it before it
    # shuts down (else the SDK's thread aborts the process), and release each playback only
    # once it reports stopped (else, 1 run in 60-300 here, its reader thread aborts it)
    path = record(
        rs, tmp_path / f"rec{_suffix(rs)}", plane_units(12), ramp_colors(12), numbers=range(12)
    )
    code = (
        "import sys\n"
        "from sim2real.tracking.realsense import RealSenseRecording\n"
        "seq = RealSenseRecording(sys.argv[1])\n"
        "print(seq.read(0)[30, 30], seq.read_color(0)[30, 30, 2])\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0.5", "0"]  # 5000 units of 0.1 mm; frame 0's colour


def test_open_live_camera_without_a_camera_says_so(rs):
    ctx = rs.context()
    if len(ctx.query_devices()):
        pytest.skip("a RealSense camera is connected")
    with pytest.raises(InputError, match="no RealSense camera is connected"):
        open_live_camera(context=ctx)


@pytest.mark.slow
def test_track_run_follows_a_part_through_a_recording(rs, tmp_path):
    from sim2real.sensors.demo_part import machined_bracket

    part = machined_bracket()
    mesh = tmp_path / "bracket.stl"
    trimesh.Trimesh(part.vertices, part.faces).export(mesh)
    n = 6
    units = [
        np.round(bracket_depth_m(bracket_pose(i)) / UNITS_M).astype(np.uint16) for i in range(n)
    ]
    path = record(rs, tmp_path / f"rec{_suffix(rs)}", units, ramp_colors(n), numbers=range(n))
    out = tmp_path / "poses.jsonl"
    init = " ".join(map(str, bracket_pose(0).ravel()))
    proc = run_cli(
        "track", "run", mesh, "--mesh-unit", "m", "--frames", path, "--init", init, "--out", out
    )
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["frame"] for r in records] == list(range(n))
    assert all(r["status"] == "tracking" for r in records), records
    for r in records:
        error_mm = 1e3 * np.linalg.norm(
            np.asarray(r["T_cam_part"])[:3, 3] - bracket_pose(r["frame"])[:3, 3]
        )
        assert error_mm < 2.0
    bad = record(rs, tmp_path / f"colour_only{_suffix(rs)}", None, ramp_colors(2), numbers=[0, 1])
    out2 = tmp_path / "bad.jsonl"
    proc = run_cli(
        "track", "run", mesh, "--mesh-unit", "m", "--frames", bad, "--init", init, "--out", out2
    )
    assert_one_line_error(proc, str(bad), "depth", "no depth stream", warnings_ok=True)
    assert not out2.exists()
