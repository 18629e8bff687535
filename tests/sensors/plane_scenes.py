"""Frames of planes computed by hand (no ray casting): each plane fills a band of image
columns, so depth, normals and incidence are exact and known."""

from __future__ import annotations

import numpy as np

from sim2real.core.camera import CameraIntrinsics
from sim2real.sensors.frame import RenderedFrame
from sim2real.sensors.render import depth_edges

CAMERA = CameraIntrinsics(fx=400, fy=400, cx=319.5, cy=239.5, width=640, height=480)


def tilted_normal(tilt_deg: float) -> np.ndarray:
    """Unit normal facing the camera of a plane tilted by ``tilt_deg`` about the camera's x
    axis: depth z = d / (sin(tilt) y + cos(tilt)) along the ray (x, y, 1), nearest at the
    bottom of the image; the incidence at the image centre is ``tilt_deg``."""
    a = np.radians(tilt_deg)
    return np.array([0.0, -np.sin(a), -np.cos(a)])


def planes_frame(planes: list[tuple], camera: CameraIntrinsics = CAMERA) -> RenderedFrame:
    """``planes``: (unit normal facing the camera, offset d [m], first column, end column[,
    first row, end row]); plane k fills its columns (rows: all, or the given ones) where it
    lies in front of the camera, over the planes before it (a box in front of a floor)."""
    rays = camera.pixel_rays().astype(np.float64)
    unit = rays / np.linalg.norm(rays, axis=2, keepdims=True)
    h, w = rays.shape[:2]
    depth = np.zeros((h, w))
    normals = np.zeros((h, w, 3), np.float32)
    incidence = np.zeros((h, w), np.float32)
    ids = np.full((h, w), -1, np.int32)
    for k, (n, d, u0, u1, *rows) in enumerate(planes):
        v0, v1 = rows if rows else (0, h)
        facing = rays[v0:v1, u0:u1] @ n
        z = np.where(facing < -1e-9, -d / np.where(facing < -1e-9, facing, -1), 0.0)
        depth[v0:v1, u0:u1] = z
        band = np.zeros((h, w), bool)
        band[v0:v1, u0:u1] = z > 0
        normals[band] = n
        incidence[band] = np.arccos(np.clip(np.abs(unit[band] @ n), 0, 1))
        ids[band] = k
    depth = depth.astype(np.float32)
    edge = depth_edges(np.where(depth > 0, depth, np.float32(np.nan)))
    return RenderedFrame(camera, depth, normals, incidence, ids, edge, np.zeros((h, w), bool))
