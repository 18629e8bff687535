"""The colour images of a depth sequence: found beside its depth frames or given, paired with
them by frame number, with the colour camera and its pose in the depth camera's frame."""

from __future__ import annotations

from pathlib import Path

from sim2real.core.errors import InputError
from sim2real.core.pose import check_rigid
from sim2real.tracking.frame_numbers import (
    PAIRING_S,
    frame_number,
    numbered,
    pair_by_time,
    ranges,
    timestamps,
)


def _color_files(folder: Path) -> list[Path]:
    from sim2real.core.image_io import COLOR_SUFFIXES

    return sorted(
        p
        for p in folder.iterdir()
        if p.is_file() and p.suffix.lower() in COLOR_SUFFIXES and frame_number(p) is not None
    )


def color_files(color) -> list[Path]:
    """The colour images given with ``--color``: a folder (its numbered images) or the files
    themselves; InputError for a missing file or a folder without any."""
    given = [Path(p) for p in color] if isinstance(color, list | tuple) else [Path(color)]
    files = _color_files(given[0]) if len(given) == 1 and given[0].is_dir() else given
    for p in files:
        if not p.is_file():
            raise InputError(p, "--color", "colour image not found")
    if not files:
        raise InputError(given[0], "--color", "no colour images found")
    return files


def _match_color(where: object, ids: list[int], color: list[Path], named: bool) -> list[Path]:
    """The colour image of each depth frame: by the number in its name (both numbered), else
    in order; InputError when they do not pair up."""
    if len(color) != len(ids):
        raise InputError(
            where, "rgb", f"{len(color)} colour images for {len(ids)} depth frames: give one each"
        )
    cids, cpaths, cnamed = numbered(color)
    if named and cnamed:
        if cids != ids:
            missing = sorted(set(ids) - set(cids))
            raise InputError(
                where, "rgb", f"no colour image for depth frames {ranges(missing or ids)}"
            )
        return cpaths
    return list(color)


def _pair_by_time(sequence, where: object, files: list[Path], depth_t, color_t) -> None:
    """TUM-style frames named by their timestamps (``depth_t``, ``color_t``): each depth frame
    takes the nearest colour image within ``PAIRING_S``; depth frames with none are left out,
    said."""
    import warnings

    pairs = pair_by_time(depth_t, color_t)
    keep = [i for i, j in enumerate(pairs) if j is not None]
    if not keep:
        why = f"no colour image within {PAIRING_S * 1000:g} ms of any depth frame"
        raise InputError(where, "rgb", why)
    if len(keep) < len(pairs):
        warnings.warn(
            f"{where}: {len(pairs) - len(keep)} depth frames have no colour image within "
            f"{PAIRING_S * 1000:g} ms: left out",
            stacklevel=3,
        )
    sequence.frame_ids = [sequence.frame_ids[i] for i in keep]
    sequence.paths = [sequence.paths[i] for i in keep]
    sequence.color_paths = [files[pairs[i]] for i in keep]


def attach_color(sequence, where, folder, named, color, camera, color_camera, T_depth_color):
    from sim2real.core.camera_io import load_camera, load_camera_pose
    from sim2real.core.pose import invert_pose

    files: list[Path] | None = None
    if color is not None:
        files = color_files(color)
    elif folder is not None:
        for name in ("rgb", "color", "gray"):  # gray/: ITODD's grey images, read as RGB
            if (folder / name).is_dir() and _color_files(folder / name):
                files = _color_files(folder / name)
                break
    if files is None:
        if color_camera is not None:
            raise InputError(color_camera, "--color-camera", "no colour images to go with it")
        return
    depth_t, color_t = timestamps(sequence.paths), timestamps(files)
    if depth_t is not None and color_t is not None:
        _pair_by_time(sequence, where, files, depth_t, color_t)
    else:
        sequence.color_paths = _match_color(where, sequence.frame_ids, files, named)
    if color_camera is not None:
        sequence.color_camera = load_camera(color_camera)
        if T_depth_color is None and camera is not None:
            try:  # M3T camera files carry their pose in a common world frame
                T_depth_color = invert_pose(load_camera_pose(camera)) @ load_camera_pose(
                    color_camera
                )
            except InputError:
                T_depth_color = None
    if T_depth_color is not None:
        sequence.T_depth_color = check_rigid(T_depth_color, None, "--extrinsic")
    _check_size(sequence.color_paths[0], sequence.color_camera or sequence.camera, color_camera)


def _check_size(first: Path, camera, color_camera) -> None:
    """Colour frames must fit their camera: a colour image of another size than the depth
    camera's, with no colour camera given, is refused before any frame is tracked."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(first) as im:
            w, h = im.size
    except (OSError, UnidentifiedImageError) as exc:
        raise InputError(first, None, f"cannot read image ({exc})") from None
    if (w, h) != (camera.width, camera.height):
        which = "--color-camera" if color_camera is not None else "the depth camera"
        raise InputError(
            first,
            "size",
            f"colour frames are {w}x{h} px, {which} {camera.width}x{camera.height} px: "
            "give the colour camera's intrinsics (--color-camera) and its pose (--extrinsic)",
        )
