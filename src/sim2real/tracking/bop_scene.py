"""BOP scene files of a sequence folder: the part's poses (``scene_gt.json``) and the depth unit
and camera of each frame (``scene_camera.json``), checked where the tracker would otherwise
silently take one of several (objects, cameras).

Units as BOP writes them: ``cam_t_m2c`` and ``depth_scale`` in millimetres; returned in metres.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from sim2real.core.errors import InputError
from sim2real.core.json_io import read_json
from sim2real.core.pose import bop_pose
from sim2real.tracking.frame_numbers import ranges

K_TOLERANCE_PX = 0.5
"""The most two frames' cam_K may differ by and still be one camera (rounding in the files)."""


def load_scene_gt(path: str | Path, obj_id: int | None = None) -> dict[int, np.ndarray]:
    """BOP ``scene_gt.json`` -> frame id -> (4, 4) ``T_cam_part`` in metres: the object whose
    ``obj_id`` matches (frames without it are left out, warned), else the one object the frames
    list (several: InputError, pass --obj-id, rather than the first entry taken silently)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, None, "ground-truth file not found")
    data = read_json(path)
    if not isinstance(data, dict):
        raise InputError(path, None, "expected a JSON object: image id -> list of objects")
    gt: dict[int, np.ndarray] = {}
    without: list[int] = []
    for key, entries in data.items():
        try:
            frame = int(key)
        except ValueError as exc:
            raise InputError(path, key, "keys of scene_gt.json must be image ids") from exc
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise InputError(path, key, "expected a list of {cam_R_m2c, cam_t_m2c, obj_id}")
        chosen = [e for e in entries if obj_id is None or e.get("obj_id") == obj_id]
        if not chosen:
            without.append(frame)
            continue
        gt[frame] = bop_pose(chosen[0], path, f"{key}.")
    if obj_id is None:
        _check_one_object(data, path)
    if without:
        warnings.warn(
            f"{path}: no object {obj_id} in frames {ranges(sorted(without))}", stacklevel=2
        )
    if not gt:
        raise InputError(path, "obj_id", f"no pose of object {obj_id} in the file")
    return dict(sorted(gt.items()))


def _check_one_object(data: dict, path: Path) -> None:
    """Without an obj_id the frames must show one object (any number of times)."""
    per_frame = [{e.get("obj_id") for e in entries} for entries in data.values()]
    ids = set().union(*per_frame)
    if len(ids) > 1:
        listed = ", ".join(map(str, sorted(ids, key=str)))
        most = max(len(f) for f in per_frame)
        what = f"{most} objects per frame" if most > 1 else "frames of different objects"
        raise InputError(path, "obj_id", f"{what} (ids {listed}): pass --obj-id")


def bop_scales(path: Path) -> dict[int, float]:
    """frame id -> metres per unit, from a scene_camera.json's ``depth_scale`` (mm per unit);
    a frame without one takes the dataset's (BOP's camera.json beside it or above), else mm."""
    from sim2real.core.camera_io import bop_default_scale_mm

    data = read_json(path)
    scales: dict[int, float] = {}
    if isinstance(data, dict):
        default: float | None = None
        for key, entry in data.items():
            value = entry.get("depth_scale") if isinstance(entry, dict) else None
            if value is None and isinstance(entry, dict):
                default = bop_default_scale_mm(path) if default is None else default
                value = default
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise InputError(
                    path, f"{key}.depth_scale", f"expected mm per unit > 0, got {value!r}"
                )
            try:
                scales[int(key)] = float(value) / 1000.0
            except ValueError as exc:
                raise InputError(path, key, "keys must be image ids") from exc
    return scales


def bop_intrinsics(path: Path, ids: list[int]) -> dict[int, np.ndarray]:
    """frame id -> (3, 3) ``cam_K`` of each of the frames ``ids`` a scene_camera.json lists with
    one, in the order of ``ids`` (frames without one left out: ``load_camera`` says what is
    wrong with a file that is not BOP's). Read once for all frames: a BOP scene holds
    thousands."""
    data = read_json(path)
    if not isinstance(data, dict):
        return {}
    out: dict[int, np.ndarray] = {}
    for frame in ids:
        entry = data.get(str(frame))
        if not isinstance(entry, dict) or "cam_K" not in entry:
            continue
        try:
            K = np.asarray(entry["cam_K"], dtype=np.float64).ravel()
        except (TypeError, ValueError) as exc:
            raise InputError(path, f"{frame}.cam_K", f"not numeric ({exc})") from exc
        if K.size != 9:
            raise InputError(path, f"{frame}.cam_K", f"expected 9 numbers, got {K.size}")
        out[frame] = K.reshape(3, 3)
    return out


def check_one_camera(path: Path, ids: list[int]) -> None:
    """The frames ``ids`` of a scene_camera.json share one ``cam_K`` (within
    ``K_TOLERANCE_PX``): the tracker projects every frame through one camera, so a frame taken
    with another (a crop, a zoom) would be tracked through the wrong one, silently."""
    cams = list(bop_intrinsics(path, ids).items())
    for frame, K in cams[1:]:
        first, K0 = cams[0]
        off = float(np.abs(K - K0).max())
        if not off <= K_TOLERANCE_PX:
            raise InputError(
                path,
                f"{frame}.cam_K",
                f"frame {frame}'s cam_K differs from frame {first}'s by {off:.3g} px: the "
                "tracker takes one camera for all frames (split the sequence by camera)",
            )
