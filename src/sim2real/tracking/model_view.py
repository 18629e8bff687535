"""Sparse views of a part, precomputed once: for viewpoints on a sphere around the part, the
surface points a camera there sees (self-occlusion included), with their normals. The
tracker picks the view nearest to the predicted viewing direction instead of rendering."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim2real.core.mesh_io import Mesh

GOLDEN_ANGLE = np.pi * (3.0 - np.sqrt(5.0))


def fibonacci_sphere(n: int) -> np.ndarray:
    """(n, 3) unit vectors spread evenly over the sphere."""
    i = np.arange(n) + 0.5
    z = 1 - 2 * i / n
    r = np.sqrt(1 - z * z)
    phi = GOLDEN_ANGLE * i
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=1)


@dataclass
class ModelViews:
    """``directions[k]``: unit vector from the part's centre toward viewpoint k (part frame);
    ``points[k]``/``normals[k]``: (P, 3) visible surface samples and outward normals (part
    frame, metres), padded by repeating samples so every view has P points."""

    directions: np.ndarray
    points: np.ndarray
    normals: np.ndarray
    centre: np.ndarray
    diameter_m: float
    contour_points: np.ndarray | None = None
    """(V, C, 3) points on the part's outline as seen from each viewpoint (part frame)."""
    contour_outward: np.ndarray | None = None
    """(V, C, 3) unit vectors, perpendicular to the view, pointing out of the outline."""
    weights: np.ndarray | None = None
    """(V, P) chance that the sensor returns depth at each point (tuned surface returns);
    None = every point is expected to return."""

    def with_returns(self, returns) -> ModelViews:
        """These views with each point's return probability from ``SurfaceReturns``."""
        p = returns.probability_at_points(self.points.reshape(-1, 3).astype(np.float64))
        self.weights = p.reshape(self.points.shape[:2]).astype(np.float32)
        return self

    def nearest(self, T_cam_part: np.ndarray) -> int:
        """Index of the view closest to where the camera sees the part from."""
        R, t = T_cam_part[:3, :3], T_cam_part[:3, 3]
        camera_in_part = -R.T @ t
        d = camera_in_part - self.centre
        return int(np.argmax(self.directions @ (d / max(np.linalg.norm(d), 1e-9))))


def build_model_views(
    mesh: Mesh,
    n_views: int = 800,
    points_per_view: int = 400,
    grid: int = 96,
    seed: int = 0,
    contour_per_view: int = 64,
) -> ModelViews:
    """Cast a ``grid`` × ``grid`` orthographic bundle at the part from each viewpoint (first hits
    are what that viewpoint sees), keep ``points_per_view`` of the hits spread evenly."""
    import open3d as o3d

    vertices = mesh.vertices
    centre = (vertices.max(axis=0) + vertices.min(axis=0)) / 2
    radius = float(np.linalg.norm(vertices - centre, axis=1).max())
    scene = o3d.t.geometry.RaycastingScene()
    scene.add_triangles(
        o3d.core.Tensor(vertices.astype(np.float32)), o3d.core.Tensor(mesh.faces.astype(np.uint32))
    )
    directions = fibonacci_sphere(n_views)
    s = np.linspace(-radius, radius, grid)
    gu, gv = np.meshgrid(s, s)
    rng = np.random.default_rng(seed)
    all_points = np.zeros((n_views, points_per_view, 3), np.float32)
    all_normals = np.zeros((n_views, points_per_view, 3), np.float32)
    contour = np.zeros((n_views, contour_per_view, 3), np.float32)
    outward = np.zeros((n_views, contour_per_view, 3), np.float32)
    rays = np.zeros((n_views, grid * grid, 6), np.float32)
    for k, d in enumerate(directions):
        helper = np.array([0.0, 0.0, 1.0]) if abs(d[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
        a = np.cross(d, helper)
        a /= np.linalg.norm(a)
        b = np.cross(d, a)
        origins = centre + 2 * radius * d + gu.reshape(-1, 1) * a + gv.reshape(-1, 1) * b
        rays[k, :, :3] = origins
        rays[k, :, 3:] = -d
    hit = scene.cast_rays(o3d.core.Tensor(rays))
    t = hit["t_hit"].numpy()
    normals = hit["primitive_normals"].numpy()
    for k, d in enumerate(directions):
        ok = np.isfinite(t[k])
        if not ok.any():
            continue
        p = rays[k, ok, :3] + rays[k, ok, 3:] * t[k, ok, None]
        n = normals[k, ok]
        n = np.where((n @ d < 0)[:, None], -n, n)  # outward = toward the viewpoint
        pick = rng.choice(len(p), points_per_view, replace=len(p) < points_per_view)
        all_points[k], all_normals[k] = p[pick], n[pick]
        contour[k], outward[k] = _outline(
            ok.reshape(grid, grid),
            rays[k, :, :3].reshape(grid, grid, 3),
            d,
            t[k].reshape(grid, grid),
            contour_per_view,
            rng,
        )
    return ModelViews(directions, all_points, all_normals, centre, 2 * radius, contour, outward)


def _outline(
    hit: np.ndarray, origins: np.ndarray, d: np.ndarray, t: np.ndarray, n: int, rng
) -> tuple[np.ndarray, np.ndarray]:
    """Outline samples of one view's hit mask: hit cells with a missed 4-neighbour, at their
    hit point, and the in-plane direction toward the missed neighbours."""
    from scipy import ndimage

    edge = hit & ~ndimage.binary_erosion(hit, border_value=0)
    iv, iu = np.nonzero(edge)
    if iv.size == 0:
        return np.zeros((n, 3), np.float32), np.zeros((n, 3), np.float32)
    pick = rng.choice(iv.size, n, replace=iv.size < n)
    iv, iu = iv[pick], iu[pick]
    g = hit.shape[0]
    # grid axes in the part frame: u along the second index, v along the first
    du = origins[0, 1] - origins[0, 0]
    dv = origins[1, 0] - origins[0, 0]
    out = np.zeros((n, 3))
    for di, dj, axis in ((0, 1, du), (0, -1, -du), (1, 0, dv), (-1, 0, -dv)):
        vv, uu = np.clip(iv + di, 0, g - 1), np.clip(iu + dj, 0, g - 1)
        missed = ~hit[vv, uu] | (vv == iv + di) & (uu == iu + dj) & (
            (iv + di < 0) | (iv + di >= g) | (iu + dj < 0) | (iu + dj >= g)
        )
        out += missed[:, None] * axis
    out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
    points = origins[iv, iu] - d * t[iv, iu, None]
    return points.astype(np.float32), out.astype(np.float32)
