"""Camera intrinsics from an Azure Kinect factory calibration (read by
``sim2real.core.camera_io.load_camera``): the JSON ``k4a_device_get_raw_calibration`` returns,
which ``k4arecorder`` attaches to its recordings as ``calibration.json``.

Its ``CalibrationInformation.Cameras`` hold the depth camera (``Location``
``CALIBRATION_CameraLocationD0``) and the colour camera (``..._CameraLocationPV0``) with
normalised intrinsics: ``ModelParameters`` ``[cx, cy, fx, fy, k1..k6, codx, cody, p2, p1]``,
principal point and focal lengths as fractions of the sensor's width and height, (0, 0) the
corner of the first pixel. The Sensor SDK turns them into each depth mode's or colour
resolution's pixels in ``transformation_get_mode_specific_camera_calibration``
(src/transformation/mode_specific_calibration.c): scale to the mode's binned sensor size, shift
by its crop, and by half a pixel to the OpenCV convention (0 the centre of the first pixel).
The frames' size picks the mode, and so the camera: a depth mode's size is D0's, a colour
resolution's PV0's (depth registered to colour has the colour camera's size).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sim2real.core.camera_yaml import warn_ignored_distortion
from sim2real.core.errors import InputError

_DEPTH, _COLOR = "CALIBRATION_CameraLocationD0", "CALIBRATION_CameraLocationPV0"

# output (width, height) -> (binned sensor width, height; crop x, y) of each mode, from the SDK
K4A_MODES: dict[tuple[int, int], tuple[str, str, tuple[int, int, int, int]]] = {
    (320, 288): (_DEPTH, "NFOV_2X2BINNED", (512, 512, 96, 90)),
    (640, 576): (_DEPTH, "NFOV_UNBINNED", (1024, 1024, 192, 180)),
    (512, 512): (_DEPTH, "WFOV_2X2BINNED", (512, 512, 0, 0)),
    (1024, 1024): (_DEPTH, "WFOV_UNBINNED", (1024, 1024, 0, 0)),
    (1280, 720): (_COLOR, "720P", (1280, 960, 0, 120)),
    (1920, 1080): (_COLOR, "1080P", (1920, 1440, 0, 180)),
    (2560, 1440): (_COLOR, "1440P", (2560, 1920, 0, 240)),
    (2048, 1536): (_COLOR, "1536P", (2048, 1536, 0, 0)),
    (3840, 2160): (_COLOR, "2160P", (3840, 2880, 0, 360)),
    (4096, 3072): (_COLOR, "3072P", (4096, 3072, 0, 0)),
}

_SIZES = ", ".join(f"{w}x{h} {mode}" for (w, h), (_, mode, _) in K4A_MODES.items())


def is_k4a_calibration(d: dict) -> bool:
    return isinstance(d.get("CalibrationInformation"), dict)


def _mode(path: Path, width: int | None, height: int | None) -> tuple[str, str, tuple]:
    if width is None or height is None:
        raise InputError(
            path,
            "width",
            "an Azure Kinect calibration holds every depth mode and colour resolution: pass the "
            f"frames' image size (width, height) to pick one ({_SIZES}), or give the mode's "
            "intrinsics as a camera.json (pyk4a: calibration.get_camera_matrix)",
        )
    if (width, height) not in K4A_MODES:
        raise InputError(
            path, "width", f"{width}x{height} px is no Azure Kinect mode; the modes: {_SIZES}"
        )
    return K4A_MODES[(width, height)]


def _camera(cameras: Any, location: str, path: Path) -> tuple[dict, str]:
    if not isinstance(cameras, list):
        raise InputError(path, "CalibrationInformation.Cameras", "expected a list of cameras")
    for i, camera in enumerate(cameras):
        if isinstance(camera, dict) and camera.get("Location") == location:
            return camera, f"CalibrationInformation.Cameras[{i}]"
    raise InputError(path, "CalibrationInformation.Cameras", f"no camera at {location}")


def _parameters(camera: dict, field: str, path: Path) -> list[float]:
    params = (camera.get("Intrinsics") or {}).get("ModelParameters")
    field = f"{field}.Intrinsics.ModelParameters"
    try:
        values = [float(v) for v in params]
    except (TypeError, ValueError):
        raise InputError(path, field, f"expected 14 numbers, got {params!r}") from None
    if len(values) < 4:
        raise InputError(
            path, field, f"expected [cx, cy, fx, fy, k1...], got {len(values)} numbers"
        )
    return values


def _sensor_size(camera: dict, field: str, path: Path) -> tuple[int, int]:
    try:
        return int(camera["SensorWidth"]), int(camera["SensorHeight"])
    except (KeyError, TypeError, ValueError):
        raise InputError(path, f"{field}.SensorWidth", "missing or not a number") from None


def _unitized(params: list[float], sensor: tuple[int, int], location: str, field: str, path: Path):
    """(cx, cy, fx, fy) as fractions of a 4:3 sensor (depth: 1024x1024). Older colour
    calibrations are of a 16:9 crop (4096x2304): the SDK rescales them to 4096x3072 first."""
    cx, cy, fx, fy = params[:4]
    w, h = sensor
    if location == _DEPTH and sensor != (1024, 1024):
        raise InputError(
            path, f"{field}.SensorWidth", f"expected a 1024x1024 depth sensor, got {w}x{h}"
        )
    if location == _COLOR and w * 9 // 16 == h:
        return cx, (cy * 2304 + 384) / 3072, fx, fy * 2304 / 3072
    if location == _COLOR and w * 3 // 4 != h:
        raise InputError(
            path, f"{field}.SensorWidth", f"expected a 4:3 or 16:9 sensor, got {w}x{h}"
        )
    return cx, cy, fx, fy


def from_k4a_calibration(
    d: dict, path: Path, width: int | None, height: int | None
) -> tuple[dict[str, Any], dict[str, str]]:
    """(values, our field -> the file's name for it) of the camera whose mode has the frames' size."""
    location, _, (binned_w, binned_h, crop_x, crop_y) = _mode(path, width, height)
    cameras = d["CalibrationInformation"].get("Cameras")
    camera, field = _camera(cameras, location, path)
    params = _parameters(camera, field, path)
    cx, cy, fx, fy = _unitized(params, _sensor_size(camera, field, path), location, field, path)
    values = {
        "fx": fx * binned_w,
        "fy": fy * binned_h,
        "cx": cx * binned_w - crop_x - 0.5,
        "cy": cy * binned_h - crop_y - 0.5,
        "width": width,
        "height": height,
    }
    model = (camera.get("Intrinsics") or {}).get("ModelType", "distortion")
    warn_ignored_distortion(path, f"{field} k1..k6 p2 p1 ({model})", params[4:10] + params[12:14])
    return values, dict.fromkeys(("fx", "fy", "cx", "cy"), f"{field}.Intrinsics.ModelParameters")
