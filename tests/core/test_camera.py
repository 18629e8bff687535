"""Pinhole intrinsics (``core.camera``): the camera matrix, field of view, rays through pixel
centres, back-projection, resolution scaling and the field-of-view constructor, each against
the pinhole model worked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pydantic import ValidationError

from sim2real.core.camera import CameraIntrinsics

CAM = CameraIntrinsics(fx=500, fy=400, cx=3.5, cy=2.0, width=8, height=5)


def test_camera_matrix_and_field_of_view():
    assert CAM.K.tolist() == [[500, 0, 3.5], [0, 400, 2.0], [0, 0, 1]]
    # 2 atan(w / (2 fx)): a 640 px wide image at fx = 320 spans 2 atan(1) = 90 deg
    wide = CameraIntrinsics(fx=320, fy=320, cx=319.5, cy=239.5, width=640, height=480)
    assert wide.hfov_deg == pytest.approx(90.0)


def test_pixel_rays_pass_through_pixel_centres():
    rays = CAM.pixel_rays()
    assert rays.shape == (5, 8, 3) and rays.dtype == np.float32
    # pixel (u, v) = (7, 0): ((7 - 3.5) / 500, (0 - 2) / 400, 1)
    assert rays[0, 7] == pytest.approx([0.007, -0.005, 1.0])
    assert rays[2, 3, :2] == pytest.approx([-0.001, 0.0])
    assert np.all(rays[..., 2] == 1)


def test_backproject_inverts_the_projection():
    # a point (x, y, z) projects to (fx x / z + cx, fy y / z + cy); depth 2 m at pixel (7, 4)
    # back-projects to x = (7 - 3.5) / 500 * 2 = 0.014, y = (4 - 2) / 400 * 2 = 0.01
    depth = np.zeros((5, 8), np.float32)
    depth[4, 7] = 2.0
    depth[0, 0] = 1.0
    points = CAM.backproject(depth)
    assert points.dtype == np.float64 and points.shape == (2, 3)  # pixels without return: none
    assert points[0] == pytest.approx([-0.007, -0.005, 1.0])  # row-major order: (0, 0) first
    assert points[1] == pytest.approx([0.014, 0.01, 2.0])
    u = CAM.fx * points[:, 0] / points[:, 2] + CAM.cx
    v = CAM.fy * points[:, 1] / points[:, 2] + CAM.cy
    assert u == pytest.approx([0, 7]) and v == pytest.approx([0, 4])


def test_scaling_keeps_the_optics():
    # half the resolution: focal lengths halve, and the principal point moves with the pixel
    # grid (centres at integers): (c + 0.5) / 2 - 0.5
    half = CAM.scaled(0.5)
    assert (half.fx, half.fy, half.width, half.height) == (250, 200, 4, 2)  # round(2.5) = 2
    assert (half.cx, half.cy) == (1.5, 0.75)
    assert half.hfov_deg == pytest.approx(CAM.hfov_deg)
    # the image border (pixel edge at -0.5) stays at the same ray
    assert (-0.5 - half.cx) / half.fx == pytest.approx((-0.5 - CAM.cx) / CAM.fx)
    assert half.depth_scale == CAM.depth_scale


def test_from_hfov_centres_the_principal_point():
    cam = CameraIntrinsics.from_hfov(640, 480, 90.0, depth_scale=0.0001)
    assert cam.fx == pytest.approx(320.0) and cam.fy == cam.fx  # (640 / 2) / tan(45 deg)
    assert (cam.cx, cam.cy) == (319.5, 239.5)
    assert cam.depth_scale == 0.0001
    narrow = CameraIntrinsics.from_hfov(100, 100, 60.0)
    assert narrow.fx == pytest.approx(50 / math.tan(math.radians(30)))


@pytest.mark.parametrize(
    "bad", [{"fx": -1.0}, {"fy": 0.0}, {"width": 0}, {"cx": float("nan")}, {"depth_scale": 0}]
)
def test_impossible_intrinsics_are_refused(bad):
    good = {"fx": 500, "fy": 500, "cx": 3.5, "cy": 2.0, "width": 8, "height": 5}
    with pytest.raises(ValidationError):
        CameraIntrinsics(**{**good, **bad})
    with pytest.raises(ValidationError):
        CameraIntrinsics(**good, skew=0.0)  # an unknown field is an error, not ignored
