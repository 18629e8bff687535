"""Per-vertex surface returns of a part (``sensors.surface_returns``): interpolation across a
triangle as Open3D reports hits, nearest-vertex lookup, and the file round trip with its
refusals."""

from __future__ import annotations

import numpy as np
import pytest

from sim2real.core.errors import InputError
from sim2real.core.mesh_io import validate_mesh
from sim2real.sensors.surface_returns import FORMAT, SurfaceReturns

MESH = validate_mesh(
    np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], float) * 0.1,
    np.array([[0, 1, 2], [1, 3, 2]]),
    "square",
)


def returns(p=(0.2, 0.4, 0.6, 1.0)) -> SurfaceReturns:
    p = np.asarray(p, float)
    return SurfaceReturns(MESH, p, np.full(4, 0.5), np.array([0.0, 0.001, -0.002, 0.0]), np.ones(4))


def test_values_interpolate_with_open3d_barycentrics():
    # Open3D's (u, v) weigh the triangle's 2nd and 3rd vertices: w = (1 - u - v, u, v)
    r = returns()
    got = r.at_faces(np.array([0, 0, 1]), np.array([[0.0, 0.0], [0.25, 0.5], [1 / 3, 1 / 3]]),
                     r.return_probability)  # fmt: skip
    # face 0 (vertices 0, 1, 2) at its vertex 0: 0.2; at (0.25, 0.5): 0.25 * 0.2 + 0.25 * 0.4
    # + 0.5 * 0.6; face 1 (1, 3, 2) at its centroid: (0.4 + 1.0 + 0.6) / 3
    assert got == pytest.approx([0.2, 0.05 + 0.1 + 0.3, 2.0 / 3])


def test_probability_at_points_is_the_nearest_vertex():
    r = returns()
    pts = np.array([[0.01, 0.01, 0.0], [0.09, 0.02, 0.005], [0.2, 0.2, 0.0]])
    assert r.probability_at_points(pts).tolist() == [0.2, 0.4, 1.0]


def test_one_value_per_vertex():
    with pytest.raises(ValueError, match="one value per vertex"):
        SurfaceReturns(MESH, np.ones(3), np.ones(4), np.zeros(4), np.ones(4))


def test_file_round_trip_and_refusals(tmp_path):
    path = tmp_path / "returns.npz"
    r = returns()
    r.save(path)
    back = SurfaceReturns.load(path)
    for name in ("return_probability", "confidence", "depth_bias_m", "observations"):
        assert np.array_equal(getattr(back, name), getattr(r, name))
    assert np.array_equal(back.mesh.faces, MESH.faces)
    assert [p.name for p in tmp_path.iterdir()] == ["returns.npz"]  # no temporary left
    with pytest.raises(InputError, match="not found"):
        SurfaceReturns.load(tmp_path / "none.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(InputError, match="cannot read"):
        SurfaceReturns.load(tmp_path / "junk.npz")
    np.savez(tmp_path / "other.npz", format=np.array("something/1"))
    with pytest.raises(InputError, match=r"format: not a sim2real\.surface_returns/1"):
        SurfaceReturns.load(tmp_path / "other.npz")
    np.savez(tmp_path / "short.npz", format=np.array(FORMAT), vertices=MESH.vertices,
             faces=MESH.faces, return_probability=np.ones(3), confidence=np.ones(4),
             depth_bias_m=np.zeros(4), observations=np.ones(4))  # fmt: skip
    with pytest.raises(InputError, match="inconsistent"):
        SurfaceReturns.load(tmp_path / "short.npz")
