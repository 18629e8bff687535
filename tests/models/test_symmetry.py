"""Symmetry text forms and BOP files, and their errors."""

import json

import numpy as np
import pytest

from sim2real.core.errors import InputError
from sim2real.models.symmetry import parse_symmetry


def test_symmetry_text_and_files(tmp_path):
    assert parse_symmetry(None).kind == "none" and parse_symmetry("none").transforms().shape == (
        1,
        4,
        4,
    )
    sym = parse_symmetry("axis:0,0,2@0,0,0.01")
    assert np.allclose(sym.axis, [0, 0, 1]) and np.allclose(sym.point, [0, 0, 0.01])
    S = sym.transforms(8)
    assert S.shape == (8, 4, 4) and np.allclose(S[0], np.eye(4))
    assert np.allclose(S[:, :3, 3] @ [0, 0, 1], 0)  # a z axis through (0, 0, z) moves nothing
    flip = [1, 0, 0, 0, 0, -1, 0, 0, 0, 0, -1, 20, 0, 0, 0, 1]  # 180 deg about x, 20 mm up
    info = {
        "3": {"diameter": 100, "symmetries_discrete": [flip]},
        "4": {
            "symmetries_continuous": [{"axis": [0, 0, 1], "offset": [0, 0, 0]}],
            "symmetries_discrete": [flip],
        },
    }
    path = tmp_path / "models_info.json"
    path.write_text(json.dumps(info))
    three = parse_symmetry(str(path), obj_id=3)
    assert three.kind == "discrete" and np.allclose(three.discrete[0][:3, 3], [0, 0, 0.02])
    four = parse_symmetry(str(path), obj_id=4)
    assert four.kind == "continuous" and four.transforms(10).shape == (20, 4, 4)
    with pytest.raises(InputError, match="pick one"):
        parse_symmetry(str(path))


@pytest.mark.parametrize(
    "text",
    [
        "axis:",
        "axis:w",
        "axis:0,0,0",
        "discrete:z:1",
        "discrete:z:100000",
        "discrete:z:four",
        "spin",
        "axis:1,2",
    ],
)
def test_bad_symmetry_text_raises_naming_the_option(text):
    with pytest.raises(InputError) as err:
        parse_symmetry(text)
    assert err.value.field == "--symmetry"


def test_a_models_info_object_without_symmetry_keys_has_no_symmetry(tmp_path):
    # BOP writes symmetries_* only for symmetric objects: object 1 here is not one
    flip = [1, 0, 0, 0, 0, -1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 1]
    info = {
        "1": {"diameter": 147.2, "min_x": -50.0},
        "5": {"diameter": 90.0, "symmetries_discrete": [flip]},
    }
    path = tmp_path / "models_info.json"
    path.write_text(json.dumps(info))
    assert parse_symmetry(str(path), obj_id=1).kind == "none"
    assert parse_symmetry(str(path), obj_id=5).kind == "discrete"
    (tmp_path / "other.json").write_text(json.dumps({"name": "cube"}))  # not BOP: still an error
    with pytest.raises(InputError, match="no symmetries_discrete"):
        parse_symmetry(str(tmp_path / "other.json"))
