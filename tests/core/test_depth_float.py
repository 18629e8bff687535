"""Depth in other units than the file type suggests: float millimetres (the ZED SDK's
``UNIT.MILLIMETER``, datasets' float32 mm) and uint16 .npy dumps of a sensor's units."""

from __future__ import annotations

import json

import numpy as np
import pytest
import tifffile

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.camera_io import save_camera
from sim2real.core.depth_io import read_depth
from sim2real.core.errors import InputError


@pytest.fixture
def depth_m():
    """(48, 64) metres, 0.4-2.5 m, a NaN (a stereo camera's no return) and a zero."""
    depth = np.random.default_rng(3).uniform(0.4, 2.5, (48, 64)).astype(np.float32)
    depth[0, 0], depth[0, 1] = np.nan, 0.0
    return depth


def _expected(depth_m):
    return np.nan_to_num(depth_m, nan=0.0)


@pytest.mark.parametrize("suffix", [".npy", ".tiff"])
def test_float_millimetres_with_an_explicit_scale_are_metres(tmp_path, depth_m, suffix):
    path = tmp_path / f"zed_depth{suffix}"
    mm = depth_m * 1000
    np.save(path, mm) if suffix == ".npy" else tifffile.imwrite(path, mm)
    depth = read_depth(path, depth_scale=0.001)
    assert depth.dtype == np.float32
    assert np.allclose(depth, _expected(depth_m), rtol=1e-6, atol=0)


@pytest.mark.parametrize("suffix", [".npy", ".tiff"])
def test_float_millimetres_without_a_scale_are_refused(tmp_path, depth_m, suffix):
    path = tmp_path / f"zed_depth{suffix}"
    mm = depth_m * 1000
    np.save(path, mm) if suffix == ".npy" else tifffile.imwrite(path, mm)
    with pytest.raises(
        InputError, match=r"depth_scale: .*looks like millimetres.*--depth-scale 0\.001"
    ):
        read_depth(path)


def test_float_centimetres_are_named_so_and_both_readings_are_given(tmp_path, depth_m):
    """0.4-2.5 m in centimetres has a median of about 145: as millimetres 0.145 m, nearer than
    a scene's median; the error suggests 0.01 and states both readings."""
    path = tmp_path / "frame.npy"
    np.save(path, depth_m * 100)
    with pytest.raises(InputError) as err:
        read_depth(path)
    message = str(err.value)
    assert "looks like centimetres" in message and "--depth-scale 0.01 " in message
    assert "in millimetres it is 0.14" in message and "in centimetres 1.4" in message
    assert len(message.splitlines()) == 1
    assert np.allclose(read_depth(path, depth_scale=0.01), _expected(depth_m), rtol=1e-6)


def test_float_metres_with_a_camera_file_s_default_unit_are_unchanged(tmp_path, depth_m):
    """A camera file's depth_scale (stated or its 0.001 default) is for integer frames: real
    frames (npy) and a tracked sequence (float TIFF, given the camera's unit) keep metres."""
    from sim2real.sensors.real_frame import load_real_frame
    from sim2real.tracking.sequence import load_sequence

    np.save(tmp_path / "frame.npy", depth_m)
    tifffile.imwrite(tmp_path / "000000.tiff", depth_m)
    camera = CameraIntrinsics(fx=60, fy=60, cx=31.5, cy=23.5, width=64, height=48)
    stated = camera.model_copy(update={"depth_scale": 0.001})
    for cam in (camera, stated):
        with pytest.warns(UserWarning, match="1 non-finite"):
            depth, _ = load_real_frame(tmp_path / "frame.npy", cam)
        assert np.array_equal(depth, _expected(depth_m))
    save_camera(camera, tmp_path / "camera.json")
    seq = load_sequence(
        [tmp_path / "000000.tiff"], camera=tmp_path / "camera.json", use_color=False
    )
    assert seq.depth_scale == 0.001
    assert np.array_equal(seq.read(0), _expected(depth_m))


def test_a_scale_given_for_float_metres_is_refused(tmp_path, depth_m):
    np.save(tmp_path / "d.npy", depth_m)
    with pytest.raises(InputError, match=r"depth_scale: float depth already in metres"):
        read_depth(tmp_path / "d.npy", depth_scale=0.001)
    assert np.array_equal(read_depth(tmp_path / "d.npy", depth_scale=1.0), _expected(depth_m))


def test_uint16_npy_takes_an_explicit_or_sidecar_scale(tmp_path, depth_m):
    """A uint16 .npy was refused ("expected float metres"); without a unit it still is."""
    units = np.rint(_expected(depth_m) / 1e-4).astype(np.uint16)  # a D405's 0.1 mm
    path = tmp_path / "d405.npy"
    np.save(path, units)
    depth = read_depth(path, depth_scale=1e-4)
    assert np.allclose(depth, units * 1e-4, rtol=1e-6, atol=0)
    assert depth[0, 0] == 0
    with pytest.raises(InputError, match=r"d405\.npy: depth_scale: .*--depth-scale"):
        read_depth(path)
    (tmp_path / "d405.json").write_text(json.dumps({"depth_scale": 1e-4}))
    assert np.array_equal(read_depth(path), depth)
