"""The detector's frames of a sequence whose depth comes from another camera than its colour
(a RealSense's two streams saved apart): the depth arrives moved into the colour camera."""

from __future__ import annotations

import json

import numpy as np
from PIL import Image

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.pose import make_pose
from sim2real.detect.run import sequence_frames
from sim2real.tracking.sequence import load_sequence
from sim2real.tracking.sequence_write import write_bop_sequence

DEPTH_CAM = CameraIntrinsics(fx=300, fy=300, cx=79.5, cy=59.5, width=160, height=120)


def test_depth_of_another_camera_is_moved_into_the_colour_camera(tmp_path):
    # a wall 0.5 m in front of the depth camera; the colour camera 25 mm to its right, twice
    # the resolution: the wall at 0.5 m over the colour image but a band on the right, which
    # the depth camera does not see
    folder = tmp_path / "s"
    wall = np.full((120, 160), 0.5, np.float32)
    write_bop_sequence(folder, DEPTH_CAM, [wall, wall], [make_pose(np.eye(3), [0, 0, 0.5])] * 2)
    (folder / "rgb").mkdir()
    for i in range(2):
        Image.fromarray(np.zeros((240, 320, 3), np.uint8)).save(folder / "rgb" / f"{i:06d}.png")
    cam = tmp_path / "color.json"
    cam.write_text(
        json.dumps({"fx": 600, "fy": 600, "cx": 159.5, "cy": 119.5, "width": 320, "height": 240})
    )
    T_depth_color = make_pose(np.eye(3), [0.025, 0.0, 0.0])
    seq = load_sequence(folder, color_camera=cam, T_depth_color=T_depth_color)
    frames = list(sequence_frames(seq, folder))
    assert len(frames) == 2
    _, rgb, depth, K, T = frames[0]
    assert rgb.shape == (240, 320, 3) and depth.shape == (240, 320) and K[0, 0] == 600
    # the depth camera's right edge, x = 0.1325 m at 0.5 m, is x = 0.1075 m in the colour
    # camera: column 600 * 0.1075 / 0.5 + 159.5 = 288.5
    np.testing.assert_allclose(depth[:, :288], 0.5, atol=1e-5)
    assert not depth[:, 290:].any()
    np.testing.assert_allclose(T[:3, 3], [-0.025, 0.0, 0.5], atol=1e-9)  # the pose moved too
