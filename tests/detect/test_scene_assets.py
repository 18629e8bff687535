"""The user's own assets in the randomization: a folder of images added to the texture bank and
mesh files drawn as distractors (scene_config, textures, scene_draw), with their bad inputs."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh
from PIL import Image

from sim2real.core.errors import InputError
from sim2real.detect.primitives import unit_primitive
from sim2real.detect.scene_config import SceneConfig, TextureTerm, load_scene_config
from sim2real.detect.scene_draw import draw_frame, nominal_camera
from sim2real.detect.textures import SRGB_GAMMA, make_texture_bank


def _photos(folder):
    folder.mkdir()
    red = np.zeros((30, 50, 3), np.uint8)
    red[..., 0] = 200
    red[:, :10] = 255  # a white band on the left, cropped away (centre 30 x 30 of 50 wide)
    Image.fromarray(red).save(folder / "a_red.png")
    Image.fromarray(np.full((20, 20, 3), 60, np.uint8)).save(folder / "b_grey.jpg")
    (folder / "notes.txt").write_text("not an image")
    return folder


def test_image_folder_textures_follow_the_procedural_ones(tmp_path):
    folder = _photos(tmp_path / "photos")
    plain = make_texture_bank(TextureTerm(count=10, size_px=8), seed=1)
    bank = make_texture_bank(TextureTerm(count=10, size_px=8, images=str(folder)), seed=1)
    assert len(bank) == 12 and bank.kinds[10:] == ("image", "image")
    np.testing.assert_array_equal(bank.albedo[:10], plain.albedo)  # indices of the rest kept
    red = bank.albedo[10]
    assert red[..., 0] == pytest.approx((200 / 255) ** SRGB_GAMMA, abs=1e-6)  # band cropped
    assert np.all(red[..., 1:] == 0)
    assert bank.albedo[11] == pytest.approx((60 / 255) ** SRGB_GAMMA, abs=0.01)  # JPEG


def test_mesh_distractors_are_drawn_from_the_files_scaled_like_primitives(tmp_path):
    trimesh.creation.annulus(r_min=0.02, r_max=0.05, height=0.4).export(tmp_path / "ring.obj")
    cfg_file = tmp_path / "scene.yaml"
    cfg_file.write_text("distractors: {meshes: [ring.obj], mesh_share: 1.0, count: [4, 4]}\n")
    cfg = load_scene_config(cfg_file)
    assert cfg.distractors.meshes == [str((tmp_path / "ring.obj").resolve())]
    part = unit_primitive("box")
    frame = draw_frame(part, cfg, nominal_camera(cfg), 10, np.random.default_rng(0))
    shapes = [s.mesh for s in frame.surfaces if s.role == "distractor"]
    assert [m.name for m in shapes] == ["ring"] * 4
    for mesh in shapes:  # 1 unit across its largest side, then the distractor's size
        extent = np.ptp(mesh.vertices, axis=0).max() / part.diameter_m
        assert 0.3 * 0.6 <= extent <= 1.5 * 1.4
    # without meshes, the frames are the ones drawn before meshes existed (no extra draw)
    a = draw_frame(part, SceneConfig(), nominal_camera(cfg), 10, np.random.default_rng(5))
    b = draw_frame(
        part, SceneConfig(distractors={"mesh_share": 1.0}), nominal_camera(cfg), 10,
        np.random.default_rng(5),
    )  # fmt: skip
    assert [s.mesh.name for s in a.surfaces] == [s.mesh.name for s in b.surfaces]
    np.testing.assert_array_equal(a.T_world_cam, b.T_world_cam)


def test_missing_and_unreadable_assets_name_the_file_and_field(tmp_path):
    cfg_file = tmp_path / "scene.yaml"
    cfg_file.write_text("textures: {images: nowhere}\n")
    with pytest.raises(InputError, match=r"scene.yaml: textures.images: no folder"):
        load_scene_config(cfg_file)
    cfg_file.write_text("distractors: {meshes: [a.obj, missing.obj]}\n")
    (tmp_path / "a.obj").write_text("")
    with pytest.raises(InputError, match=r"distractors.meshes.1: no mesh file"):
        load_scene_config(cfg_file)
    empty = tmp_path / "empty"
    empty.mkdir()
    cfg_file.write_text("textures: {images: empty}\n")  # found when the file is read
    with pytest.raises(InputError, match=r"scene.yaml: textures.images: no PNG or JPEG image"):
        load_scene_config(cfg_file)
    with pytest.raises(InputError, match="no PNG or JPEG"):
        make_texture_bank(TextureTerm(count=2, size_px=4, images=str(empty)), seed=0)
    (empty / "broken.png").write_bytes(b"not a png")
    with pytest.raises(InputError, match=r"broken.png: textures.images: not a readable image"):
        make_texture_bank(TextureTerm(count=2, size_px=4, images=str(empty)), seed=0)


def test_detector_training_config_resolves_its_scene_assets(tmp_path):
    from sim2real.detect.train import resolve_train_config

    (tmp_path / "photos").mkdir()
    Image.new("RGB", (4, 4)).save(tmp_path / "photos" / "a.png")
    cfg_file = tmp_path / "train.yaml"
    cfg_file.write_text("scene: {textures: {images: photos}}\n")
    cfg = resolve_train_config(cfg_file)
    assert cfg.scene.textures.images == str((tmp_path / "photos").resolve())
    cfg_file.write_text("scene: {distractors: {meshes: [gone.stl]}}\n")
    with pytest.raises(InputError, match=r"train.yaml: scene.distractors.meshes.0: no mesh file"):
        resolve_train_config(cfg_file)
    (tmp_path / "photos" / "a.png").unlink()
    cfg_file.write_text("scene: {textures: {images: photos}}\n")
    with pytest.raises(InputError, match=r"train.yaml: scene.textures.images: no PNG or JPEG"):
        resolve_train_config(cfg_file)
