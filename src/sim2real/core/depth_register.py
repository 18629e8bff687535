"""A depth image seen from another camera: a RealSense's depth in its colour camera (what
pyrealsense2's ``rs.align`` does live), for recordings whose two streams were saved apart."""

from __future__ import annotations

import math

import numpy as np

from sim2real.core.camera import CameraIntrinsics


def depth_in_camera(
    depth_m: np.ndarray,
    depth_camera: CameraIntrinsics,
    camera: CameraIntrinsics,
    T_camera_depth: np.ndarray,
) -> np.ndarray:
    """(camera.height, camera.width) float32 metres along ``camera``'s axis, 0 where nothing
    projects: each depth pixel's surface point moved by ``T_camera_depth`` (the depth camera's
    pose in ``camera``'s frame) and projected, the nearest kept where several land on one pixel
    (Open3D's unprojection and z-buffered projection). A depth pixel is split into k x k
    samples across its footprint (k: how many target pixels one depth pixel spans, rounded up)
    so that a surface stays whole in a finer camera; surfaces the depth camera did not see
    (behind an edge, from the other viewpoint) stay 0. Already registered (the same pinhole,
    ``T_camera_depth`` the identity): ``depth_m`` as it is, but for NaN, infinite and negative
    values, which become 0 as they do when the depth is moved."""
    import open3d as o3d

    depth = np.asarray(depth_m, np.float32)
    if depth.shape != (depth_camera.height, depth_camera.width):
        raise ValueError(
            f"depth image {depth.shape[1]}x{depth.shape[0]} px, its camera "
            f"{depth_camera.width}x{depth_camera.height} px"
        )
    registered = (
        (depth_camera.width, depth_camera.height) == (camera.width, camera.height)
        and np.allclose(depth_camera.K, camera.K)
        and np.allclose(T_camera_depth, np.eye(4))
    )
    if registered:
        return np.where(np.isfinite(depth) & (depth > 0), depth, np.float32(0.0))
    k = max(1, math.ceil(max(camera.fx / depth_camera.fx, camera.fy / depth_camera.fy) - 1e-6))
    if k > 1:
        depth = np.repeat(np.repeat(depth, k, axis=0), k, axis=1)
        depth_camera = depth_camera.scaled(k)
    valid = depth[np.isfinite(depth) & (depth > 0)]
    if valid.size == 0:
        return np.zeros((camera.height, camera.width), np.float32)
    depth_max = float(valid.max()) * 1.001 + 1e-6
    cloud = o3d.t.geometry.PointCloud.create_from_depth_image(
        o3d.t.geometry.Image(o3d.core.Tensor(np.nan_to_num(depth, nan=0.0, posinf=0.0))),
        o3d.core.Tensor(depth_camera.K),
        depth_scale=1.0,
        depth_max=depth_max,
    )
    image = cloud.project_to_depth_image(
        camera.width,
        camera.height,
        o3d.core.Tensor(camera.K),
        o3d.core.Tensor(np.asarray(T_camera_depth, np.float64)),
        depth_scale=1.0,
        depth_max=float(np.inf),
    )
    return np.ascontiguousarray(image.as_tensor().numpy()[..., 0], np.float32)
