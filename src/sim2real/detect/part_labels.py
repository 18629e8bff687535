"""The labels of ``detect finetune``: a BOP ``scene_gt.json`` giving one pose of the detector's
part in each frame it names.

``tracking.sequence.load_scene_gt`` reads the poses and takes what it finds (the first object
of a frame, frames without it left out); a detector tuned on another object's poses, or on a
frame that lost its label, learns the wrong thing silently, so those files are refused here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sim2real.core.errors import InputError
from sim2real.core.json_io import read_json
from sim2real.detect.bop_writer import OBJ_ID

PART_OBJ_ID = OBJ_ID
"""The part's obj_id when --obj-id is not given: the one ``detect dataset`` labels it with."""


def load_part_labels(path: str | Path, obj_id: int | None = None) -> dict[int, np.ndarray]:
    """Frame id -> (4, 4) ``T_cam_part`` of the part (``obj_id``, else ``PART_OBJ_ID``);
    InputError naming the file and the field when a frame has no label of the part or two,
    or when no frame names it."""
    from sim2real.tracking.sequence import load_scene_gt

    path = Path(path)
    part = PART_OBJ_ID if obj_id is None else obj_id
    if path.is_file():  # a missing or malformed file: load_scene_gt names what is wrong
        check_part_labelled(read_json(path), path, part)
    return load_scene_gt(path, part)


def check_part_labelled(data, path: Path, part: int) -> None:
    """Each frame of the parsed ``scene_gt.json`` labels object ``part`` exactly once."""
    named = object_ids(data)
    for key, ids in named.items():
        if not ids:
            raise InputError(path, key, f"frame {key} has no labels at all: label the part in it")
        if None in ids:
            raise InputError(path, f"{key}.obj_id", "missing field: which object is labelled?")
    if named and not any(part in ids for ids in named.values()):
        raise InputError(
            path,
            "obj_id",
            f"the labels are of object {listed(i for ids in named.values() for i in ids)}, not "
            f"of the detector's part (object {part}; --obj-id gives the part's id in the labels)",
        )
    for key, ids in named.items():
        if part not in ids:
            why = f"frame {key} has no label of the part (object {part}), only of object {listed(ids)}"
            raise InputError(path, key, why)
        if ids.count(part) > 1:
            raise InputError(
                path, key, f"frame {key} labels the part (object {part}) {ids.count(part)} times"
            )


def listed(ids) -> str:
    return ", ".join(map(str, sorted(set(ids), key=str)))


def object_ids(data) -> dict[str, list]:
    """Frame key -> the obj_id of each of its labels; a frame that is not a list of objects is
    left out (load_scene_gt refuses it, naming the field)."""
    if not isinstance(data, dict):
        return {}
    return {
        key: [e.get("obj_id") for e in entries]
        for key, entries in data.items()
        if isinstance(entries, list) and all(isinstance(e, dict) for e in entries)
    }
