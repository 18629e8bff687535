from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.camera_io import (
    PCL_DEFAULT_SIZE,
    load_camera,
    load_camera_pose,
    load_world_camera_pose,
    save_camera,
)
from sim2real.core.errors import InputError

# ---- real files: the exact numbers written in them -------------------------------------------


def test_open3d_primesense_json(real_data):
    # column-major intrinsic_matrix [525,0,0, 0,525,0, 319.5,239.5,1]
    cam = load_camera(real_data / "depth-open3d" / "camera_primesense.json")
    assert (cam.fx, cam.fy, cam.cx, cam.cy) == (525.0, 525.0, 319.5, 239.5)
    assert (cam.width, cam.height, cam.depth_scale) == (640, 480, 0.001)


def test_open3d_other_camera_json(real_data):
    cam = load_camera(real_data / "depth-open3d" / "camera.json")
    assert cam.fx == pytest.approx(415.69219381653068)
    assert (cam.cx, cam.cy, cam.width, cam.height) == (319.5, 239.5, 640, 480)


def test_m3t_depth_camera_yaml(real_data):
    cam = load_camera(real_data / "depth-m3t" / "depth_camera.yaml")
    assert (cam.fx, cam.fy, cam.cx, cam.cy) == (425.773, 425.773, 427.202, 237.662)
    assert (cam.width, cam.height, cam.depth_scale) == (848, 480, 0.001)


def test_m3t_color_camera_has_default_depth_scale(real_data):
    cam = load_camera(real_data / "depth-m3t" / "color_camera.yaml")
    assert (cam.fx, cam.fy, cam.cx, cam.cy) == (698.128, 698.617, 478.459, 274.426)
    assert (cam.width, cam.height, cam.depth_scale) == (960, 540, 0.001)


def test_m3t_camera2world_pose(real_data):
    T = load_camera_pose(real_data / "depth-m3t" / "depth_camera.yaml")
    assert T.shape == (4, 4)
    assert T[:3, 3] == pytest.approx([0.01453388, 0.00013995, 0.00051057], abs=1e-9)
    assert T[0, 0] == pytest.approx(0.99985489, abs=1e-6)  # re-orthonormalised: within 1e-6
    assert np.allclose(T[:3, :3].T @ T[:3, :3], np.eye(3), atol=1e-12)
    assert np.array_equal(T[3], [0, 0, 0, 1])


def test_a_world_camera_pose_is_an_m3t_yaml_or_any_pose(real_data, tmp_path):
    """`model tune --camera-pose` with a 4x4 text said "expected a YAML mapping" (probe)."""
    m3t = real_data / "depth-m3t" / "depth_camera.yaml"
    T = load_camera_pose(m3t)
    assert np.array_equal(load_world_camera_pose(m3t), T)
    text = tmp_path / "T_world_cam.txt"
    text.write_text("\n".join(" ".join(repr(float(v)) for v in row) for row in T))
    assert np.allclose(load_world_camera_pose(text), T, atol=1e-12)
    assert np.allclose(load_world_camera_pose("0 0 0.5 0 0 0 1")[:3, 3], [0, 0, 0.5])
    with pytest.raises(InputError, match="camera_pose"):
        load_world_camera_pose(str(tmp_path / "missing.yaml"))


def test_pcl_grabber_xml(real_data):
    xml = real_data / "depth-pcl" / "grabber" / "frame_0_camera.xml"
    cam = load_camera(xml)  # the <depth> section; size from frame_0_depth.tiff beside it
    assert (cam.fx, cam.fy, cam.cx, cam.cy) == (525.0, 525.0, 320.0, 240.0)
    assert (cam.width, cam.height, cam.depth_scale) == (640, 480, 0.001)
    small = load_camera(xml, width=320, height=240)
    assert (small.width, small.height, small.fx) == (320, 240, 525.0)


# ---- synthetic files for the other formats and the error paths -------------------------------

PCL_XML = """<?xml version="1.0" encoding="utf-8"?>
<rgb><focal_length_x>1</focal_length_x><focal_length_y>1</focal_length_y>
<principal_point_x>1</principal_point_x><principal_point_y>1</principal_point_y></rgb>
<depth><focal_length_x>{fx}</focal_length_x><focal_length_y>570.3</focal_length_y>
<principal_point_x>319.5</principal_point_x><principal_point_y>239.5</principal_point_y>
<z_multiplication_factor>0.0001</z_multiplication_factor></depth>
"""


def test_pcl_xml_without_depth_tiff_defaults_to_vga(tmp_path):
    p = tmp_path / "frame_7_camera.xml"
    p.write_text(PCL_XML.format(fx=570.3))
    cam = load_camera(p)
    assert (cam.fx, cam.fy, cam.cx, cam.cy, cam.depth_scale) == (570.3, 570.3, 319.5, 239.5, 1e-4)
    assert (cam.width, cam.height) == PCL_DEFAULT_SIZE == (640, 480)


def test_pcl_xml_zero_focal_names_field(tmp_path):
    p = tmp_path / "cam.xml"
    p.write_text(PCL_XML.format(fx=0))
    with pytest.raises(InputError, match="focal_length_x") as err:
        load_camera(p)
    assert str(p) in str(err.value) and "\n" not in str(err.value)


def test_simple_json_round_trip(tmp_path):
    cam = CameraIntrinsics(
        fx=612.5, fy=611.25, cx=318.75, cy=241.5, width=640, height=480, depth_scale=0.00025
    )
    path = tmp_path / "sub" / "camera.json"
    save_camera(cam, path)
    assert load_camera(path) == cam
    assert json.loads(path.read_text()) == cam.model_dump()
    assert [p.name for p in path.parent.iterdir()] == ["camera.json"]  # no temp file left


def test_simple_json_depth_scale_optional(tmp_path):
    p = tmp_path / "camera.json"
    p.write_text(
        json.dumps({"fx": 500, "fy": 500, "cx": 320, "cy": 240, "width": 640, "height": 480})
    )
    assert load_camera(p).depth_scale == 0.001


def test_bop_camera_json_depth_scale_is_millimetres(tmp_path):
    # BOP camera_*.json: depth_mm = value * depth_scale, so 0.1 mm per unit = 1e-4 m per unit
    p = tmp_path / "camera_primesense.json"
    p.write_text(
        json.dumps(
            {
                "cx": 325.3,
                "cy": 242.0,
                "depth_scale": 0.1,
                "fx": 572.4,
                "fy": 573.6,
                "height": 480,
                "width": 640,
            }
        )
    )
    with pytest.warns(UserWarning, match="millimetres"):
        cam = load_camera(p)
    assert cam.depth_scale == pytest.approx(1e-4)


def _bop_tree(tmp_path, with_camera_json=True):
    root = tmp_path / "ycbv"
    scene = root / "test" / "000048"
    scene.mkdir(parents=True)
    if with_camera_json:
        (root / "camera.json").write_text(
            json.dumps(
                {
                    "cx": 312.9869,
                    "cy": 241.3109,
                    "depth_scale": 0.1,
                    "fx": 1066.778,
                    "fy": 1067.487,
                    "height": 480,
                    "width": 640,
                }
            )
        )
    entries = {
        "1": {
            "cam_K": [1066.778, 0.0, 312.9869, 0.0, 1067.487, 241.3109, 0.0, 0.0, 1.0],
            "depth_scale": 0.1,
        },
        "2": {
            "cam_K": [1000.0, 0.0, 300.0, 0.0, 1001.0, 200.0, 0.0, 0.0, 1.0],
            "depth_scale": 1.0,
            "elev": 45,
        },
    }
    path = scene / "scene_camera.json"
    path.write_text(json.dumps(entries))
    return path


def test_bop_scene_camera_uses_first_id_and_dataset_camera_json(tmp_path):
    cam = load_camera(_bop_tree(tmp_path))
    assert (cam.fx, cam.fy, cam.cx, cam.cy) == (1066.778, 1067.487, 312.9869, 241.3109)  # row-major
    assert (cam.width, cam.height) == (640, 480)
    assert cam.depth_scale == pytest.approx(0.1 / 1000)


def test_bop_scene_camera_image_id(tmp_path):
    cam = load_camera(_bop_tree(tmp_path), image_id=2)
    assert (cam.fx, cam.fy, cam.cx, cam.cy, cam.depth_scale) == (
        1000.0,
        1001.0,
        300.0,
        200.0,
        0.001,
    )
    with pytest.raises(InputError, match="image_id"):
        load_camera(_bop_tree(tmp_path / "b"), image_id=9)


def test_bop_scene_camera_needs_size(tmp_path):
    path = _bop_tree(tmp_path, with_camera_json=False)
    with pytest.raises(InputError, match="width"):
        load_camera(path)
    cam = load_camera(path, width=640, height=480)
    assert (cam.width, cam.height, cam.fx) == (640, 480, 1066.778)


def test_plain_opencv_yaml(tmp_path):
    p = tmp_path / "calib.yaml"
    p.write_text(
        "%YAML:1.0\n---\nimage_width: 1280\nimage_height: 720\ncamera_matrix: !!opencv-matrix\n"
        "   rows: 3\n   cols: 3\n   dt: d\n"
        "   data: [ 910.5, 0., 640.25, 0., 909.75, 360.5, 0., 0., 1. ]\n"
    )
    cam = load_camera(p, depth_scale=0.0001)
    assert (cam.fx, cam.fy, cam.cx, cam.cy) == (910.5, 909.75, 640.25, 360.5)
    assert (cam.width, cam.height, cam.depth_scale) == (1280, 720, 0.0001)


def test_opencv_yaml_distortion_is_said_to_be_ignored(tmp_path):
    p = tmp_path / "calib.yaml"
    p.write_text(
        "%YAML:1.0\nimage_width: 640\nimage_height: 480\nK: [500, 0, 320, 0, 500, 240, 0, 0, 1]\n"
        "distortion_coefficients: !!opencv-matrix\n   rows: 1\n   cols: 5\n   dt: d\n"
        "   data: [0.1, -0.2, 0., 0., 0.]\n"
    )
    with pytest.warns(UserWarning, match=r"distortion_coefficients \[0.1, -0.2.* ignored"):
        cam = load_camera(p)
    assert (cam.fx, cam.cx) == (500, 320)
    p.write_text(p.read_text().replace("0.1, -0.2", "0., 0."))  # zeros: nothing to say
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_camera(p)


def test_opencv_yaml_missing_size_names_field(tmp_path):
    p = tmp_path / "calib.yaml"
    p.write_text("%YAML:1.0\nK: [910.5, 0, 640, 0, 909, 360, 0, 0, 1]\nimage_height: 720\n")
    with pytest.raises(InputError, match="image_width"):
        load_camera(p)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"fx": 0}, "fx"),
        ({"fy": -3.0}, "fy"),
        ({"width": 0}, "width"),
        ({"height": 0}, "height"),
        ({"cx": None}, "cx"),
        ({"width": 100_000}, "width"),  # a typo that would allocate 112 GiB of rays
    ],
)
def test_simple_json_bad_values_name_the_field(tmp_path, change, field):
    values = {"fx": 500, "fy": 500, "cx": 320, "cy": 240, "width": 640, "height": 480}
    values.update(change)
    p = tmp_path / "camera.json"
    p.write_text(json.dumps(values))
    with pytest.raises(InputError) as err:
        load_camera(p)
    assert err.value.field == field
    assert f"{p}: {field}:" in str(err.value)


def test_principal_point_outside_the_image_is_refused(tmp_path):
    p = tmp_path / "camera.json"
    p.write_text(json.dumps({"fx": 500, "fy": 500, "cx": 3210, "cy": 240, "width": 640,
                             "height": 480}))  # fmt: skip
    with pytest.raises(InputError, match="cx 3210 lies more than the image's 640 px outside it"):
        load_camera(p)


def test_m3t_negative_focal_names_file_field(tmp_path):
    p = tmp_path / "cam.yaml"
    p.write_text(
        "%YAML:1.2\nintrinsics:\n  f_u: 400\n  f_v: -400\n  pp_x: 320\n  pp_y: 240\n"
        "  width: 640\n  height: 480\n"
    )
    with pytest.raises(InputError, match=r"intrinsics\.f_v"):
        load_camera(p)


def test_open3d_zero_size_names_field(tmp_path):
    p = tmp_path / "o3d.json"
    p.write_text(
        json.dumps(
            {"width": 0, "height": 480, "intrinsic_matrix": [525, 0, 0, 0, 525, 0, 319.5, 239.5, 1]}
        )
    )
    with pytest.raises(InputError, match=": width:"):
        load_camera(p)


def test_missing_and_unknown_files(tmp_path):
    with pytest.raises(InputError, match="not found"):
        load_camera(tmp_path / "absent.json")
    p = tmp_path / "weird.json"
    p.write_text(json.dumps({"focal": 500}))
    with pytest.raises(InputError, match="unknown camera format"):
        load_camera(p)
    q = tmp_path / "weird.yaml"
    q.write_text("name: cam\n")
    with pytest.raises(InputError, match="unknown camera format"):
        load_camera(q)


def test_skewed_matrix_rejected(tmp_path):
    p = tmp_path / "o3d.json"
    p.write_text(
        json.dumps(
            {
                "width": 640,
                "height": 480,
                "intrinsic_matrix": [525, 0, 0, 3, 525, 0, 319.5, 239.5, 1],
            }
        )
    )
    with pytest.raises(InputError, match="intrinsic_matrix"):
        load_camera(p)


def test_pose_errors_name_field(tmp_path):
    p = tmp_path / "cam.yaml"
    p.write_text(
        "%YAML:1.2\ncamera2world_pose: !!opencv-matrix\n  rows: 4\n  cols: 4\n  dt: d\n"
        "  data: [2,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1]\n"
    )
    with pytest.raises(InputError, match="camera2world_pose"):
        load_camera_pose(p)
    p.write_text("%YAML:1.2\ndepth_scale: 0.001\n")
    with pytest.raises(InputError, match="camera2world_pose"):
        load_camera_pose(p)


def test_module_import_is_light():
    code = (
        "import sys, sim2real.core.camera_io, sim2real.core.depth_io, sim2real.core.pointcloud_io\n"
        "print('open3d' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---- formats other labs' tools write (a probe built each from the shared cameras) -----------


def test_ros_camera_info_of_a_rectified_stream_takes_the_projection(tmp_path):
    """K is the raw lens's; the rectified frames a pinhole takes are P's (image_geometry)."""
    p = tmp_path / "camera_info.yaml"
    p.write_text(
        "image_width: 640\nimage_height: 480\ncamera_name: depth\n"
        "camera_matrix: {rows: 3, cols: 3, data: [600, 0, 318, 0, 601, 242, 0, 0, 1]}\n"
        "distortion_model: plumb_bob\n"
        "distortion_coefficients: {rows: 1, cols: 5, data: [0.1, -0.2, 0, 0, 0]}\n"
        "projection_matrix: {rows: 3, cols: 4, data: [552, 0, 321, 0, 0, 553, 238, 0, 0, 0, 1, 0]}\n"
    )
    with pytest.warns(UserWarning, match="projection matrix projection_matrix"):
        cam = load_camera(p)
    assert (cam.fx, cam.fy, cam.cx, cam.cy) == (552, 553, 321, 238)
    # without distortion K holds (P is K with a zero fourth column there)
    p.write_text(p.read_text().replace("[0.1, -0.2, 0, 0, 0]", "[0, 0, 0, 0, 0]"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_camera(p).fx == 600


def test_ros2_camera_info_lower_case_and_kalibr_and_pyrealsense2(tmp_path):
    ros2 = tmp_path / "ros2.yaml"
    ros2.write_text(
        "height: 480\nwidth: 640\ndistortion_model: plumb_bob\nd: [0, 0, 0, 0, 0]\n"
        "k: [615.0, 0.0, 320.5, 0.0, 616.0, 240.5, 0.0, 0.0, 1.0]\n"
        "p: [615.0, 0.0, 320.5, 0.0, 0.0, 616.0, 240.5, 0.0, 0.0, 0.0, 1.0, 0.0]\n"
    )
    cam = load_camera(ros2)
    assert (cam.fx, cam.cy, cam.width, cam.height) == (615.0, 240.5, 640, 480)
    kalibr = tmp_path / "camchain.yaml"
    kalibr.write_text(
        "cam0:\n  camera_model: pinhole\n  intrinsics: [458.6, 457.3, 367.2, 248.4]\n"
        "  distortion_model: radtan\n  distortion_coeffs: [0, 0, 0, 0]\n  resolution: [752, 480]\n"
        "cam1:\n  camera_model: pinhole\n  intrinsics: [1, 1, 1, 1]\n  resolution: [10, 10]\n"
    )
    cam = load_camera(kalibr)
    assert (cam.fx, cam.fy, cam.cx, cam.cy, cam.width) == (458.6, 457.3, 367.2, 248.4, 752)
    kalibr.write_text(kalibr.read_text().replace("camera_model: pinhole", "camera_model: omni", 1))
    with pytest.raises(InputError, match=r"cam0\.camera_model"):
        load_camera(kalibr)
    rs = tmp_path / "rs_intrinsics.json"
    rs.write_text(json.dumps({"width": 848, "height": 480, "ppx": 421.9, "ppy": 238.7,
                              "fx": 425.1, "fy": 425.1, "model": "brown_conrady",
                              "coeffs": [0, 0, 0, 0, 0]}))  # fmt: skip
    cam = load_camera(rs)
    assert (cam.cx, cam.cy, cam.width) == (421.9, 238.7, 848)
    rs.write_text(json.dumps({"width": 848, "height": 480, "ppx": 421.9, "fx": 425.1, "fy": 425.1}))
    with pytest.raises(InputError, match="ppy: missing field"):
        load_camera(rs)
