"""The procedural texture bank (count, kinds, determinism) and its triplanar lookup by hand."""

from __future__ import annotations

import numpy as np
import pytest

from sim2real.core.errors import InputError
from sim2real.detect.scene_config import SceneConfig, TextureTerm, load_scene_config
from sim2real.detect.textures import (
    FLAT_GREY,
    make_texture_bank,
    sample_texture,
    triplanar_uv,
)


def test_bank_has_the_count_asked_and_every_kind_in_turn():
    bank = make_texture_bank(TextureTerm(count=1000, size_px=16), seed=3)
    assert bank.albedo.shape == (1000, 16, 16, 3) and len(bank) == 1000
    assert bank.kinds[:5] == ("noise", "checkers", "stripes", "gradient", "flat")
    assert {bank.kinds.count(k) for k in set(bank.kinds)} == {200}
    assert bank.albedo.min() >= 0 and bank.albedo.max() <= 1
    # 1000 different textures, not a few repeated: no two equal
    flat = bank.albedo.reshape(1000, -1)
    assert len(np.unique(flat, axis=0)) == 1000
    # flat ones are one colour; the others are not
    kinds = np.array(bank.kinds)
    spread = np.ptp(flat.reshape(1000, -1, 3), axis=1).max(axis=1)
    assert np.all(spread[kinds == "flat"] == 0)
    assert np.all(spread[kinds == "checkers"] > 0)


def test_same_seed_same_bank_other_seed_other_bank():
    term = TextureTerm(count=50, size_px=8)
    a, b = make_texture_bank(term, 7), make_texture_bank(term, 7)
    np.testing.assert_array_equal(a.albedo, b.albedo)
    assert not np.array_equal(a.albedo, make_texture_bank(term, 8).albedo)


def test_textures_off_is_one_flat_grey():
    bank = make_texture_bank(TextureTerm(enabled=False, size_px=8), 0)
    assert len(bank) == 1 and np.all(bank.albedo == np.float32(FLAT_GREY))


def test_triplanar_uv_uses_the_two_coordinates_across_the_normal():
    points = np.array([[0.1, 0.2, 0.3]] * 3)
    normals = np.array([[0.0, 0.1, -0.9], [0.8, 0.1, 0.1], [0.1, -0.7, 0.2]])
    uv = triplanar_uv(points.T, normals.T, np.full(3, 0.1))  # planar: (3, N) -> (2, N)
    # z dominant -> (x, y); x dominant -> (y, z); y dominant -> (x, z); in tiles of 0.1 m
    np.testing.assert_allclose(uv.T, [[1.0, 2.0], [2.0, 3.0], [1.0, 3.0]])


def test_lookup_picks_the_texel_under_uv_and_wraps():
    bank = make_texture_bank(TextureTerm(count=2, size_px=4, kinds=["noise"]), 0)
    uv = np.array([[0.3 / 4, 2.6 / 4], [1 + 3.5 / 4, -0.5 / 4]])  # texel (col 0, row 2), wrapped
    out = sample_texture(bank, np.array([1, 0]), uv.T).T  # planar: (2, N) -> (3, N)
    np.testing.assert_array_equal(out[0], bank.albedo[1, 2, 0])
    np.testing.assert_array_equal(out[1], bank.albedo[0, 3, 3])  # -0.5/4 wraps to row 3


def test_lookup_wraps_a_side_that_is_no_power_of_two():
    bank = make_texture_bank(TextureTerm(count=1, size_px=6, kinds=["noise"]), 0)
    uv = np.array([[0.5 / 6, -0.5 / 6], [-2 + 4.5 / 6, 7 + 1.5 / 6]])  # (col, row) in tiles
    out = sample_texture(bank, np.zeros(2, int), uv.T).T
    np.testing.assert_array_equal(out[0], bank.albedo[0, 5, 0])
    np.testing.assert_array_equal(out[1], bank.albedo[0, 1, 4])


def test_config_file_errors_name_the_field(tmp_path):
    path = tmp_path / "cfg.yaml"
    path.write_text("textures:\n  count: 0\n")
    with pytest.raises(InputError, match=r"textures\.count"):
        load_scene_config(path)
    path.write_text("camera:\n  elevation_deg: [80, 20]\n")
    with pytest.raises(InputError, match="inverted"):
        load_scene_config(path)
    path.write_text("distractors:\n  enabled: false\ntextures:\n  count: 10\n")
    cfg = load_scene_config(path)
    assert cfg == SceneConfig(distractors={"enabled": False}, textures={"count": 10})
