import numpy as np
import pytest
import trimesh

from sim2real.core.errors import InputError
from sim2real.core.pose import make_pose
from sim2real.sensors.demo_part import machined_bracket, torus_mesh
from sim2real.sensors.presets import get_preset
from sim2real.sensors.run_config import read_render_config, write_render_config
from sim2real.sensors.scene import load_scene_yaml, make_scene, plane_under


def test_render_config_round_trips(tmp_path):
    d435 = get_preset("realsense-d435")
    scene = make_scene([machined_bracket()], [make_pose(np.eye(3), [0, 0, 0.5])], plane=True)
    written = write_render_config(tmp_path / "c.yaml", scene, d435.camera, d435.profile, seed=7)
    assert read_render_config(tmp_path / "c.yaml") == written
    assert written.noise.name == "realsense-d435" and written.seed == 7


def test_plane_lies_under_the_part():
    # the bracket's underside is z = 0 in its frame; the table is that plane, normal = part z
    T = make_pose(np.eye(3), [0.1, 0.0, 0.5])
    plane = plane_under(make_scene([machined_bracket()], [T]).objects[0])
    assert np.allclose(plane.point_cam, [0.1, 0.0, 0.5])
    assert np.allclose(plane.normal_cam, [0, 0, 1])


def test_scene_yaml_relative_paths_and_errors(tmp_path):
    trimesh.creation.box((0.05, 0.05, 0.05)).export(tmp_path / "box.stl")
    (tmp_path / "scene.yaml").write_text(
        "objects:\n  - mesh: box.stl\n    pose: '0 0 0.5 0 0 0 1'\n  - mesh: box.stl\n"
        "    pose: '0.1 0 0.6 0 0 0'\n    rpy_deg: true\nplane: true\n"
    )
    scene = load_scene_yaml(tmp_path / "scene.yaml")
    assert len(scene.objects) == 2 and scene.plane is not None
    assert np.allclose(scene.objects[1].T_cam_obj[:3, 3], [0.1, 0, 0.6])
    (tmp_path / "bad.yaml").write_text("objects:\n  - mesh: box.stl\n    pos: '0 0 0.5 0 0 0 1'\n")
    with pytest.raises(InputError, match=r"objects\.0\.pos: unknown field; did you mean 'pose'"):
        load_scene_yaml(tmp_path / "bad.yaml")
    (tmp_path / "typo.yaml").write_text(
        "objects:\n  - mesh: box.stl\n    pose: '0 0 1 0 0 0 1'\nplanes: true\n"
    )
    with pytest.raises(InputError, match="planes"):
        load_scene_yaml(tmp_path / "typo.yaml")


def test_one_pose_per_mesh():
    with pytest.raises(InputError, match="one pose per mesh"):
        make_scene([machined_bracket()], [])


def test_built_in_parts_have_the_documented_size():
    bracket = machined_bracket()
    assert np.allclose(bracket.extent_m, [0.12, 0.06, 0.06], atol=1e-9)  # 120 x 60 x 60 mm
    assert trimesh.Trimesh(bracket.vertices, bracket.faces).is_watertight
    # volume: base 120x60x10 + wall 10x60x50, minus 2 holes pi 6^2 10, wall hole pi 5^2 10,
    # chamfer 60 x 5^2 / 2 (mm^3)
    expected_mm3 = 120 * 60 * 10 + 10 * 60 * 50 - 2 * np.pi * 36 * 10 - np.pi * 25 * 10 - 60 * 12.5
    assert trimesh.Trimesh(bracket.vertices, bracket.faces).volume * 1e9 == pytest.approx(
        expected_mm3, rel=0.01
    )
    assert len(torus_mesh(40_000).faces) == 40_000
