"""A stand-in for the randomized renderer in the detector's tests: a box part ray-cast from
random poses, shaded with one flat colour per face on a noise background (fast, small)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import trimesh

from sim2real.core.mesh_io import Mesh
from sim2real.core.pose import invert_pose, look_at
from sim2real.core.raycast import raycasting_scene

BOX = trimesh.creation.box(extents=[0.06, 0.04, 0.03])
MESH = Mesh(np.asarray(BOX.vertices), np.asarray(BOX.faces, np.int32), "box")


def standin_sample(index: int, width=64, height=48, mesh=MESH):
    """One frame: rgb (H, W, 3) uint8, depth_m, mask, T_cam_part, K (fx = 0.9 W)."""
    import open3d as o3d

    rng = np.random.default_rng(index)
    f = 0.9 * width
    K = np.array([[f, 0, (width - 1) / 2], [0, f, (height - 1) / 2], [0, 0, 1.0]])
    eye = rng.normal(size=3)
    eye = eye / np.linalg.norm(eye) * rng.uniform(0.3, 0.5)
    T_cam_part = invert_pose(look_at(eye, rng.uniform(-0.02, 0.02, 3)))
    u, v = np.meshgrid(np.arange(width), np.arange(height))
    d_cam = np.stack([(u - K[0, 2]) / f, (v - K[1, 2]) / f, np.ones_like(u, float)], -1)
    T_part_cam = invert_pose(T_cam_part)
    dirs = d_cam.reshape(-1, 3) @ T_part_cam[:3, :3].T
    origin = np.broadcast_to(T_part_cam[:3, 3], dirs.shape)
    scene = raycasting_scene(mesh.vertices, mesh.faces)
    hit = scene.cast_rays(o3d.core.Tensor(np.c_[origin, dirs].astype(np.float32)))
    t = hit["t_hit"].numpy().reshape(height, width)
    mask = np.isfinite(t)
    depth = np.where(mask, t, 0.0).astype(np.float32)  # direction z = 1 in the camera frame
    face = hit["primitive_ids"].numpy().reshape(height, width)
    colours = rng.integers(60, 255, (len(mesh.faces) // 2 + 1, 3))
    rgb = rng.integers(0, 255, (height, width, 3)).astype(np.uint8)
    rgb[mask] = colours[face[mask] // 2]
    return SimpleNamespace(rgb=rgb, depth_m=depth, mask=mask, T_cam_part=T_cam_part, K=K)


class StandinRenderer:
    """``SampleRenderer``-like: ``sample(index, part_absent)`` (absent: the noise alone)."""

    def __init__(self, width=64, height=48):
        self.width, self.height = width, height

    def sample(self, index: int, part_absent: bool = False):
        s = standin_sample(index, self.width, self.height)
        if part_absent:
            s.rgb = np.random.default_rng(index).integers(0, 255, s.rgb.shape).astype(np.uint8)
            s.depth_m, s.mask = np.zeros_like(s.depth_m), np.zeros_like(s.mask)
        return s
