"""Read and write camera intrinsics in the formats depth datasets and tools use.

``load_camera`` detects the format from the file's content:

- simple ``camera.json`` (what ``save_camera`` writes): ``fx fy cx cy width height`` and an
  optional ``depth_scale`` in metres per unit;
- BOP ``scene_camera.json``: image ids -> ``cam_K`` (9 numbers, row-major) and ``depth_scale``
  in millimetres per unit (BOP: depth_mm = value * depth_scale). It has no image size: that
  comes from the ``width=`` / ``height=`` keywords or from BOP's ``camera.json`` /
  ``camera_<sensor>.json`` in the scene folder or up to two folders above it;
- Open3D ``PinholeCameraIntrinsic`` JSON: ``width``, ``height``, ``intrinsic_matrix``
  (9 numbers, column-major);
- pyrealsense2's ``rs.intrinsics`` as JSON: ``fx fy ppx ppy width height`` (``model`` and
  ``coeffs``: distortion, said to be ignored);
- YAML of M3T, OpenCV, ROS 1 and 2 ``camera_info`` and Kalibr (``sim2real.core.camera_yaml``);
- PCL grabber XML (``ImageGrabber``'s ``frame_*_camera.xml``): the ``<depth>`` section;
- ZED (Stereolabs) factory calibration ``SN<serial>.conf`` (``sim2real.core.camera_zed``) and
  Azure Kinect factory calibration JSON (``sim2real.core.camera_k4a``): one camera per
  resolution, picked by the ``width=`` / ``height=`` of the frames.

Keyword arguments ``width``, ``height`` and ``depth_scale`` (metres per unit) replace what
the file gives, and fill in what it lacks. Every problem raises ``InputError(file, field, ...)``.
"""

from __future__ import annotations

import json
import re
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from sim2real.core.atomic import write_text_atomic
from sim2real.core.camera import CameraIntrinsics
from sim2real.core.camera_k4a import from_k4a_calibration, is_k4a_calibration
from sim2real.core.camera_yaml import K_entries as _K_entries
from sim2real.core.camera_yaml import from_yaml, warn_ignored_distortion
from sim2real.core.camera_yaml import get_field as _get
from sim2real.core.camera_zed import from_zed_conf, is_zed_conf
from sim2real.core.errors import InputError
from sim2real.core.json_io import read_json
from sim2real.core.strict import validation_error

# PCL's grabber XML holds no image size. PCL's ImageGrabber writes these files for frames of
# the OpenNI grabber, whose default (and most common) depth mode is VGA, 640x480.
PCL_DEFAULT_SIZE = (640, 480)

# A ``depth_scale`` this large in metres per unit (1 cm or more per unit) fits no depth sensor;
# BOP's ``camera_*.json`` give millimetres per unit (0.1, 1.0), so such a value is read as mm.
_BOP_MM_SCALE_MIN = 0.01

_FIELDS = ("fx", "fy", "cx", "cy", "width", "height", "depth_scale")


def _build(
    path: Path, values: dict[str, Any], names: dict[str, str] | None = None
) -> CameraIntrinsics:
    """CameraIntrinsics from ``values``; a validation error names the file's field (``names``
    maps our field to the file's name for it)."""
    names = names or {}
    try:
        return CameraIntrinsics(**values)
    except ValidationError as exc:
        e = validation_error(exc, path, model=CameraIntrinsics)
        raise InputError(path, names.get(e.field, e.field), e.message) from None


def _from_simple_json(d: dict, path: Path) -> dict[str, Any]:
    for key in ("fx", "fy", "cx", "cy", "width", "height"):
        _get(d, key, path)
    values = dict(d)
    scale = values.get("depth_scale")
    if isinstance(scale, int | float) and scale >= _BOP_MM_SCALE_MIN:
        warnings.warn(
            f"{path}: depth_scale {scale} is read as millimetres per unit "
            "(BOP camera file convention)",
            stacklevel=3,
        )
        values["depth_scale"] = scale / 1000.0
    return values


def _from_realsense_json(d: dict, path: Path) -> dict[str, Any]:
    """pyrealsense2's ``rs.intrinsics`` as JSON: ``fx fy ppx ppy width height model coeffs``."""
    values = {ours: _get(d, theirs, path) for ours, theirs in
              (("fx", "fx"), ("fy", "fy"), ("cx", "ppx"), ("cy", "ppy"), ("width", "width"),
               ("height", "height"))}  # fmt: skip
    warn_ignored_distortion(path, f"coeffs ({d.get('model', 'distortion')})", d.get("coeffs"))
    if "depth_scale" in d:
        values["depth_scale"] = d["depth_scale"]
    return values


def bop_camera_file(path: Path) -> Path | None:
    """BOP's camera file for a scene_camera.json: in its folder or up to two folders above
    (``<dataset>/camera.json`` or ``camera_<sensor>.json``, matched to a ``<split>_<sensor>``
    split folder when there are several)."""
    for folder in (path.parent, path.parent.parent, path.parent.parent.parent):
        if (folder / "camera.json").is_file():
            return folder / "camera.json"
        found = sorted(folder.glob("camera_*.json"))
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            sensor = path.parent.parent.name.partition("_")[2]
            match = folder / f"camera_{sensor}.json"
            if sensor and match.is_file():
                return match
            names = ", ".join(p.name for p in found)
            raise InputError(
                path,
                "width",
                f"several BOP camera files in {folder} ({names}): pass width and height",
            )
    return None


def bop_default_scale_mm(path: Path) -> float:
    """Millimetres per unit of a scene_camera.json entry without ``depth_scale``: BOP gives it
    once for the dataset in its camera file (``bop_camera_file``), else 1 (millimetres)."""
    try:
        found = bop_camera_file(path)
    except InputError:  # several camera files: none is the scene's for sure
        found = None
    data = read_json(found) if found is not None else None
    if not isinstance(data, dict) or "depth_scale" not in data:
        return 1.0
    value = data["depth_scale"]
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise InputError(found, "depth_scale", f"expected mm per unit > 0, got {value!r}")
    return float(value)


def _from_bop(d: dict, path: Path, image_id: int | None) -> dict[str, Any]:
    try:
        ids = sorted(d, key=int)
    except ValueError as exc:
        raise InputError(path, None, "BOP scene_camera.json keys must be image ids") from exc
    key = ids[0] if image_id is None else str(int(image_id))
    if key not in d:
        raise InputError(
            path, "image_id", f"image id {image_id} not in the file (ids {ids[0]}..{ids[-1]})"
        )
    entry = d[key]
    if not isinstance(entry, dict):
        raise InputError(path, key, "expected an object with cam_K and depth_scale")
    values: dict[str, Any] = _K_entries(_get(entry, "cam_K", path), path, "cam_K")
    scale_mm = entry.get("depth_scale")  # BOP: depth_mm = value * depth_scale
    if scale_mm is None:
        scale_mm = bop_default_scale_mm(path)
    values["depth_scale"] = scale_mm / 1000.0 if isinstance(scale_mm, int | float) else scale_mm
    size_file = bop_camera_file(path)
    if size_file is not None:
        size = read_json(size_file)
        if not isinstance(size, dict):
            raise InputError(size_file, None, "expected a JSON object with width and height")
        values["width"] = _get(size, "width", size_file)
        values["height"] = _get(size, "height", size_file)
    return values


def _from_open3d(d: dict, path: Path) -> dict[str, Any]:
    values: dict[str, Any] = _K_entries(
        _get(d, "intrinsic_matrix", path), path, "intrinsic_matrix", column_major=True
    )
    values["width"] = _get(d, "width", path)
    values["height"] = _get(d, "height", path)
    return values


def _pcl_sibling_size(path: Path) -> tuple[int, int] | None:
    """(width, height) of the grabber's depth TIFF beside ``frame_*_camera.xml``, if any."""
    if not path.name.endswith("_camera.xml"):
        return None
    for suffix in ("_depth.tiff", "_depth.tif"):
        tiff = path.with_name(path.name[: -len("_camera.xml")] + suffix)
        if tiff.is_file():
            import tifffile

            try:
                with tifffile.TiffFile(tiff) as tf:
                    shape = tf.pages[0].shape
            except (OSError, ValueError, tifffile.TiffFileError):
                return None
            return int(shape[1]), int(shape[0])
    return None


def _from_pcl_xml(text: str, path: Path) -> tuple[dict[str, Any], dict[str, str]]:
    body = re.sub(r"^\s*<\?xml[^>]*\?>", "", text)  # the file has two root elements: wrap them
    try:
        root = ET.fromstring(f"<root>{body}</root>")
    except ET.ParseError as exc:
        raise InputError(path, None, f"not valid XML ({exc})") from exc
    depth = root.find("depth")
    if depth is None:
        raise InputError(path, "depth", "missing <depth> section (PCL grabber camera XML)")
    names = {
        "fx": "focal_length_x",
        "fy": "focal_length_y",
        "cx": "principal_point_x",
        "cy": "principal_point_y",
    }
    values: dict[str, Any] = {}
    for ours, theirs in names.items():
        node = depth.find(theirs)
        if node is None or not (node.text or "").strip():
            raise InputError(path, f"depth.{theirs}", "missing field")
        values[ours] = node.text.strip()
    scale = depth.find("z_multiplication_factor")
    if scale is not None and (scale.text or "").strip():
        values["depth_scale"] = scale.text.strip()
        names["depth_scale"] = "z_multiplication_factor"
    values["width"], values["height"] = _pcl_sibling_size(path) or PCL_DEFAULT_SIZE
    return values, {k: f"depth.{v}" for k, v in names.items()}


def load_camera(
    path: str | Path,
    *,
    image_id: int | None = None,
    width: int | None = None,
    height: int | None = None,
    depth_scale: float | None = None,
) -> CameraIntrinsics:
    """Intrinsics from a camera file of any supported format (see the module doc).

    ``image_id`` picks the entry of a BOP scene_camera.json (default: the lowest id).
    ``width``, ``height`` [px] and ``depth_scale`` [metres per unit] override the file.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(path, None, "camera file not found")
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, None, f"cannot read camera file ({exc})") from exc
    head = text.lstrip()
    names: dict[str, str] = {}
    if is_zed_conf(head):
        values, names = from_zed_conf(text, path, width, height)
    elif head.startswith(("{", "[")):
        d = read_json(path)
        if not isinstance(d, dict) or not d:
            raise InputError(path, None, "unknown camera format: expected a JSON object")
        if is_k4a_calibration(d):
            values, names = from_k4a_calibration(d, path, width, height)
        elif "intrinsic_matrix" in d:
            values = _from_open3d(d, path)
        elif "ppx" in d or "ppy" in d:
            values = _from_realsense_json(d, path)
        elif "fx" in d or "fy" in d:
            values = _from_simple_json(d, path)
        elif all(isinstance(v, dict) for v in d.values()) and any("cam_K" in v for v in d.values()):
            values = _from_bop(d, path, image_id)
            if width is None and "width" not in values:
                raise InputError(
                    path,
                    "width",
                    "BOP scene_camera.json has no image size: pass width and height, "
                    "or keep BOP's camera.json beside it",
                )
            if height is None and "height" not in values:
                raise InputError(
                    path, "height", "BOP scene_camera.json has no image size: pass height"
                )
        else:
            raise InputError(
                path,
                None,
                "unknown camera format: JSON without fx (camera.json), ppx (pyrealsense2), "
                "intrinsic_matrix (Open3D), cam_K entries (BOP scene_camera.json) or "
                "CalibrationInformation (Azure Kinect)",
            )
    elif head.startswith("<"):
        values, names = _from_pcl_xml(text, path)
    else:
        from sim2real.core.opencv_yaml import load_opencv_yaml

        try:
            d = load_opencv_yaml(path)
        except InputError as exc:
            raise InputError(
                path,
                None,
                f"unknown camera format (not JSON, XML, YAML or ZED .conf): {exc.message}",
            ) from exc
        values, names = from_yaml(d, path)
    for key, override in (("width", width), ("height", height), ("depth_scale", depth_scale)):
        if override is not None:
            values[key] = override
            names.pop(key, None)
    return _build(path, values, names)


def save_camera(camera: CameraIntrinsics, path: str | Path) -> None:
    """Write the simple ``camera.json`` (depth_scale in metres per unit), atomically."""
    data = {k: getattr(camera, k) for k in _FIELDS}
    write_text_atomic(path, json.dumps(data, indent=2) + "\n")


def load_camera_pose(path: str | Path) -> np.ndarray:
    """(4, 4) float64 ``camera2world_pose`` of an M3T camera YAML: maps camera coordinates
    into the world frame (``T_world_cam``), translation in metres."""
    from sim2real.core.opencv_yaml import load_opencv_yaml
    from sim2real.core.pose import check_rigid

    path = Path(path)
    if not path.is_file():
        raise InputError(path, None, "camera file not found")
    d = load_opencv_yaml(path)
    value = _get(d, "camera2world_pose", path)
    if isinstance(value, dict):
        value = _get(value, "data", path, "camera2world_pose.data")
    try:
        T = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(path, "camera2world_pose", f"not a numeric matrix ({exc})") from exc
    if T.size == 16:
        T = T.reshape(4, 4)
    return check_rigid(T, path, "camera2world_pose")


def load_world_camera_pose(text: str | Path) -> np.ndarray:
    """(4, 4) ``T_world_cam`` from an M3T camera YAML (its ``camera2world_pose``) or from a
    pose as every pose option takes it (inline numbers, a 4x4 text, JSON or YAML file)."""
    from sim2real.core.pose import parse_pose

    path = Path(text)
    if path.is_file() and "camera2world_pose" in path.read_text(errors="replace")[:65536]:
        return load_camera_pose(path)
    return parse_pose(text, field="camera_pose")


def load_camera_sized_by(path: str | Path, frame: str | Path, **kwargs: Any) -> CameraIntrinsics:
    """``load_camera``; a file without the image size (a BOP scene_camera.json alone, ZED's
    SN*.conf, Azure Kinect's raw calibration: sections per resolution) takes ``frame``'s."""
    try:
        return load_camera(path, **kwargs)
    except InputError as exc:
        if exc.field not in ("width", "height") or kwargs.get("width") is not None:
            raise
        size = _image_size(Path(frame))
        if size is None:
            raise
    return load_camera(path, **kwargs, width=size[0], height=size[1])


def _image_size(frame: Path) -> tuple[int, int] | None:
    """(width, height) of a depth image or .npy frame, None where it cannot be read."""
    try:
        if frame.suffix.lower() == ".npy":
            shape = np.load(frame, mmap_mode="r", allow_pickle=False).shape
            return (int(shape[1]), int(shape[0])) if len(shape) == 2 else None
        from PIL import Image

        with Image.open(frame) as im:
            return im.size
    except (OSError, ValueError):
        return None
