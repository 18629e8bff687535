"""Camera files other labs' tools write, each built here as the tool writes it: topic echoes of
ROS 1 and 2 CameraInfo, ZED factory calibrations, Azure Kinect raw calibrations."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from sim2real.core.camera_io import load_camera
from sim2real.core.errors import InputError

_ROS1_ECHO = """header:
  seq: 1532
  stamp:
    secs: 1700000000
    nsecs: 123456789
  frame_id: "camera_depth_optical_frame"
height: 480
width: 640
distortion_model: "plumb_bob"
D: [0.0, 0.0, 0.0, 0.0, 0.0]
K: [385.5, 0.0, 320.25, 0.0, 385.75, 239.5, 0.0, 0.0, 1.0]
R: [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
P: [385.5, 0.0, 320.25, 0.0, 0.0, 385.75, 239.5, 0.0, 0.0, 0.0, 1.0, 0.0]
binning_x: 0
binning_y: 0
roi:
  x_offset: 0
  y_offset: 0
  height: 0
  width: 0
  do_rectify: False
---
"""
ROS1_ECHO = _ROS1_ECHO.replace(":\n  ", ": \n  ")  # rostopic echo: "header: " opens a message

ROS2_ECHO = """header:
  stamp:
    sec: 1700000000
    nanosec: 5
  frame_id: camera_depth_optical_frame
height: 720
width: 1280
distortion_model: plumb_bob
d:
- 0.0
- 0.0
- 0.0
- 0.0
- 0.0
k:
- 642.5
- 0.0
- 640.25
- 0.0
- 642.75
- 360.5
- 0.0
- 0.0
- 1.0
r: [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
p: [642.5, 0.0, 640.25, 0.0, 0.0, 642.75, 360.5, 0.0, 0.0, 0.0, 1.0, 0.0]
binning_x: 0
binning_y: 0
roi:
  x_offset: 0
  y_offset: 0
  height: 0
  width: 0
  do_rectify: false
---
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [(ROS1_ECHO, (385.5, 385.75, 320.25, 239.5, 640, 480)),
     (ROS2_ECHO + "\n  \n", (642.5, 642.75, 640.25, 360.5, 1280, 720))],
    ids=["rostopic-echo", "ros2-topic-echo"],
)  # fmt: skip
def test_a_topic_echo_of_camera_info_ends_with_a_separator(tmp_path, text, expected):
    """`rostopic echo -n 1 .../camera_info > cam.yaml` was refused as "another document"."""
    path = tmp_path / "cam.yaml"
    path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cam = load_camera(path)
    assert (cam.fx, cam.fy, cam.cx, cam.cy, cam.width, cam.height) == expected


def test_an_echo_of_several_messages_reads_the_first_and_says_so(tmp_path):
    path = tmp_path / "cam.yaml"
    path.write_text(ROS1_ECHO + ROS1_ECHO.replace("385.5", "400.0"))
    with pytest.warns(UserWarning, match="2 YAML documents.*the first is read"):
        assert load_camera(path).fx == 385.5


def _zed_section(name, fx, cx, cy, k1=0.0):
    return (f"[{name}]\nfx={fx}\nfy={fx + 0.5}\ncx={cx}\ncy={cy}\n"
            f"k1={k1}\nk2=0\np1=0\np2=0\nk3=0\n\n")  # fmt: skip


ZED2_CONF = (
    _zed_section("LEFT_CAM_2K", 1066.58, 1113.52, 613.463, k1=-0.0551)
    + _zed_section("RIGHT_CAM_2K", 1067.1, 1101.2, 620.1, k1=-0.05)
    + _zed_section("LEFT_CAM_FHD", 1066.58, 969.52, 532.463)
    + _zed_section("LEFT_CAM_HD", 533.29, 646.76, 356.7315)
    + _zed_section("RIGHT_CAM_HD", 533.55, 640.6, 360.05)
    + _zed_section("LEFT_CAM_VGA", 266.645, 335.38, 187.366)
    + "[STEREO]\nBaseline=119.971\nTY_2K=0.0254\nCV_2K=0.0023\n[MISC]\nSensor_ID=0\n"
)


def test_zed_conf_takes_the_left_camera_at_the_frames_size(tmp_path):
    path = tmp_path / "SN28146788.conf"
    path.write_text(ZED2_CONF)
    cam = load_camera(path, width=1280, height=720)
    assert (cam.fx, cam.fy, cam.cx, cam.cy) == (533.29, 533.79, 646.76, 356.7315)
    assert (cam.width, cam.height, cam.depth_scale) == (1280, 720, 0.001)
    assert load_camera(path, width=672, height=376).cx == 335.38
    with pytest.warns(UserWarning, match=r"LEFT_CAM_2K k1 .*\[-0\.0551.* ignored"):
        assert load_camera(path, width=2208, height=1242).fx == 1066.58
    with pytest.raises(InputError, match=r"width: .*LEFT_CAM_2K 2208x1242, .*pass the frames'"):
        load_camera(path)
    with pytest.raises(InputError, match=r"no section for 1920x1200 px frames"):
        load_camera(path, width=1920, height=1200)


def test_zed_x_conf_has_its_own_resolutions(tmp_path):
    path = tmp_path / "SN40013030.conf"
    path.write_text(
        _zed_section("LEFT_CAM_FHD1200", 735.3, 978.1, 576.6)
        + _zed_section("RIGHT_CAM_FHD1200", 736.3, 976.3, 576.7)
        + _zed_section("LEFT_CAM_FHD", 735.3, 978.1, 516.6)
        + _zed_section("LEFT_CAM_SVGA", 367.65, 488.8, 288.05)
        + "[STEREO]\nBaseline = 119.9\n"
    )
    assert load_camera(path, width=1920, height=1200).cy == 576.6
    assert load_camera(path, width=1920, height=1080).cy == 516.6
    cam = load_camera(path, width=960, height=600)
    assert (cam.fx, cam.cx, cam.width, cam.height) == (367.65, 488.8, 960, 600)


def test_zed_conf_is_sized_by_a_tracked_sequence_s_first_png(tmp_path):
    """`track run --camera SN....conf` takes the section of its frames' size."""
    from sim2real.core.depth_io import write_depth
    from sim2real.tracking.sequence import load_sequence

    conf = tmp_path / "SN1.conf"
    conf.write_text(ZED2_CONF)
    write_depth(tmp_path / "000000.png", np.full((376, 672), 0.8))
    seq = load_sequence([tmp_path / "000000.png"], camera=conf, use_color=False)
    assert (seq.camera.fx, seq.camera.width, seq.camera.height) == (266.645, 672, 376)


def test_zed_conf_is_sized_by_the_first_frame_for_depth_calibrate_and_npy_frames(tmp_path):
    """`depth calibrate / depth gap --camera SN....conf` (sensors.reference) and a .npy frame
    (the ZED SDK's numpy export) take the section of the first frame's size too."""
    from sim2real.core.camera_io import load_camera_sized_by
    from sim2real.sensors.reference import references_from_files

    conf = tmp_path / "SN1.conf"
    conf.write_text(ZED2_CONF)
    np.save(tmp_path / "frame.npy", np.full((376, 672), 0.8, np.float32))
    assert load_camera_sized_by(conf, tmp_path / "frame.npy").width == 672
    refs = references_from_files([tmp_path / "frame.npy"], conf)  # a wall 0.8 m away
    assert (refs[0].camera.fx, refs[0].camera.height) == (266.645, 376)
    with pytest.raises(InputError, match="size"):  # a frame of no ZED size still says so
        np.save(tmp_path / "odd.npy", np.full((100, 90), 0.8, np.float32))
        load_camera_sized_by(conf, tmp_path / "odd.npy")


def _k4a_camera(location, params, size, model="CALIBRATION_LensDistortionModelBrownConrady"):
    return {
        "Intrinsics": {"ModelParameterCount": 14, "ModelParameters": params, "ModelType": model},
        "Location": location,
        "Purpose": "CALIBRATION_CameraPurposeDepth",
        "MetricRadius": 1.74,
        "Rt": {"Rotation": [1, 0, 0, 0, 1, 0, 0, 0, 1], "Translation": [0, 0, 0]},
        "SensorHeight": size[1],
        "SensorWidth": size[0],
        "Shutter": "CALIBRATION_ShutterTypeUndefined",
        "ThermalAdjustmentParams": {"Params": [0] * 12},
    }


# cx, cy, fx, fy (normalised), k1..k6, codx, cody, p2, p1
K4A_DEPTH = [0.4961, 0.5085, 0.4929, 0.4931, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
K4A_COLOR = [0.4998, 0.4985, 0.4474, 0.5965, 0.08, -0.1, 0.04, 0, 0, 0, 0, 0, 1e-4, 2e-4]


def _k4a_file(tmp_path, color_params=K4A_COLOR, color_size=(4096, 3072)):
    path = tmp_path / "calibration.json"
    cameras = [_k4a_camera("CALIBRATION_CameraLocationD0", K4A_DEPTH, (1024, 1024)),
               _k4a_camera("CALIBRATION_CameraLocationPV0", color_params, color_size)]  # fmt: skip
    data = {"CalibrationInformation": {"Cameras": cameras, "InertialSensors": [],
                                       "Metadata": {"SerialId": "000123", "Version": 1}}}  # fmt: skip
    path.write_text(json.dumps(data))
    return path


def test_azure_kinect_raw_calibration_per_mode_as_the_sdk_converts_it(tmp_path):
    """Sensor SDK mode_specific_calibration.c: f = f_n * binned size; c = c_n * binned size -
    crop - 0.5 (normalised and 0-cornered -> pixels, 0-centred), numbers worked out by hand."""
    path = _k4a_file(tmp_path)
    nfov = load_camera(path, width=640, height=576)  # binned 1024x1024, crop (192, 180)
    assert nfov.fx == pytest.approx(0.4929 * 1024) and nfov.fx == pytest.approx(504.7296)
    assert (nfov.cx, nfov.cy) == (pytest.approx(315.5064), pytest.approx(340.204))
    binned = load_camera(path, width=320, height=288)  # binned 512x512, crop (96, 90)
    assert (binned.fx, binned.cx) == (pytest.approx(252.3648), pytest.approx(157.5032))
    assert load_camera(path, width=1024, height=1024).cx == pytest.approx(507.5064)
    with pytest.warns(UserWarning, match=r"Cameras\[1\] k1\.\.k6 p2 p1 .*ignored"):
        color = load_camera(path, width=1280, height=720)  # binned 1280x960, crop (0, 120)
    assert (color.fx, color.fy) == (pytest.approx(572.672), pytest.approx(572.64))
    assert (color.cx, color.cy) == (pytest.approx(639.244), pytest.approx(358.06))
    assert (color.width, color.height, color.depth_scale) == (1280, 720, 0.001)


def test_azure_kinect_legacy_16_9_colour_calibration(tmp_path):
    """A 4096x2304 colour calibration: the SDK rescales it to 4096x3072 first
    (cy' = (cy * 2304 + 384) / 3072, fy' = fy * 2304 / 3072), then to the resolution."""
    params = [0.5, 0.5, 0.4474, 0.7953] + [0.0] * 10
    path = _k4a_file(tmp_path, params, (4096, 2304))
    cam = load_camera(path, width=1920, height=1080)  # binned 1920x1440, crop (0, 180)
    assert (cam.cx, cam.cy) == (pytest.approx(959.5), pytest.approx(539.5))
    assert cam.fy == pytest.approx(0.7953 * 2304 / 3072 * 1440)  # 858.924
    assert cam.fx == pytest.approx(0.4474 * 1920)


def test_azure_kinect_calibration_needs_a_mode_s_size(tmp_path):
    path = _k4a_file(tmp_path)
    with pytest.raises(InputError, match=r"calibration\.json: width: .*640x576 NFOV_UNBINNED"):
        load_camera(path)
    with pytest.raises(InputError, match="800x600 px is no Azure Kinect mode"):
        load_camera(path, width=800, height=600)
    data = json.loads(path.read_text())
    data["CalibrationInformation"]["Cameras"][0]["Intrinsics"]["ModelParameters"] = "x"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"Cameras\[0\]\.Intrinsics\.ModelParameters"):
        load_camera(path, width=640, height=576)


def _ros1_with(binning: int, roi: str) -> str:
    region = "".join(f"\n  {line}" for line in roi.split(", "))
    return (
        ROS1_ECHO.replace("binning_x: 0", f"binning_x: {binning}")
        .replace("binning_y: 0", f"binning_y: {binning}")
        .split("roi:")[0]
        + f"roi: {region}\n  do_rectify: False\n---\n"
    )


def test_camera_info_binning_and_region_give_the_published_images_intrinsics(tmp_path):
    """K, width and height of a CameraInfo are the full sensor's; image_geometry moves the
    principal point by the region's offset and divides by the binning (both were ignored)."""
    path = tmp_path / "cam.yaml"
    full = "x_offset: 0, y_offset: 0, height: 0, width: 0"
    path.write_text(_ros1_with(2, full))
    cam = load_camera(path)
    assert (cam.fx, cam.fy, cam.cx, cam.cy) == (385.5 / 2, 385.75 / 2, 320.25 / 2, 239.5 / 2)
    assert (cam.width, cam.height) == (320, 240)
    path.write_text(_ros1_with(1, "x_offset: 100, y_offset: 40, height: 400, width: 480"))
    cam = load_camera(path)
    assert (cam.cx, cam.cy, cam.width, cam.height) == (220.25, 199.5, 480, 400)
    assert cam.fx == 385.5
    path.write_text(_ros1_with(2, "x_offset: 100, y_offset: 40, height: 400, width: 480"))
    cam = load_camera(path)
    assert (cam.cx, cam.cy, cam.width, cam.height) == (110.125, 99.75, 240, 200)
    # a point of the full sensor lands where the binned crop has it
    u_full = 385.5 * 0.1 / 1.0 + 320.25
    assert cam.fx * 0.1 / 1.0 + cam.cx == pytest.approx((u_full - 100) / 2)


@pytest.mark.parametrize(
    ("binning", "roi", "field"),
    [(-1, "x_offset: 0, y_offset: 0, height: 0, width: 0", "binning_x"),
     (2, "x_offset: 300, y_offset: 0, height: 480, width: 480", "roi.x_offset"),
     (1, "x_offset: 0, y_offset: -4, height: 100, width: 100", "roi.y_offset")],
)  # fmt: skip
def test_a_bad_region_or_binning_names_its_field(tmp_path, binning, roi, field):
    path = tmp_path / "cam.yaml"
    path.write_text(_ros1_with(binning, roi))
    with pytest.raises(InputError, match=f"cam.yaml.*{field}"):
        load_camera(path)
