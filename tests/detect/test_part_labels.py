"""detect finetune's labels: one pose of the detector's part in each frame they name; labels of
another object, a frame without the part or with it twice are one-line errors naming the file
and the field."""

import json

import numpy as np
import pytest

from sim2real.core.errors import InputError
from sim2real.detect.part_labels import load_part_labels

POSE = {"cam_R_m2c": [1, 0, 0, 0, 1, 0, 0, 0, 1], "cam_t_m2c": [0, 0, 500]}


def label(obj_id, z_mm=500):
    return {**POSE, "obj_id": obj_id, "cam_t_m2c": [0, 0, z_mm]}


def write(tmp_path, doc):
    path = tmp_path / "scene_gt.json"
    path.write_text(json.dumps(doc))
    return path


def refused(path, obj_id=None) -> str:
    with pytest.raises(InputError) as err:
        load_part_labels(path, obj_id)
    assert str(path) in str(err.value) and "\n" not in str(err.value)
    return str(err.value)


def test_the_part_is_picked_among_other_objects(tmp_path):
    path = write(tmp_path, {"0": [label(2, 900), label(1)], "1": [label(1, 600)]})
    gt = load_part_labels(path)
    assert list(gt) == [0, 1] and np.allclose([gt[0][2, 3], gt[1][2, 3]], [0.5, 0.6])
    gt = load_part_labels(write(tmp_path, {"0": [label(7)]}), obj_id=7)
    assert np.isclose(gt[0][2, 3], 0.5)


def test_labels_of_another_object_than_the_part_are_refused(tmp_path):
    msg = refused(write(tmp_path, {"0": [label(2)], "1": [label(2)]}))
    assert "obj_id" in msg and "object 2" in msg and "part (object 1" in msg
    assert "obj_id" in refused(write(tmp_path, {"0": [label(1)]}), obj_id=3)


def test_a_frame_without_labels_names_the_frame(tmp_path):
    msg = refused(write(tmp_path, {"0": []}))
    assert "0: frame 0 has no labels at all" in msg and "None" not in msg
    msg = refused(write(tmp_path, {"0": [label(1)], "4": []}))
    assert "4: frame 4 has no labels at all" in msg


def test_a_frame_without_the_part_names_the_frame_and_its_objects(tmp_path):
    msg = refused(write(tmp_path, {"0": [label(1)], "5": [label(2), label(3)]}))
    assert "5: frame 5 has no label of the part (object 1), only of object 2, 3" in msg


def test_the_part_labelled_twice_in_a_frame_is_refused(tmp_path):
    msg = refused(write(tmp_path, {"0": [label(1)], "3": [label(1), label(1, 900)]}))
    assert "3: frame 3 labels the part (object 1) 2 times" in msg


def test_a_label_without_obj_id_names_the_field(tmp_path):
    msg = refused(write(tmp_path, {"0": [POSE]}))
    assert "0.obj_id: missing field" in msg
