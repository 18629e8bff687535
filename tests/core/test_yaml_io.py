"""YAML reading: a key given twice in one mapping is an error naming the file and the line."""

from __future__ import annotations

import pytest

from sim2real.core.errors import InputError
from sim2real.core.yaml_io import load_yaml_text, read_yaml


def test_a_key_given_twice_is_refused_with_its_file_and_line(tmp_path):
    path = tmp_path / "detector.yaml"
    path.write_text("settings:\n  no_return_share: null\n  verify: true\n  no_return_share: 0.8\n")
    with pytest.raises(InputError) as err:
        read_yaml(path)
    message = str(err.value)
    assert str(path) in message and "'no_return_share' given twice" in message
    assert "line 4" in message


def test_the_same_key_in_other_mappings_and_merge_keys_are_fine():
    text = "a: {x: 1}\nb: {x: 2}\nbase: &base {y: 1}\nc:\n  <<: *base\n  y: 3\n  z: 2\n"
    assert load_yaml_text(text) == {
        "a": {"x": 1},
        "b": {"x": 2},
        "base": {"y": 1},
        "c": {"y": 3, "z": 2},
    }  # fmt: skip (a merged key overridden: YAML's own rule, not a repeat)
    with pytest.raises(Exception, match="given twice"):
        load_yaml_text("- {k: 1, k: 2}\n")  # nested in a list too
