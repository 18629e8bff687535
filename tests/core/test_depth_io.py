from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from sim2real.core.depth_io import read_depth, sidecar_path, write_depth
from sim2real.core.errors import InputError


def _raw_png(path):
    with Image.open(path) as im:
        assert im.mode == "I;16"
        return np.array(im)


# ---- real frames -----------------------------------------------------------------------------


def test_tum_png_is_value_over_5000(real_data):
    path = real_data / "depth-open3d" / "TUM_depth.png"
    depth = read_depth(path, encoding="tum")
    raw = _raw_png(path)
    assert depth.dtype == np.float32 and depth.shape == (480, 640)
    assert np.allclose(depth, raw / 5000.0, rtol=1e-6, atol=0)
    assert np.median(depth[depth > 0]) == pytest.approx(12075 / 5000)  # 2.415 m: a room
    assert np.mean(depth > 0) == pytest.approx(0.808, abs=0.001)


def test_tum_and_sun_pngs_are_not_read_as_millimetres_by_default(real_data, tmp_path):
    """Read as millimetres, TUM's and SUN's frames land at plausible ranges (5x, 8x too far):
    their values say what they are (multiples of 5, of 8), the default encoding refuses them."""
    d = real_data / "depth-open3d"
    for name, needle in (("TUM_depth.png", "--encoding tum"), ("SUN_depth.png", "--encoding sun")):
        with pytest.raises(InputError, match=needle) as err:
            read_depth(d / name)
        assert err.value.field == "encoding" and name in str(err.value)
        assert read_depth(d / name, encoding="png").max() > 0  # the caller's word is kept
    for real_mm in (d / "depth.png", real_data / "rgbd-visp-rbt" / "depth" / "000000.png"):
        assert np.median(read_depth(real_mm)[read_depth(real_mm) > 0]) < 2.0
    rng = np.random.default_rng(0)
    as_tum = (rng.integers(400, 3000, (60, 80)) * 5).astype(np.uint16)
    Image.fromarray(as_tum).save(tmp_path / "t.png")
    (tmp_path / "t.json").write_text('{"depth_scale": 0.0002}')  # a sidecar says the unit
    assert read_depth(tmp_path / "t.png").max() == pytest.approx(as_tum.max() / 5000)


def test_sun_bit_rotation_by_hand(tmp_path):
    # (v >> 3) | (v << 13) on 16 bits: 8 -> 1 mm; 1 -> 8192 mm; 0x8001 -> 0x3000 | 0x2000
    raw = np.array([[8, 1, 0x8001, 0]], dtype=np.uint16)
    path = tmp_path / "sun.png"
    Image.fromarray(raw).save(path)
    depth = read_depth(path, encoding="sun")
    assert depth[0].tolist() == pytest.approx([0.001, 8.192, (0x1000 | 0x2000) / 1000, 0.0])


def test_sun_matches_open3d(real_data):
    o3d = pytest.importorskip("open3d")
    path = real_data / "depth-open3d" / "SUN_depth.png"
    depth = read_depth(path, encoding="sun")
    assert np.median(depth[depth > 0]) == pytest.approx(2.723)
    assert np.percentile(depth[depth > 0], [1, 99]) == pytest.approx([1.097, 8.849], abs=1e-3)
    color = o3d.geometry.Image(np.zeros((480, 640, 3), np.uint8))
    ref = np.asarray(
        o3d.geometry.RGBDImage.create_from_sun_format(color, o3d.io.read_image(str(path))).depth
    )
    kept = ref > 0  # Open3D also truncates beyond 7 m
    assert kept.mean() > 0.7
    assert np.allclose(depth[kept], ref[kept], atol=1e-6)


def test_nyu_pgm_matches_open3d(real_data):
    o3d = pytest.importorskip("open3d")
    path = real_data / "depth-open3d" / "NYU_depth.pgm"
    depth = read_depth(path)  # .pgm -> NYU raw
    buffer = path.read_bytes()
    raw = np.frombuffer(buffer, "<u2", offset=len(buffer) - 640 * 480 * 2).reshape(480, 640)
    # by hand: raw 2047 (Kinect "no data") -> 0; raw 986 -> 351.3 / (1092.5 - 986) = 3.299 m
    assert np.all(depth[raw == 2047] == 0)
    assert depth[raw == 986][0] == pytest.approx(3.299)
    assert np.median(depth[depth > 0]) == pytest.approx(3.268)
    # Open3D's example: read big-endian, then create_from_nyu_format swaps the bytes back
    big = (
        np.frombuffer(buffer, ">u2", offset=len(buffer) - 640 * 480 * 2)
        .reshape(480, 640)
        .astype("u2")
    )
    color = o3d.geometry.Image(np.zeros((480, 640, 3), np.uint8))
    ref = np.asarray(
        o3d.geometry.RGBDImage.create_from_nyu_format(color, o3d.geometry.Image(big)).depth
    )
    kept = ref > 0
    assert kept.mean() > 0.9
    assert np.allclose(depth[kept], ref[kept], atol=1e-6)


def test_kinect_frames_have_indoor_medians(real_data):
    d = real_data / "depth-open3d"
    medians = {
        "tum": np.median((x := read_depth(d / "TUM_depth.png", encoding="tum"))[x > 0]),
        "sun": np.median((x := read_depth(d / "SUN_depth.png", encoding="sun"))[x > 0]),
        "nyu": np.median((x := read_depth(d / "NYU_depth.pgm"))[x > 0]),
        "mm": np.median((x := read_depth(d / "depth.png"))[x > 0]),
    }
    assert all(0.5 < m < 5.0 for m in medians.values()), medians
    assert medians["mm"] == pytest.approx(1.586)  # a person 1.6 m in front of a wall


def test_pcl_tiff_frames_of_one_static_scene_agree(real_data):
    g = real_data / "depth-pcl" / "grabber"
    a, b = read_depth(g / "frame_0_depth.tiff"), read_depth(g / "frame_1_depth.tiff")
    assert a.shape == b.shape == (480, 640)
    ma, mb = np.median(a[a > 0]), np.median(b[b > 0])
    assert ma == pytest.approx(0.878) and mb == pytest.approx(0.880)
    both = (a > 0) & (b > 0)
    # same pixels, two frames: they differ by Kinect v1 noise and disparity steps (~2 mm at 0.9 m)
    assert np.median(np.abs(a[both] - b[both])) <= 0.005


def test_m3t_realsense_png(real_data):
    depth = read_depth(real_data / "depth-m3t" / "depth_camera_image_200.png")
    assert depth.shape == (480, 848)
    # 33 pixels hold 65535 (65.5 m): no return, which moved the median from 0.5495 m
    assert np.median(depth[depth > 0]) == pytest.approx(0.549) and depth.max() < 65.535
    assert np.mean(depth > 0) == pytest.approx(0.643, abs=0.001)


# ---- round trips -----------------------------------------------------------------------------


@pytest.fixture
def depth_mm():
    rng = np.random.default_rng(0)
    d = np.round(rng.uniform(0.3, 4.0, (24, 32)), 3).astype(np.float32)
    d[::5, ::3] = 0
    return d


def test_png_round_trip_with_sidecar(tmp_path, depth_mm):
    path = tmp_path / "d.png"
    write_depth(path, depth_mm)
    assert json.loads(sidecar_path(path).read_text()) == {"depth_scale": 0.001}
    assert _raw_png(path).dtype == np.uint16
    assert np.allclose(read_depth(path), depth_mm, atol=0.5e-3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.json", "d.png"]


def test_png_sidecar_scale_is_used(tmp_path):
    depth = np.array([[0.0, 1.2345, 6.5]], np.float32)
    path = tmp_path / "fine.png"
    write_depth(path, depth, depth_scale=0.0001)
    assert _raw_png(path).tolist() == [[0, 12345, 65000]]
    assert np.allclose(read_depth(path), depth, atol=0.5e-4)
    assert read_depth(path, depth_scale=0.001)[0, 1] == pytest.approx(12.345)  # argument wins


@pytest.mark.parametrize("name", ["d.tiff", "d.tif", "d.npy"])
def test_float_round_trips_are_exact(tmp_path, depth_mm, name):
    write_depth(tmp_path / name, depth_mm)
    out = read_depth(tmp_path / name)
    assert out.dtype == np.float32 and np.array_equal(out, depth_mm)


# ---- errors and atomicity ----------------------------------------------------------------------


@pytest.mark.parametrize("bad", [np.nan, np.inf, -0.5])
def test_invalid_depth_rejected_and_nothing_written(tmp_path, bad):
    depth = np.ones((4, 4), np.float32)
    depth[1, 2] = bad
    with pytest.raises(InputError, match="depth_m"):
        write_depth(tmp_path / "d.png", depth)
    assert list(tmp_path.iterdir()) == []


def test_png_overflow_rejected(tmp_path):
    with pytest.raises(InputError, match="depth_m") as err:
        write_depth(tmp_path / "far.png", np.full((2, 2), 70.0))  # 70000 mm > 65535
    assert "uint16" in str(err.value)
    assert list(tmp_path.iterdir()) == []


def test_failing_write_leaves_no_file_and_keeps_old_one(tmp_path, depth_mm, monkeypatch):
    path = tmp_path / "d.tiff"
    write_depth(path, depth_mm)
    import tifffile

    def broken(tmp, data, **kw):
        tmp.write_bytes(b"half")
        raise OSError("disk full")

    monkeypatch.setattr(tifffile, "imwrite", broken)
    with pytest.raises(OSError, match="disk full"):
        write_depth(path, depth_mm * 2)
    assert [p.name for p in tmp_path.iterdir()] == ["d.tiff"]  # no temp file left behind
    assert np.array_equal(read_depth(path), depth_mm)  # the old file is intact
    with pytest.raises(OSError):
        write_depth(tmp_path / "new.tiff", depth_mm)
    assert [p.name for p in tmp_path.iterdir()] == ["d.tiff"]


def test_read_errors_name_the_field(tmp_path, depth_mm):
    with pytest.raises(InputError, match="not found"):
        read_depth(tmp_path / "absent.png")
    write_depth(tmp_path / "d.png", depth_mm)
    with pytest.raises(InputError, match="encoding"):
        read_depth(tmp_path / "d.png", encoding="kinect")
    with pytest.raises(InputError, match="depth_scale"):
        read_depth(tmp_path / "d.png", encoding="tum", depth_scale=0.001)
    (tmp_path / "d.exr").write_bytes(b"x")
    with pytest.raises(InputError, match="encoding"):
        read_depth(tmp_path / "d.exr")
    Image.fromarray(np.zeros((3, 3), np.uint8)).save(tmp_path / "gray.png")
    with pytest.raises(InputError, match="mode"):
        read_depth(tmp_path / "gray.png")
    sidecar_path(tmp_path / "d.png").write_text('{"depth_scale": -1}')
    with pytest.raises(InputError, match="depth_scale"):
        read_depth(tmp_path / "d.png")


def test_png_never_overwrites_an_unrelated_json(tmp_path):
    (tmp_path / "camera.json").write_text('{"fx": 525}')
    with pytest.raises(InputError, match="not a depth sidecar"):
        write_depth(tmp_path / "camera.png", np.ones((2, 2)))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["camera.json"]


def test_json_without_depth_scale_is_not_a_sidecar(tmp_path):
    Image.fromarray(np.array([[1500]], np.uint16)).save(tmp_path / "frame.png")
    (tmp_path / "frame.json").write_text('{"timestamp": 12.5}')
    assert read_depth(tmp_path / "frame.png")[0, 0] == pytest.approx(1.5)


def test_write_errors_name_the_field(tmp_path):
    with pytest.raises(InputError, match="suffix"):
        write_depth(tmp_path / "d.jpg", np.ones((2, 2)))
    with pytest.raises(InputError, match="depth_m"):
        write_depth(tmp_path / "d.npy", np.ones((2, 2, 3)))
    with pytest.raises(InputError, match="depth_scale"):
        write_depth(tmp_path / "d.png", np.ones((2, 2)), depth_scale=0)
    assert list(tmp_path.iterdir()) == []


def test_a_pgm_of_millimetres_is_not_read_as_kinect_disparity(tmp_path):
    """A .pgm is read as NYU's raw 11-bit disparity; a standard 16-bit PGM of millimetres
    (big-endian, values far above 2047) decoded so gave garbage depth silently."""
    mm = np.random.default_rng(0).integers(500, 3000, (40, 60)).astype(">u2")
    path = tmp_path / "depth.pgm"
    path.write_bytes(b"P5\n60 40\n65535\n" + mm.tobytes())
    with pytest.raises(InputError, match=r"not the Kinect's 11-bit raw disparity.*--encoding png"):
        read_depth(path)
    assert np.allclose(read_depth(path, encoding="png"), mm / 1000.0)


def test_the_16_bit_ceiling_is_no_return(tmp_path):
    """65535 is no measurement: 65.5 m in millimetres (the real D4xx frames here hold a few
    such pixels), or a finer unit's depth clipped (a probe's 0.1 mm frame, 692 pixels)."""
    raw = np.full((40, 50), 1500, np.uint16)
    raw[:3] = 65535  # 7.5 %: said
    Image.fromarray(raw).save(tmp_path / "d.png")
    with pytest.warns(UserWarning, match="16-bit ceiling .*6.55 m at 0.0001"):
        depth = read_depth(tmp_path / "d.png", depth_scale=0.0001)
    assert (depth[:3] == 0).all() and np.allclose(depth[3:], 0.15)


def test_a_bop_frame_in_a_finer_unit_points_to_depth_scale_not_to_tum(real_data, tmp_path):
    """Real millimetres x 10 (a 0.1 mm PNG) in a BOP folder that does not say its unit: every
    value a multiple of 5 like TUM's, but reading it as TUM would put it 2x too far; BOP says
    the unit in depth_scale."""
    from visp_bop import visp_bop_scene

    scene = visp_bop_scene(
        real_data,
        tmp_path / "s",
        n=1,
        depth_factor=10,
        camera_entry=lambda e, i: {"cam_K": e["cam_K"]},
    )
    with pytest.raises(InputError, match="depth_scale") as err:
        read_depth(scene / "depth" / "000000.png")
    assert "scene_camera.json" in str(err.value) and "--encoding tum" not in str(err.value)
    (scene / "scene_camera.json").unlink()  # not BOP: TUM's values, TUM's hint
    with pytest.raises(InputError, match="--encoding tum"):
        read_depth(scene / "depth" / "000000.png")


def test_an_integer_tiff_takes_the_unit_of_its_sidecar(tmp_path):
    # an Orbbec-style 0.1 mm TIFF with {"depth_scale": 0.0001} beside it was read as
    # millimetres (10x too far, calibrated silently); PNGs took their sidecar already
    import tifffile

    tifffile.imwrite(tmp_path / "f.tiff", np.full((4, 4), 8000, np.uint16))
    (tmp_path / "f.json").write_text('{"depth_scale": 0.0001}')
    assert np.allclose(read_depth(tmp_path / "f.tiff"), 0.8)
