"""Internal geometry removal: faces no outside viewpoint can see (inner shells, walls inside a
solid, duplicated bodies inside others) are dropped.

Two passes. First, orthographic ray bundles from ``n_views`` directions around the part mark
every face hit first: those are visible. Then each face not yet marked casts rays from its
centre in ``n_dirs`` directions over the whole sphere (starting just off the face, on the side
the ray leaves): a ray that escapes without hitting anything proves the face is visible from
outside. Faces with no escaping ray are internal. A face visible only through an opening
narrower than the direction sampling (about 360 / sqrt(n_dirs) degrees) may be removed too:
that is what "no outside viewpoint can see" means at this sampling.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim2real.core.raycast import raycasting_scene
from sim2real.models.viewpoints import fibonacci_sphere, view_basis

BATCH_RAYS = 2_000_000


@dataclass
class Visibility:
    visible: np.ndarray
    """(M,) bool per face."""
    seen_by_bundles: int
    seen_by_escape: int


def face_visibility(
    vertices: np.ndarray,
    faces: np.ndarray,
    n_views: int = 120,
    grid: int = 192,
    n_dirs: int = 256,
) -> Visibility:
    """Which faces some viewpoint outside the part sees (see the module doc)."""
    import open3d as o3d

    invalid = np.iinfo(np.uint32).max
    scene = raycasting_scene(vertices, faces)
    centre = (vertices.max(axis=0) + vertices.min(axis=0)) / 2
    radius = float(np.linalg.norm(vertices - centre, axis=1).max())
    visible = np.zeros(len(faces), dtype=bool)
    s = np.linspace(-radius, radius, grid, dtype=np.float32)
    gu, gv = np.meshgrid(s, s)
    gu, gv = gu.reshape(1, -1, 1), gv.reshape(1, -1, 1)
    directions = fibonacci_sphere(n_views)
    per = max(1, BATCH_RAYS // (grid * grid))
    for b0 in range(0, n_views, per):
        D = directions[b0 : b0 + per]
        A = np.array([view_basis(d)[0] for d in D], np.float32)[:, None, :]
        B = np.array([view_basis(d)[1] for d in D], np.float32)[:, None, :]
        rays = np.empty((len(D), grid * grid, 6), np.float32)
        rays[..., :3] = (centre + 2 * radius * D).astype(np.float32)[:, None, :]
        rays[..., :3] += gu * A
        rays[..., :3] += gv * B
        rays[..., 3:] = -D.astype(np.float32)[:, None, :]
        ids = scene.cast_rays(o3d.core.Tensor(rays))["primitive_ids"].numpy().ravel()
        visible[ids[ids != invalid]] = True
    by_bundles = int(visible.sum())
    todo = np.flatnonzero(~visible)
    if len(todo):
        v0, v1, v2 = (vertices[faces[todo, m]] for m in range(3))
        c = (v0 + v1 + v2) / 3
        n = np.cross(v1 - v0, v2 - v0)
        n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-300)
        eps = 1e-5 * radius
        dirs = fibonacci_sphere(n_dirs)
        per_f = max(1, BATCH_RAYS // n_dirs)
        for f0 in range(0, len(todo), per_f):
            cc, nn = c[f0 : f0 + per_f], n[f0 : f0 + per_f]
            side = np.sign(nn @ dirs.T)[:, :, None]  # leave the face on the ray's side
            origins = cc[:, None, :] + eps * side * nn[:, None, :]
            rays = np.empty((len(cc), n_dirs, 6), np.float32)
            rays[..., :3] = origins
            rays[..., 3:] = dirs[None]
            t = scene.cast_rays(o3d.core.Tensor(rays))["t_hit"].numpy()
            escaped = ~np.isfinite(t).all(axis=1)
            visible[todo[f0 : f0 + per_f][escaped]] = True
    return Visibility(visible, by_bundles, int(visible.sum()) - by_bundles)


def removable_hidden_faces(faces: np.ndarray, n_vertices: int, visible: np.ndarray):
    """Hidden faces that may go without opening a closed surface: every face of a connected
    piece nothing sees, and the hidden faces of open or non-manifold pieces (internal walls
    glued to the outside). A closed piece partly reached by rays keeps all its faces (a crease
    or slit narrower than the ray sampling is not internal geometry).
    Returns (remove mask (M,), number of hidden faces kept)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    from sim2real.models.clean import _edge_keys

    hidden = ~visible
    if not hidden.any():
        return hidden, 0
    _, _, keys, owner = _edge_keys(faces, n_vertices)
    order = np.argsort(keys, kind="stable")
    k = keys[order]
    _, start, counts = np.unique(k, return_index=True, return_counts=True)
    first, second = order[start[counts >= 2]], order[start[counts >= 2] + 1]
    n_f = len(faces)
    G = sp.coo_matrix(
        (np.ones(len(first)), (owner[first], owner[second])), shape=(n_f, n_f)
    ).tocsr()
    n_pieces, labels = connected_components(G, directed=False)
    seen = np.bincount(labels, visible, n_pieces) > 0
    open_edges = np.zeros(n_pieces, dtype=np.int64)
    odd = counts != 2
    np.add.at(open_edges, labels[owner[order[start[odd]]]], 1)
    closed_and_seen = seen & (open_edges == 0)
    remove = hidden & ~closed_and_seen[labels]
    return remove, int((hidden & ~remove).sum())
