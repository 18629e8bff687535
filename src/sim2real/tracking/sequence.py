"""Depth sequences: read a BOP-like folder or a list of depth files, write a BOP-like folder.

BOP layout (https://github.com/thodan/bop_toolkit/blob/master/docs/bop_datasets_format.md)::

    scene/depth/000000.png ...   uint16, value * depth_scale = MILLIMETRES
    scene/rgb/000000.png ...     (optional) colour, registered to depth (BOP: one camera);
                                 ITODD's grey images in scene/gray/ are read as colour
    scene/scene_camera.json      {"0": {"cam_K": 9 numbers row-major, "depth_scale": mm/unit}}
    scene/camera.json            {"fx", "fy", "cx", "cy", "width", "height", "depth_scale"}
                                 (or up to two folders above: BOP's depth_scale for frames
                                 without their own)
    scene/scene_gt.json          {"0": [{"cam_R_m2c": 9 numbers, "cam_t_m2c": mm, "obj_id": 1}]}
    scene/visible.json           (ours, optional) {"0": visible fraction of the part}

In memory everything is SI: depth in metres, ``T_cam_part`` 4x4 with translation in metres.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.depth_io import (
    ENCODING_BY_SUFFIX,
    ENCODINGS,
    FIXED_UNIT_ENCODINGS,
    read_depth,
)
from sim2real.core.errors import InputError
from sim2real.core.json_io import read_json
from sim2real.tracking.bop_scene import bop_intrinsics, bop_scales, check_one_camera, load_scene_gt
from sim2real.tracking.frame_numbers import frame_number, numbered, ranges
from sim2real.tracking.sequence_color import attach_color

DEPTH_SUFFIXES = tuple(ENCODING_BY_SUFFIX)
CLOUD_SUFFIXES = (".pcd", ".ply")
"""Organised point clouds read as depth frames (a list of files; a PLY needs --camera)."""


@dataclass
class Sequence:
    """Depth frames of one camera, in order, with optional ground-truth part poses."""

    camera: CameraIntrinsics
    frame_ids: list[int]
    """Frame numbers (BOP image ids, or the digits of the file names), ascending."""
    paths: list[Path]
    gt: dict[int, np.ndarray] | None = None
    """frame id -> (4, 4) float64 ``T_cam_part``, metres; None without ground truth."""
    encoding: str = "auto"
    depth_scale: float | None = None
    """Metres per stored unit of integer PNG / TIFF frames; None: each file's own unit (the
    sidecar ``<stem>.json`` of PNGs we write, or the fixed unit of tum / sun / npy / pgm)."""
    depth_scale_by_frame: dict[int, float] | None = None
    """Per-frame metres per unit where a BOP scene_camera.json gives different ones."""
    visible: dict[int, float] | None = None
    """frame id -> visible fraction of the part, from a synthetic sequence's visible.json."""
    color_paths: list[Path] | None = None
    """The colour image of each frame (same order), or None: a depth-only sequence."""
    color_camera: CameraIntrinsics | None = None
    """Intrinsics of the colour images; None: the depth camera's (registered colour)."""
    T_depth_color: np.ndarray | None = None
    """(4, 4) pose of the colour camera in the depth camera's frame (maps colour-camera
    coordinates into depth-camera ones); None: identity (registered colour)."""
    camera_by_frame: dict[int, CameraIntrinsics] | None = None
    """Per-frame intrinsics of the depth camera where a BOP scene_camera.json gives frames
    different cam_K (``detect dataset`` jitters it, BOP scenes differ); None: ``camera``'s for
    all. The tracker refuses such folders (``check_one_camera``); the detector reads each frame
    through its own (``frame_camera``)."""
    unit_checked: bool = field(default=False, init=False, repr=False)
    """Set once a frame with returns was read at a depth any camera works at (the unit holds)."""
    float_metres: bool = field(default=False, init=False, repr=False)
    """Set once a float frame was found in metres: the camera's unit is not tried again."""

    def __len__(self) -> int:
        return len(self.paths)

    @property
    def has_color(self) -> bool:
        return self.color_paths is not None

    def frame_camera(self, i: int) -> CameraIntrinsics:
        """The depth camera of the ``i``-th frame: its own cam_K where the frames' differ."""
        if self.camera_by_frame is None:
            return self.camera
        return self.camera_by_frame.get(self.frame_ids[i], self.camera)

    def read_color(self, i: int) -> np.ndarray | None:
        """(h, w, 3) uint8 RGB of the ``i``-th frame, or None in a depth-only sequence; a size
        other than the colour camera's raises ``InputError(path, "size", ...)``."""
        if self.color_paths is None:
            return None
        from sim2real.core.image_io import read_rgb

        path = self.color_paths[i]
        rgb = read_rgb(path)
        cam = self.color_camera or self.camera
        if rgb.shape[:2] != (cam.height, cam.width):
            raise InputError(
                path,
                "size",
                f"colour frame is {rgb.shape[1]}x{rgb.shape[0]} px, the colour camera's is "
                f"{cam.width}x{cam.height} px: give the colour camera (--color-camera)",
            )
        return rgb

    def read(self, i: int) -> np.ndarray:
        """(H, W) float32 depth in metres (0 = no return) of the ``i``-th frame (an index into
        the sequence, not a frame id). A frame whose size differs from the camera's raises
        ``InputError(path, "size", ...)``: the caller decides whether to stop or skip it."""
        path = self.paths[i]
        if path.suffix.lower() in CLOUD_SUFFIXES:  # an organised point cloud: its z per pixel
            from sim2real.sensors.real_frame import load_real_frame

            try:
                return load_real_frame(path, self.camera)[0]
            except InputError as exc:
                raise InputError(path, "size", str(exc.message)) from exc
        encoding = self.encoding
        if encoding == "auto":
            encoding = ENCODING_BY_SUFFIX.get(path.suffix.lower(), "auto")
        scale = self.depth_scale
        if self.depth_scale_by_frame is not None:
            scale = self.depth_scale_by_frame.get(self.frame_ids[i], scale)
        if encoding in FIXED_UNIT_ENCODINGS or self.float_metres:
            scale = None
        # the encoding as given until a frame with returns passed the checks (read_depth looks
        # at what it guesses, 3 ms a frame): then the one it resolved to
        given = encoding if self.unit_checked else self.encoding
        try:
            depth = read_depth(path, encoding=given, depth_scale=scale)
        except InputError as exc:
            if exc.field != "depth_scale" or scale is None or encoding not in ("tiff", "npy"):
                raise
            # float frames already in metres: the camera's unit is for integer ones
            depth, self.float_metres = read_depth(path, encoding=encoding), True
        expected = (self.camera.height, self.camera.width)
        if depth.shape != expected:
            raise InputError(
                path,
                "size",
                f"frame is {depth.shape[1]}x{depth.shape[0]} px, the camera's is "
                f"{expected[1]}x{expected[0]} px",
            )
        if not self.unit_checked and (depth > 0).any():  # millimetres read as metres...
            from sim2real.sensors.real_frame import check_plausible_depth

            check_plausible_depth(path, depth, scale)
            self.unit_checked = True
        return depth


CAMERA_FILES = ("camera.yaml", "camera.yml", "camera_intrinsic.json", "intrinsic.json")
"""Camera files other tools leave beside their frames: OpenCV / M3T / ROS YAML, Open3D's
(Redwood folders' ``camera_intrinsic.json``, the Azure Kinect recorder's ``intrinsic.json``)."""


def _camera_beside(folder: Path) -> Path | None:
    return next((folder / n for n in CAMERA_FILES if (folder / n).is_file()), None)


def _cameras_by_frame(
    scene_camera: Path, ids: list[int], camera: CameraIntrinsics, scales: dict[int, float]
) -> dict[int, CameraIntrinsics] | None:
    """frame id -> its own camera (``camera``'s size, the frame's cam_K and depth unit) where
    the frames' cam_K differ at all, else None: a frame read through another's K moves its
    points sideways and its PnP poses, silently. A K no camera has raises InputError."""
    from pydantic import ValidationError

    from sim2real.core.strict import validation_error

    cams = bop_intrinsics(scene_camera, ids)
    if all(np.array_equal(K, camera.K) for K in cams.values()):
        return None
    out: dict[int, CameraIntrinsics] = {}
    for frame, K in cams.items():
        try:
            out[frame] = CameraIntrinsics(
                fx=K[0, 0], fy=K[1, 1], cx=K[0, 2], cy=K[1, 2], width=camera.width,
                height=camera.height, depth_scale=scales.get(frame, camera.depth_scale),
            )  # fmt: skip
        except ValidationError as exc:
            e = validation_error(exc, scene_camera, model=CameraIntrinsics)
            what = e.message if e.field is None else f"{e.field}: {e.message}"
            raise InputError(scene_camera, f"{frame}.cam_K", what) from None
    return out


def _warn_gaps(source: object, ids: list[int]) -> None:
    present = set(ids)
    missing = [i for i in range(ids[0], ids[-1] + 1) if i not in present]
    if missing:
        warnings.warn(
            f"{source}: missing frame ids {ranges(missing)}; the sequence continues without them",
            stacklevel=3,
        )


def read_visible(path: str | Path) -> dict[int, float]:
    """``visible.json`` (frame id -> visible fraction of the part, 0..1)."""
    path = Path(path)
    data = read_json(path)
    if not isinstance(data, dict):
        raise InputError(path, None, "expected a JSON object: frame id -> visible fraction")
    out: dict[int, float] = {}
    for key, value in data.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise InputError(path, key, f"expected a fraction in 0..1, got {value!r}")
        try:
            out[int(key)] = float(value)
        except ValueError as exc:
            raise InputError(path, key, "keys must be frame ids") from exc
    return dict(sorted(out.items()))


def _depth_files(folder: Path) -> list[Path]:
    return sorted(
        p
        for p in folder.iterdir()
        if p.is_file() and p.suffix.lower() in DEPTH_SUFFIXES and frame_number(p) is not None
    )


def load_sequence(
    source: str | Path | list[Path],
    camera: str | Path | None = None,
    *,
    encoding: str = "auto",
    obj_id: int | None = None,
    color: str | Path | list[Path] | None = None,
    color_camera: str | Path | None = None,
    T_depth_color: np.ndarray | None = None,
    use_color: bool = True,
    align_color: bool = False,
    read_gt: bool = True,
    one_camera: bool = True,
) -> Sequence:
    """A depth sequence from a BOP-like folder or from a list of depth files.

    Folder: frames in ``depth/`` (or in the folder itself), numbered by their names; the
    camera from ``camera`` if given, else ``scene_camera.json`` (BOP; its image size from
    ``camera.json`` beside it or up to two folders above; its frames' cam_K must agree unless
    ``one_camera=False``: the tracker projects every frame through one; where they differ,
    each frame's in ``Sequence.camera_by_frame``), else ``camera.json``; the depth
    unit from ``scene_camera.json`` when present (BOP: the images' own unit), else from each
    PNG's sidecar, else the camera's ``depth_scale``; poses from ``scene_gt.json`` (object
    ``obj_id``, needed when it lists several; ``read_gt=False``: none read) and visible
    fractions from ``visible.json`` when present.
    List: ``camera`` is required, except for organised point clouds (``.pcd``), whose
    intrinsics are fitted to their points; frame ids are the numbers in the names (else 0, 1, ...).
    Gaps in the ids are warned about; no frames raise ``InputError``.

    Colour: ``color`` (a folder or a list of images), else a folder's ``rgb/`` (or ``color/``,
    or ITODD's grey ``gray/``) beside ``depth/``, paired with the depth frames by their numbers; ``color_camera`` its own
    intrinsics (default: the depth camera's, i.e. colour registered to depth) and
    ``T_depth_color`` the colour camera's pose in the depth camera's frame (default: identity;
    two M3T camera files with ``camera2world_pose`` give it themselves). ``use_color=False``
    reads depth only.
    A RealSense recording (``.bag`` / ``.db3``): ``tracking.realsense.RealSenseRecording``
    (``align_color``: the SDK's colour aligned to depth instead of colour in its own camera).
    """
    from sim2real.core.camera_io import load_camera, load_camera_sized_by
    from sim2real.tracking.realsense.recording import recording_source

    recording = recording_source(
        source, camera, color, color_camera, T_depth_color, use_color, align_color
    )
    if recording is not None:  # a RealSense .bag / .db3
        return recording
    if encoding not in ENCODINGS:
        raise InputError(
            None, "--encoding", f"unknown depth encoding {encoding!r}; expected one of {ENCODINGS}"
        )
    folder: Path | None = None
    if isinstance(source, list | tuple):
        paths = [Path(p) for p in source]
        if len(paths) == 1 and paths[0].is_dir():
            folder = paths[0]
    else:
        folder = Path(source) if Path(source).is_dir() else None
        paths = [Path(source)]
    if folder is not None:
        depth_dir = folder / "depth" if (folder / "depth").is_dir() else folder
        paths = _depth_files(depth_dir)
        where: object = depth_dir
    else:
        where = paths[0].parent if paths else source
        for p in paths:
            if not p.exists():  # the usual mistake: a mistyped sequence folder
                raise InputError(
                    p,
                    None,
                    "no such file or folder (frames: a sequence folder, depth images or a "
                    "RealSense recording)",
                )
            if not p.is_file():
                raise InputError(p, None, "depth image not found")
    if not paths:
        why = "no depth frames found"
        if folder is not None:
            images = [p.name for p in depth_dir.iterdir() if p.suffix.lower() in DEPTH_SUFFIXES]
            if images:  # a folder's frames are ordered by the number in their names
                why = f"{len(images)} depth images ({images[0]}, ...) but none with a frame number in its name"
        raise InputError(where, "depth", why)
    ids, paths, named = numbered(paths)
    if named:
        _warn_gaps(where, ids)

    scales: dict[int, float] | None = None
    gt = None
    cameras = None
    scene_camera = folder / "scene_camera.json" if folder is not None else None
    if scene_camera is not None and scene_camera.is_file():
        scales = bop_scales(scene_camera)
    if camera is not None:
        intrinsics = load_camera_sized_by(camera, paths[0])
    elif paths[0].suffix.lower() == ".pcd":  # an organised cloud carries its own pinhole
        from sim2real.sensors.real_frame import load_real_frame

        intrinsics = load_real_frame(paths[0], None)[1]
    elif scene_camera is not None and scene_camera.is_file():
        image_id = ids[0] if ids[0] in scales else None
        intrinsics = load_camera_sized_by(scene_camera, paths[0], image_id=image_id)
        if one_camera:
            check_one_camera(scene_camera, ids)
        cameras = _cameras_by_frame(scene_camera, ids, intrinsics, scales)
    elif folder is not None and (folder / "camera.json").is_file():
        with warnings.catch_warnings():  # BOP's camera.json gives mm per unit: expected here
            warnings.filterwarnings("ignore", message=".*read as millimetres per unit.*")
            intrinsics = load_camera(folder / "camera.json")
    elif folder is not None and (beside := _camera_beside(folder)) is not None:
        intrinsics = load_camera(beside)  # another tool's camera file beside the frames
    else:
        why = (
            f"no camera file: pass one (scene_camera.json, camera.json, {', '.join(CAMERA_FILES)})"
        )
        raise InputError(where, "camera", why)

    if scales:
        depth_scale = scales.get(ids[0], next(iter(scales.values())))
        by_frame = scales if len(set(scales.values())) > 1 else None
    else:
        by_frame = None
        first = paths[0]
        has_sidecar = first.suffix.lower() == ".png" and first.with_suffix(".json").is_file()
        depth_scale = None if has_sidecar else intrinsics.depth_scale
    if read_gt and folder is not None and (folder / "scene_gt.json").is_file():
        gt = load_scene_gt(folder / "scene_gt.json", obj_id)
    visible = None
    if folder is not None and (folder / "visible.json").is_file():
        visible = read_visible(folder / "visible.json")
    sequence = Sequence(intrinsics, ids, paths, gt, encoding, depth_scale, by_frame, visible)
    sequence.camera_by_frame = cameras
    if use_color:
        attach_color(sequence, where, folder, named, color, camera, color_camera, T_depth_color)
    return sequence
