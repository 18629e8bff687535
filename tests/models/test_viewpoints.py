import numpy as np
import pytest
import trimesh

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.errors import InputError
from sim2real.core.mesh_io import Mesh
from sim2real.models.viewpoints import (
    build_viewpoints,
    fibonacci_sphere,
    load_viewpoints,
    save_viewpoints,
)
from sim2real.sensors.demo_part import machined_bracket
from sim2real.sensors.render import DepthRenderer
from sim2real.sensors.scene import make_scene


@pytest.fixture(scope="module")
def bracket_views():
    return machined_bracket(), build_viewpoints(machined_bracket(), n_views=300, grid=96)


def _camera_looking_along(direction, centre, distance):
    """T_cam_part of a camera at centre + distance * direction looking at the centre."""
    z = -direction / np.linalg.norm(direction)
    helper = np.array([0.0, 0.0, 1.0]) if abs(z[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    R_part_cam = np.stack([x, y, z], axis=1)
    eye = centre + distance * direction / np.linalg.norm(direction)
    T = np.eye(4)
    T[:3, :3] = R_part_cam.T
    T[:3, 3] = -R_part_cam.T @ eye
    return T


def test_a_view_agrees_with_a_depth_render_from_its_direction(bracket_views):
    # a far, narrow camera (5 m, 3 deg) is close to the bundle's orthographic projection; the
    # project's own renderer (perspective pixel rays) is the independent reference
    from scipy.spatial import cKDTree

    mesh, views = bracket_views
    camera = CameraIntrinsics.from_hfov(640, 480, 3.0)
    for k in (5, 100, 222):
        d = views.directions[k]
        T = _camera_looking_along(d, views.centre, 5.0)
        depth = DepthRenderer(make_scene([mesh], [T]), camera).render_ideal().depth_m
        # each stored point projects onto a pixel whose rendered depth is the point's depth
        p_cam = views.points[k] @ T[:3, :3].T + T[:3, 3]
        u = np.round(p_cam[:, 0] / p_cam[:, 2] * camera.fx + camera.cx).astype(int)
        v = np.round(p_cam[:, 1] / p_cam[:, 2] * camera.fy + camera.cy).astype(int)
        dz = np.abs(depth[v, u] - p_cam[:, 2])
        # pixels are 0.41 mm wide there; rounding to a pixel centre on a slanted face moves
        # the depth by up to half that times tan(incidence): 95 % within 1 mm, median 0.2 mm
        assert np.mean(dz < 1e-3) > 0.95 and np.median(dz) < 0.2e-3
        assert (views.normals[k] @ d > -1e-6).all()  # normals face the viewpoint
        # coverage: the rendered surface has a stored point nearby (P points over the view)
        rendered = (camera.backproject(depth) - T[:3, 3]) @ T[:3, :3]
        spacing = np.sqrt(views.hits[k] / len(views.points[k])) * views.diameter_m / views.grid
        near, _ = cKDTree(views.points[k]).query(rendered)
        assert np.mean(near < 3 * spacing) > 0.95


def test_contour_points_lie_on_the_outline_of_a_sphere():
    s = trimesh.creation.icosphere(4, radius=0.05)
    views = build_viewpoints(Mesh(s.vertices, s.faces), n_views=50, grid=128)
    for k in range(0, 50, 7):
        d = views.directions[k]
        c = views.contour_points[k]
        # on the outline of a sphere seen along d: perpendicular to d, at the radius
        radial = c - (c @ d)[:, None] * d
        assert np.allclose(np.linalg.norm(radial, axis=1), 0.05, atol=0.003)
        out = views.contour_outward[k]
        cos = np.einsum("ij,ij->i", out, radial / np.linalg.norm(radial, axis=1, keepdims=True))
        assert np.median(cos) > 0.9 and (cos > 0.3).all()


def test_save_load_round_trip_and_nearest_view(tmp_path, bracket_views):
    _, views = bracket_views
    save_viewpoints(tmp_path / "v.npz", views)
    back = load_viewpoints(tmp_path / "v.npz")
    assert np.array_equal(back.points, views.points)
    assert np.allclose(back.normals, views.normals, atol=1e-3)  # stored as float16
    assert back.diameter_m == views.diameter_m and back.grid == views.grid
    for k in (0, 17, 299):
        assert back.nearest_direction(views.directions[k] * 3.0) == k
        T = _camera_looking_along(views.directions[k], views.centre, 0.7)
        assert back.nearest(T) == k
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(InputError, match="cannot read"):
        load_viewpoints(tmp_path / "bad.npz")


def test_fibonacci_directions_are_unit_and_even():
    d = fibonacci_sphere(2000)
    assert np.allclose(np.linalg.norm(d, axis=1), 1)
    # every direction has a neighbour within ~ the mean spacing sqrt(4 pi / n) = 4.5 deg
    cos = d @ d.T
    np.fill_diagonal(cos, -1)
    nearest = np.degrees(np.arccos(cos.max(axis=1)))
    assert nearest.max() < 5.0 and nearest.min() > 2.5
