"""One Open3D ray-casting scene of a triangle mesh (for viewpoint bundles, visibility,
silhouettes, distances and tuning casts)."""

from __future__ import annotations

import numpy as np


def raycasting_scene(vertices: np.ndarray, faces: np.ndarray):
    """An ``open3d.t.geometry.RaycastingScene`` holding (N, 3) ``vertices`` and (M, 3)
    ``faces`` (cast as float32 / uint32, as Open3D wants them)."""
    import open3d as o3d

    scene = o3d.t.geometry.RaycastingScene()
    scene.add_triangles(
        o3d.core.Tensor(np.ascontiguousarray(vertices, np.float32)),
        o3d.core.Tensor(np.ascontiguousarray(faces, np.uint32)),
    )
    return scene
