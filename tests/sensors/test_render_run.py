"""The render job as a library call: the sensor chosen from files and presets, the outputs it
writes, and the warning when no part is in view."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh
import yaml

from sim2real.core.depth_io import read_depth
from sim2real.core.mesh_io import validate_mesh
from sim2real.core.pose import make_pose, rpy_deg_to_matrix
from sim2real.sensors.presets import get_preset
from sim2real.sensors.render_run import render_job, resolve_sensor
from sim2real.sensors.scene import make_scene


def _box_scene(z_m: float):
    tm = trimesh.creation.box(extents=(0.1, 0.1, 0.1))
    box = validate_mesh(tm.vertices, tm.faces, "box", "box")
    facing = rpy_deg_to_matrix(180, 0, 0)  # the part's z toward the camera, the table behind
    return make_scene([box], [make_pose(facing, [0, 0, z_m])], plane=True)


def test_the_preset_gives_camera_and_noise_and_a_profile_file_overrides_the_noise(tmp_path):
    camera, noise = resolve_sensor(None, "realsense-d435", None)
    preset = get_preset("realsense-d435")
    assert camera == preset.camera and noise == preset.profile
    assert resolve_sensor(None, None, None)[1] is None  # no preset, no profile: ideal
    assert resolve_sensor(None, "ideal", None)[1] is None


def test_render_job_writes_the_depth_and_its_resolved_config(tmp_path):
    camera, noise = resolve_sensor(None, "realsense-d435", None)
    run = render_job(_box_scene(0.6), camera, noise, seed=3)
    assert 1000 < run.part_pixels < 0.1 * (run.result.depth_m > 0).sum()  # the table apart
    depth_path, config_path = run.write(tmp_path / "frame.png")
    depth = read_depth(depth_path, depth_scale=camera.depth_scale)
    np.testing.assert_allclose(depth, run.result.depth_m, atol=camera.depth_scale)
    config = yaml.safe_load(config_path.read_text())
    assert config["seed"] == 3
    assert "valid pixels" in run.summary_line()


def test_no_part_in_view_warns():
    camera, _ = resolve_sensor(None, "realsense-d435", None)
    with pytest.warns(UserWarning, match="no part is in view"):
        run = render_job(_box_scene(-0.6), camera, None)  # behind the camera
    assert run.part_pixels == 0
