"""A depth image moved into another camera equals that camera's own render of the scene:
a box over a plane seen by a coarse depth camera and by a finer colour camera 15 mm beside
it (a RealSense's layout), and the depth moved into the colour camera where it projects."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.depth_register import depth_in_camera
from sim2real.core.mesh_io import Mesh
from sim2real.core.pose import make_pose
from sim2real.sensors.render import DepthRenderer
from sim2real.sensors.scene import make_scene

DEPTH_CAM = CameraIntrinsics(fx=212.9, fy=212.9, cx=105.5, cy=59.5, width=212, height=120)
COLOR_CAM = CameraIntrinsics(fx=350.0, fy=350.0, cx=159.5, cy=89.5, width=320, height=180)


def _mesh(extents) -> Mesh:
    box = trimesh.creation.box(extents=extents)
    return Mesh(np.asarray(box.vertices), np.asarray(box.faces, np.int32))


def _render(T_cam_depth: np.ndarray, camera: CameraIntrinsics) -> np.ndarray:
    from scipy.spatial.transform import Rotation

    box = make_pose(Rotation.from_euler("xyz", [20, 30, 10], degrees=True).as_matrix(),
                    [0.02, 0.01, 0.8])  # fmt: skip
    table = make_pose(np.eye(3), [0.0, 0.0, 1.2])
    poses = [T_cam_depth @ box, T_cam_depth @ table]
    scene = make_scene([_mesh((0.2, 0.15, 0.1)), _mesh((3.0, 3.0, 0.01))], poses)
    return DepthRenderer(scene, camera).render_ideal().depth_m


def test_depth_moved_into_a_finer_camera_equals_its_own_render():
    T_color_depth = make_pose(np.eye(3), [0.015, 0.0, 0.0005])
    moved = depth_in_camera(_render(np.eye(4), DEPTH_CAM), DEPTH_CAM, COLOR_CAM, T_color_depth)
    truth = _render(T_color_depth, COLOR_CAM)
    assert moved.shape == (180, 320) and moved.dtype == np.float32
    both = (moved > 0) & (truth > 0)
    # every colour pixel the depth camera also sees gets a depth: no holes between the
    # coarser camera's pixels; what is missing is behind the box's edges from the other view
    assert both.sum() > 0.99 * (truth > 0).sum()
    error = np.abs(moved - truth)[both]
    assert np.median(error) < 1e-4 and np.percentile(error, 95) < 2e-3
    # the identity leaves a depth image as it is
    same = depth_in_camera(truth, COLOR_CAM, COLOR_CAM, np.eye(4))
    np.testing.assert_allclose(same, truth, atol=1e-5)


def test_a_depth_image_of_another_size_is_refused():
    with pytest.raises(ValueError, match="212x120"):
        depth_in_camera(np.zeros((10, 10)), DEPTH_CAM, COLOR_CAM, np.eye(4))


def test_a_registered_depth_says_no_return_with_0_as_a_moved_one_does():
    depth = np.array([[0.5, np.nan, np.inf], [-0.2, 0.0, 1.25]], np.float32)
    camera = CameraIntrinsics(fx=2.0, fy=2.0, cx=1.0, cy=0.5, width=3, height=2)
    same = depth_in_camera(depth, camera, camera, np.eye(4))
    assert same.dtype == np.float32
    np.testing.assert_array_equal(same, [[0.5, 0.0, 0.0], [0.0, 0.0, 1.25]])
