from __future__ import annotations

import numpy as np
import pytest

from sim2real.core.errors import InputError
from sim2real.core.pointcloud_io import read_point_cloud, write_point_cloud

pytest.importorskip("open3d")


def test_milk_model(real_data):
    points, normals = read_point_cloud(real_data / "depth-pcl" / "milk.pcd")
    assert points.shape == (13_704, 3) and points.dtype == np.float64
    assert normals is None
    # a milk carton about 0.8 m in front of the camera: ~15 cm wide, ~25 cm tall
    assert points[:, 2].min() == pytest.approx(0.714, abs=1e-3)
    assert points[:, 2].max() == pytest.approx(0.891, abs=1e-3)
    extent = points.max(axis=0) - points.min(axis=0)
    assert extent[0] == pytest.approx(0.154, abs=1e-3) and extent[1] == pytest.approx(
        0.252, abs=1e-3
    )


def test_organised_cloud_drops_nan_holes(real_data):
    points, _ = read_point_cloud(real_data / "depth-pcl" / "milk_cartoon_all_small_clorox.pcd")
    assert points.shape == (241_407, 3)  # of 640 x 480 = 307,200 pixels, the rest have no depth
    assert np.all(np.isfinite(points))


@pytest.fixture
def cloud():
    rng = np.random.default_rng(1)
    points = rng.uniform(-0.5, 1.5, (200, 3))
    normals = rng.normal(size=(200, 3))
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    return points, normals


def test_ply_round_trip_exact(tmp_path, cloud):
    points, normals = cloud
    path = tmp_path / "c.ply"
    write_point_cloud(path, points, normals, colors=np.full((200, 3), 0.5))
    got_points, got_normals = read_point_cloud(path)
    assert np.array_equal(got_points, points) and np.array_equal(got_normals, normals)
    assert [p.name for p in tmp_path.iterdir()] == ["c.ply"]


def test_pcd_round_trip_float32(tmp_path, cloud):
    points, _ = cloud
    path = tmp_path / "c.pcd"
    write_point_cloud(path, points, colors=np.zeros((200, 3), np.uint8))
    got_points, got_normals = read_point_cloud(path)
    assert got_normals is None
    assert np.allclose(got_points, points, atol=2e-7)  # PCD stores float32
    assert [p.name for p in tmp_path.iterdir()] == ["c.pcd"]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"points": np.ones((5, 2))}, "points"),
        ({"points": np.zeros((0, 3))}, "points"),
        ({"points": np.array([[0.0, np.nan, 1.0]])}, "points"),
        ({"points": np.ones((5, 3)), "normals": np.ones((4, 3))}, "normals"),
        ({"points": np.ones((5, 3)), "colors": np.full((5, 3), 2.0)}, "colors"),
    ],
)
def test_bad_input_names_field_and_writes_nothing(tmp_path, kwargs, field):
    with pytest.raises(InputError) as err:
        write_point_cloud(tmp_path / "c.ply", **kwargs)
    assert err.value.field == field and field in str(err.value)
    assert list(tmp_path.iterdir()) == []


def test_failed_write_leaves_nothing(tmp_path, cloud, monkeypatch):
    import open3d as o3d

    monkeypatch.setattr(o3d.io, "write_point_cloud", lambda *a, **k: False)
    with pytest.raises(InputError, match="could not write"):
        write_point_cloud(tmp_path / "c.pcd", cloud[0])
    assert list(tmp_path.iterdir()) == []


def test_read_errors(tmp_path, capfd):
    with pytest.raises(InputError, match="not found"):
        read_point_cloud(tmp_path / "absent.pcd")
    (tmp_path / "empty.pcd").write_bytes(b"")
    with pytest.raises(InputError, match="points"):
        read_point_cloud(tmp_path / "empty.pcd")
    (tmp_path / "junk.ply").write_text("not a ply file\n")
    with pytest.raises(InputError, match="not a PLY file"):
        read_point_cloud(tmp_path / "junk.ply")
    (tmp_path / "header.ply").write_text("ply\nformat ascii 1.0\nend_header\n")
    with pytest.raises(InputError, match="points"):
        read_point_cloud(tmp_path / "header.ply")
    # the error says it once: Open3D's reader prints nothing of its own beside it
    assert capfd.readouterr() == ("", "")
    (tmp_path / "c.obj").write_text("v 0 0 0\n")
    with pytest.raises(InputError, match="suffix"):
        read_point_cloud(tmp_path / "c.obj")
    with pytest.raises(InputError, match="suffix"):
        write_point_cloud(tmp_path / "c.xyz", np.ones((3, 3)))
