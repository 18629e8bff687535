"""The sparse viewpoint model: for a few thousand viewing directions spread evenly over a
sphere around the part, the surface points a camera there sees (self-occlusion included) with
their outward normals, and points on the outline with the in-image direction pointing out of
the part. Stored with the model (``viewpoints.npz``) so a tracker picks the view nearest to its
predicted viewing direction instead of rendering every frame.

Each view is an orthographic ray bundle (``grid`` x ``grid`` rays over a square of side
``diameter``, from beyond the part toward its centre; the corners outside the part's bounding
sphere are not cast); the first hits are the visible surface.
The tracker aligns the points of the nearest view to each frame; a tuned model adds each
point's chance of a depth return (``with_returns``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sim2real.core.atomic import atomic_path
from sim2real.core.errors import InputError
from sim2real.core.mesh_io import Mesh
from sim2real.core.raycast import raycasting_scene

GOLDEN_ANGLE = np.pi * (3.0 - np.sqrt(5.0))
VIEWS_FORMAT = 2
"""2: with the outline reach (``contour_inside_m``, ``contour_outside_m``); 1 is still read."""
BATCH_RAYS = 2_000_000
"""Rays cast per Open3D call (48 MB of float32 rays): bounds the memory of a few thousand views."""


def fibonacci_sphere(n: int) -> np.ndarray:
    """(n, 3) unit vectors spread evenly over the sphere (golden-angle spiral)."""
    i = np.arange(n) + 0.5
    z = 1 - 2 * i / n
    r = np.sqrt(1 - z * z)
    phi = GOLDEN_ANGLE * i
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=1)


def view_basis(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors (a, b) completing the viewing direction ``d`` to a right-handed frame."""
    helper = np.array([0.0, 0.0, 1.0]) if abs(d[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    a = np.cross(d, helper)
    a /= np.linalg.norm(a)
    return a, np.cross(d, a)


@dataclass
class ViewpointModel:
    """Per view k (part frame, metres): ``points[k]`` / ``normals[k]`` (P, 3) visible surface
    samples and outward unit normals; ``contour_points[k]`` / ``contour_outward[k]`` (C, 3)
    points on the outline (at the silhouette's edge, to a fraction of a grid cell) and unit
    vectors perpendicular to the view pointing out of it, with ``contour_inside_m`` /
    ``contour_outside_m`` how far the part and the background reach along that direction.
    Views with fewer hits than P repeat samples; ``hits[k]`` says how many rays hit."""

    directions: np.ndarray
    """(V, 3) float64 unit vectors from the part's centre toward each viewpoint."""
    points: np.ndarray
    """(V, P, 3) float32 metres."""
    normals: np.ndarray
    """(V, P, 3) float32 unit vectors (stored as float16)."""
    contour_points: np.ndarray
    """(V, C, 3) float32 metres."""
    contour_outward: np.ndarray
    """(V, C, 3) float32 unit vectors."""
    hits: np.ndarray
    """(V,) int32 rays of the ``grid`` x ``grid`` bundle that hit the part."""
    centre: np.ndarray
    """(3,) bounding-box centre [m]."""
    diameter_m: float
    """Twice the largest distance from ``centre`` to a vertex [m] (the bundle's side)."""
    grid: int
    build_s: float = 0.0
    edge_distance_m: np.ndarray | None = None
    """(V, P) float32: how far each surface point lies from the view's outline, in the view
    plane [m]: depth sensors blur, fatten or lose what is near an outline (thin features,
    mixed pixels), so points close to it are weak evidence; None when not stored."""
    contour_inside_m: np.ndarray | None = None
    """(V, C) float32: how far the silhouette reaches inward from each outline point, along
    -outward [m] (a thin feature is short); None when not stored (older model files)."""
    contour_outside_m: np.ndarray | None = None
    """(V, C) float32: how far the background reaches outward before the silhouette again [m]
    (the gap to another part of the outline; the bundle's edge counts as open)."""
    weights: np.ndarray | None = None
    """(V, P) float32 chance that the sensor returns depth at each point (tuned surface
    returns); None = every point is expected to return."""

    def __len__(self) -> int:
        return len(self.directions)

    def nearest_direction(self, direction: np.ndarray) -> int:
        """Index of the view whose direction is closest to ``direction`` (part frame)."""
        d = np.asarray(direction, dtype=np.float64)
        return int(np.argmax(self.directions @ (d / max(np.linalg.norm(d), 1e-12))))

    def nearest(self, T_cam_part: np.ndarray) -> int:
        """Index of the view closest to where a camera at ``T_cam_part`` sees the part from."""
        R, t = T_cam_part[:3, :3], T_cam_part[:3, 3]
        return self.nearest_direction(-R.T @ t - self.centre)

    def with_returns(self, returns) -> ViewpointModel:
        """These views with each point's chance of a return from ``SurfaceReturns`` (a tuned
        model); sets and returns ``self``."""
        p = returns.probability_at_points(self.points.reshape(-1, 3).astype(np.float64))
        self.weights = p.reshape(self.points.shape[:2]).astype(np.float32)
        return self


def _contours(hit: np.ndarray):
    """(B, g, g) hit masks -> (edge, out_u, out_v, offset): hit cells with a missed 4-neighbour
    (the grid border counts as missed), the outward unit direction from the gradient of the
    mask smoothed over 1.5 cells, and how far [cells] the half-level of the smoothed mask lies
    beyond the cell centre along it (where the silhouette's edge is)."""
    from scipy import ndimage

    pad = np.pad(hit, ((0, 0), (1, 1), (1, 1)), constant_values=False)
    edge = hit & (~pad[:, 1:-1, 2:] | ~pad[:, 1:-1, :-2] | ~pad[:, 2:, 1:-1] | ~pad[:, :-2, 1:-1])
    smooth = ndimage.gaussian_filter(hit.astype(np.float32), (0, 1.5, 1.5), mode="constant")
    gv, gu = np.gradient(smooth, axis=(1, 2))
    norm = np.sqrt(gu * gu + gv * gv)
    out_u = np.where(norm > 1e-6, -gu / np.maximum(norm, 1e-6), 0.0)
    out_v = np.where(norm > 1e-6, -gv / np.maximum(norm, 1e-6), 0.0)
    offset = np.clip((smooth - 0.5) / np.maximum(norm, 1e-6), 0.0, 1.5)
    return edge, out_u, out_v, offset


REACH_CELLS = 48
"""The outline reach is followed this many cells at most (half the default grid): beyond, it
counts as open, farther than any correspondence line is long."""


def _reach(full: np.ndarray, cells: np.ndarray, du: np.ndarray, dv: np.ndarray, inside: bool):
    """(B, C) cells from each contour cell (flat indices ``cells`` into (B, g, g) ``full``)
    along (du, dv) until the mask changes: leaving the silhouette (``inside``, stepping
    inward) or meeting it again (stepping outward; the grid's edge counts as never), followed
    ``REACH_CELLS`` cells at most (then: the grid's size, open)."""
    B, g, _ = full.shape
    v0, u0 = np.divmod(cells.astype(np.int32), g)
    steps = np.arange(1, min(g, REACH_CELLS + 1), dtype=np.float32)
    u = np.rint(u0[..., None] + du[..., None] * steps).astype(np.int32)
    v = np.rint(v0[..., None] + dv[..., None] * steps).astype(np.int32)
    out = (u < 0) | (u >= g) | (v < 0) | (v >= g)
    flat = full.reshape(B, -1)
    index = np.minimum(np.maximum(v, 0), g - 1) * g + np.minimum(np.maximum(u, 0), g - 1)
    value = np.take_along_axis(flat, index.reshape(B, -1), axis=1).reshape(u.shape) & ~out
    change = ~value if inside else value
    return np.where(change.any(axis=2), change.argmax(axis=2) + 1, g).astype(np.float32)


def _random_members(mask: np.ndarray, n: int, rng) -> np.ndarray:
    """(B, n) indices of True entries of each row of the (B, M) ``mask``, drawn at random
    without repetition; a row with fewer than n repeats its members (none: any index)."""
    keys = rng.random(mask.shape, dtype=np.float32)
    keys[~mask] += 2.0  # members sort first
    n_take = min(n, mask.shape[1])
    idx = np.argpartition(keys, n_take - 1, axis=1)[:, :n_take]
    if n_take < n:
        idx = np.concatenate([idx, idx[:, : n - n_take]], axis=1)
    count = mask.sum(axis=1)
    for r in np.flatnonzero((count < n) & (count > 0)):
        members = idx[r][mask[r, idx[r]]]
        idx[r] = members[np.arange(n) % len(members)]
    return idx


def build_viewpoints(
    mesh: Mesh,
    n_views: int = 2000,
    points_per_view: int = 400,
    contour_per_view: int = 200,
    grid: int = 96,
    seed: int = 0,
) -> ViewpointModel:
    """Cast a ``grid`` x ``grid`` orthographic bundle from each of ``n_views`` Fibonacci-sphere
    directions; keep ``points_per_view`` of the first hits and ``contour_per_view`` outline
    cells per view, picked at random (seeded) among all of them."""
    if n_views < 1 or points_per_view < 1 or contour_per_view < 1 or grid < 4:
        raise InputError(None, "views", "need >= 1 view, point and contour point, grid >= 4")
    import open3d as o3d
    from scipy import ndimage

    t0 = time.perf_counter()
    vertices = mesh.vertices
    centre = (vertices.max(axis=0) + vertices.min(axis=0)) / 2
    radius = float(np.linalg.norm(vertices - centre, axis=1).max())
    scene = raycasting_scene(mesh.vertices, mesh.faces)
    directions = fibonacci_sphere(n_views)
    s = np.linspace(-radius, radius, grid)
    gu, gv = np.meshgrid(s, s)  # u along the second index (columns), v along the first (rows)
    # the part lies inside the sphere of radius ``radius``: rays outside the disc always miss
    spacing = 2 * radius / (grid - 1)
    cells = np.flatnonzero((gu**2 + gv**2).ravel() <= (radius + spacing) ** 2)
    cell_of = np.full(grid * grid, -1, dtype=np.int64)
    cell_of[cells] = np.arange(len(cells))
    uv = np.stack([gu.ravel()[cells], gv.ravel()[cells]], axis=1).astype(np.float32)
    rng = np.random.default_rng(seed)
    V, P, C, G2 = n_views, points_per_view, contour_per_view, grid * grid
    points = np.zeros((V, P, 3), np.float32)
    normals = np.zeros((V, P, 3), np.float32)
    contour = np.zeros((V, C, 3), np.float32)
    outward = np.zeros((V, C, 3), np.float32)
    reach_in = np.zeros((V, C), np.float32)
    edge_dist = np.zeros((V, P), np.float32)
    reach_out = np.zeros((V, C), np.float32)
    hits = np.zeros(V, np.int32)
    batch = max(1, BATCH_RAYS // len(cells))
    for b0 in range(0, V, batch):
        ks = range(b0, min(V, b0 + batch))
        bases = [view_basis(directions[k]) for k in ks]
        A = np.array([ab[0] for ab in bases], np.float32)[:, None, :]
        B = np.array([ab[1] for ab in bases], np.float32)[:, None, :]
        D = directions[ks.start : ks.stop].astype(np.float32)[:, None, :]
        rays = np.empty((len(ks), len(cells), 6), np.float32)
        # origins: centre + 2 r d + u a + v b, as one (M, 2) @ (B, 2, 3) product
        rays[:, :, :3] = uv @ np.concatenate([A, B], axis=1)
        rays[:, :, :3] += (centre + 2 * radius * D).astype(np.float32)
        rays[:, :, 3:] = -D
        cast = scene.cast_rays(o3d.core.Tensor(rays))
        t = cast["t_hit"].numpy()
        nrm = cast["primitive_normals"].numpy()
        ok = np.isfinite(t)  # (B, cells)
        full = np.zeros((len(ks), G2), dtype=bool)
        full[:, cells] = ok
        mask = full.reshape(len(ks), grid, grid)
        edge, out_u, out_v, offset = _contours(mask)
        kk = np.arange(ks.start, ks.stop)
        hits[kk] = ok.sum(axis=1)
        pick = _random_members(ok, P, rng)  # (B, P) cell indices, hits first
        rows = np.arange(len(ks))[:, None]
        # distance of each hit cell to the nearest miss, within its own view
        dist = np.stack([ndimage.distance_transform_edt(m) for m in mask])
        edge_dist[kk] = dist.reshape(len(ks), -1)[rows, cells[pick]] * spacing
        points[kk] = rays[rows, pick, :3] + rays[rows, pick, 3:] * t[rows, pick, None]
        n = nrm[rows, pick]
        facing = np.einsum("bpj,bj->bp", n, D[:, 0, :])
        normals[kk] = np.where((facing < 0)[..., None], -n, n)  # the seen side faces the viewer
        pe = _random_members(edge.reshape(len(ks), -1), C, rng)  # (B, C) full-grid indices
        pc = cell_of[pe]
        ou = out_u.reshape(len(ks), -1)[rows, pe].astype(np.float32)
        ov = out_v.reshape(len(ks), -1)[rows, pe].astype(np.float32)
        o = ou[..., None] * A + ov[..., None] * B
        shift = (offset.reshape(len(ks), -1)[rows, pe] * spacing)[..., None]
        contour[kk] = rays[rows, pc, :3] + rays[rows, pc, 3:] * t[rows, pc, None] + o * shift
        outward[kk] = o
        reach_in[kk] = _reach(mask, pe, -ou, -ov, True) * spacing
        reach_out[kk] = _reach(mask, pe, ou, ov, False) * spacing
        empty = hits[kk] == 0
        points[kk[empty]] = normals[kk[empty]] = contour[kk[empty]] = outward[kk[empty]] = 0.0
        reach_in[kk[empty]] = reach_out[kk[empty]] = 0.0
        edge_dist[kk[empty]] = 0.0
    return ViewpointModel(
        directions,
        points,
        normals,
        contour,
        outward,
        hits,
        centre,
        2 * radius,
        grid,
        time.perf_counter() - t0,
        edge_distance_m=edge_dist,
        contour_inside_m=reach_in,
        contour_outside_m=reach_out,
    )


def save_viewpoints(path: str | Path, views: ViewpointModel) -> None:
    """Write ``views`` as a compressed ``.npz`` (normals as float16), atomically."""
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.savez_compressed(
            fh,
            format_version=np.int32(VIEWS_FORMAT),
            directions=views.directions,
            points=views.points.astype(np.float32),
            normals=views.normals.astype(np.float16),
            contour_points=views.contour_points.astype(np.float32),
            contour_outward=views.contour_outward.astype(np.float16),
            hits=views.hits.astype(np.int32),
            **({} if views.edge_distance_m is None else {"edge_distance_m": views.edge_distance_m}),
            **(
                {}
                if views.contour_inside_m is None
                else {
                    "contour_inside_m": views.contour_inside_m.astype(np.float32),
                    "contour_outside_m": views.contour_outside_m.astype(np.float32),
                }
            ),
            centre=views.centre,
            diameter_m=np.float64(views.diameter_m),
            grid=np.int32(views.grid),
        )


def load_viewpoints(path: str | Path) -> ViewpointModel:
    """Read a ``viewpoints.npz``; ``InputError`` when missing, corrupt or inconsistent."""
    import zipfile

    path = Path(path)
    if not path.is_file():
        raise InputError(path, None, "viewpoint model not found")
    try:
        with np.load(path) as z:
            data = {k: z[k] for k in z.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise InputError(path, None, f"cannot read the viewpoint model ({exc})") from exc
    need = ("directions", "points", "normals", "contour_points", "contour_outward", "centre")
    missing = [k for k in need if k not in data]
    if missing:
        raise InputError(path, missing[0], "missing from the viewpoint model")
    if int(data.get("format_version", 0)) not in (1, VIEWS_FORMAT):
        raise InputError(path, "format_version", f"expected 1 or {VIEWS_FORMAT}")
    d = data["directions"]
    V = len(d)
    for k in ("points", "normals", "contour_points", "contour_outward"):
        a = data[k]
        if a.ndim != 3 or a.shape[0] != V or a.shape[2] != 3:
            raise InputError(path, k, f"expected ({V}, N, 3), got {a.shape}")
        if not np.all(np.isfinite(a)):
            raise InputError(path, k, "non-finite values")
    return ViewpointModel(
        d.astype(np.float64),
        data["points"].astype(np.float32),
        data["normals"].astype(np.float32),
        data["contour_points"].astype(np.float32),
        data["contour_outward"].astype(np.float32),
        data.get("hits", np.zeros(V, np.int32)).astype(np.int32),
        data["centre"].astype(np.float64),
        float(data["diameter_m"]),
        int(data.get("grid", 0)),
        edge_distance_m=_reach_array(data, "edge_distance_m", path, data["points"]),
        contour_inside_m=_reach_array(data, "contour_inside_m", path, data["contour_points"]),
        contour_outside_m=_reach_array(data, "contour_outside_m", path, data["contour_points"]),
    )


def _reach_array(data: dict, key: str, path: Path, contour: np.ndarray) -> np.ndarray | None:
    if key not in data:
        return None
    a = data[key]
    if a.shape != contour.shape[:2] or not np.all(np.isfinite(a)):
        raise InputError(path, key, f"expected finite ({contour.shape[0]}, {contour.shape[1]})")
    return a.astype(np.float32)
