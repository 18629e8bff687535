"""Camera intrinsics from the YAML files of calibration tools (read by
``sim2real.core.camera_io.load_camera``), and the field helpers every camera format shares.

- M3T: ``intrinsics: {f_u, f_v, pp_x, pp_y, width, height}`` with ``depth_scale``;
- OpenCV / ROS ``camera_calibration``: ``camera_matrix`` (or ``K``, ``cameraMatrix``) with
  ``image_width`` / ``image_height``; a ROS 1 ``CameraInfo`` message (``K D P``, ``width``,
  ``height``, its ``roi`` and ``binning_x`` / ``binning_y`` applied) and a ROS 2 one (the same in
  lower case). Where the file gives lens distortion and a
  projection matrix, the intrinsics are the projection's: the rectified image's, which is what a
  pinhole camera can take (ROS ``image_geometry`` does the same for rectified images);
- Kalibr camchain: ``cam0: {intrinsics: [fu, fv, pu, pv], resolution: [w, h]}`` (the first
  camera; a pinhole model).
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from sim2real.core.errors import InputError

_DISTORTION_KEYS = ("distortion_coefficients", "D", "d", "distCoeffs", "dist_coeffs")
_PROJECTION_KEYS = ("projection_matrix", "P", "p")


def get_field(d: dict, key: str, path: Path, field: str | None = None) -> Any:
    if key not in d or d[key] is None:
        raise InputError(path, field or key, "missing field")
    return d[key]


def K_entries(K: Any, path: Path, field: str, *, column_major: bool = False) -> dict[str, float]:
    """fx, fy, cx, cy of a 3x3 camera matrix given as 9 numbers or a 3x3 array."""
    try:
        k = np.asarray(K, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(path, field, f"not a numeric matrix ({exc})") from exc
    if k.size != 9:
        raise InputError(path, field, f"expected 9 numbers (a 3x3 matrix), got {k.size}")
    k = k.reshape(3, 3, order="F" if column_major else "C")
    if not np.all(np.isfinite(k)):
        raise InputError(path, field, "matrix has non-finite values")
    if (
        abs(k[0, 1]) > 1e-9 * max(1.0, abs(k[0, 0]))
        or k[1, 0] != 0
        or not np.allclose(k[2], [0, 0, 1])
    ):
        order = "column-major" if column_major else "row-major"
        raise InputError(
            path,
            field,
            f"expected [[fx 0 cx] [0 fy cy] [0 0 1]] ({order}), got {k.tolist()} "
            "(skew unsupported)",
        )
    return {"fx": k[0, 0], "fy": k[1, 1], "cx": k[0, 2], "cy": k[1, 2]}


def from_yaml(d: dict, path: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """(values, our field -> the file's name for it) of a camera YAML (see the module doc)."""
    if isinstance(d.get("intrinsics"), dict):
        values, names = _from_m3t(d["intrinsics"], path)
    elif (cam := _kalibr_camera(d)) is not None:
        return _from_kalibr(d[cam], cam, path)
    else:
        values, names = _from_camera_matrix(d, path)
    if "depth_scale" in d:
        values["depth_scale"] = d["depth_scale"]
    return values, names


def _from_m3t(intr: dict, path: Path) -> tuple[dict[str, Any], dict[str, str]]:
    names = {"fx": "f_u", "fy": "f_v", "cx": "pp_x", "cy": "pp_y", "width": "width",
             "height": "height"}  # fmt: skip
    values = {ours: get_field(intr, theirs, path, f"intrinsics.{theirs}")
              for ours, theirs in names.items()}  # fmt: skip
    return values, {k: f"intrinsics.{v}" for k, v in names.items()}


def _from_camera_matrix(d: dict, path: Path) -> tuple[dict[str, Any], dict[str, str]]:
    key = next((k for k in ("camera_matrix", "K", "cameraMatrix", "k") if k in d), None)
    if key is None:
        raise InputError(
            path,
            None,
            "unknown camera format: no intrinsics (M3T), camera_matrix or K (OpenCV, ROS) or "
            "cam0 (Kalibr) in the YAML",
        )
    distortion = _distortion(d)
    projection = next((k for k in _PROJECTION_KEYS if k in d), None)
    if distortion is not None and projection is not None:
        key, matrix = projection, _matrix_data(d[projection], path, projection)
        values = K_entries(_projection_K(matrix, path, key), path, key)
        warnings.warn(
            f"{path}: intrinsics from the projection matrix {key} (the rectified image's); "
            f"{distortion[0]} {distortion[1]} applies to raw frames: give rectified ones",
            stacklevel=4,
        )
    else:
        values = K_entries(_matrix_data(d[key], path, key), path, key)
        if distortion is not None:
            warn_ignored_distortion(path, *distortion)
    names = {"fx": key, "fy": key, "cx": key, "cy": key}
    for ours, candidates in (("width", ("image_width", "width")),
                             ("height", ("image_height", "height"))):  # fmt: skip
        theirs = next((c for c in candidates if c in d), candidates[0])
        values[ours] = get_field(d, theirs, path)
        names[ours] = theirs
    _apply_binning_and_roi(d, values, names, path)
    return values, names


def _apply_binning_and_roi(d: dict, values: dict, names: dict, path: Path) -> None:
    """A CameraInfo's ``roi`` and ``binning_x`` / ``binning_y``, as ROS ``image_geometry`` reads
    them: K, width and height are the full sensor's; the published image is the region (all
    zero: the whole sensor) binned, so the principal point moves by the offset and K and the
    size shrink by the binning. Ignored, a binned camera's frames would be read 2x off."""
    if not all(isinstance(values[k], int) for k in ("width", "height")):
        return  # the camera's own checks name the size
    # 0 and 1 both mean no binning
    binning = {axis: max(1, _count(d, f"binning_{axis}", path)) for axis in ("x", "y")}
    roi = d.get("roi") or {}
    if not isinstance(roi, dict):
        raise InputError(path, "roi", f"expected x_offset, y_offset, width, height; got {roi!r}")
    region = {k: _count(roi, k, path, "roi.") for k in ("x_offset", "y_offset", "width", "height")}
    if region["width"] and region["height"]:  # a region: a crop of the full sensor
        for size, offset, axis in (("width", "x_offset", "x"), ("height", "y_offset", "y")):
            if region[offset] + region[size] > values[size]:
                raise InputError(
                    path,
                    f"roi.{offset}",
                    f"region {region[offset]} + {region[size]} px beyond the sensor's "
                    f"{values[size]} px {size}",
                )
            values[f"c{axis}"] -= region[offset]
            values[size] = region[size]
            names[size] = f"roi.{size}"
    for axis, size in (("x", "width"), ("y", "height")):
        if binning[axis] > 1:
            values[f"f{axis}"] /= binning[axis]
            values[f"c{axis}"] /= binning[axis]
            values[size] //= binning[axis]
            names[size] = f"{names[size]} / binning_{axis}"


def _count(d: dict, key: str, path: Path, prefix: str = "") -> int:
    """``d[key]`` as an integer >= 0 (absent or null: 0), else an InputError naming it."""
    value = d.get(key) or 0
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InputError(path, prefix + key, f"expected an integer >= 0, got {value!r}")
    return value


def _matrix_data(value: Any, path: Path, key: str) -> Any:
    """A matrix as numbers: OpenCV / ROS ``{rows, cols, data}`` or a list."""
    return get_field(value, "data", path, f"{key}.data") if isinstance(value, dict) else value


def _projection_K(P: Any, path: Path, key: str) -> np.ndarray:
    try:
        p = np.asarray(P, dtype=np.float64).ravel()
    except (TypeError, ValueError) as exc:
        raise InputError(path, key, f"not a numeric matrix ({exc})") from exc
    if p.size != 12:
        raise InputError(path, key, f"expected 12 numbers (a 3x4 projection), got {p.size}")
    return p.reshape(3, 4)[:, :3]


def _distortion(d: dict) -> tuple[str, list[float]] | None:
    """(key, coefficients) when the file gives non-zero lens distortion, else None."""
    key = next((k for k in _DISTORTION_KEYS if k in d), None)
    if key is None:
        return None
    coeffs = d[key]
    if isinstance(coeffs, dict):  # OpenCV / ROS {rows, cols, data}
        coeffs = coeffs.get("data")
    values = _nonzero(coeffs)
    return None if values is None else (key, values)


def _nonzero(coeffs: Any) -> list[float] | None:
    """The coefficients when any is non-zero, else None (also for what is not numbers)."""
    try:
        values = np.asarray(coeffs if coeffs is not None else [], dtype=float).ravel()
    except (TypeError, ValueError):
        return None
    return values.tolist() if np.any(np.isfinite(values) & (values != 0)) else None


def warn_ignored_distortion(path: Path, what: str, coeffs: Any) -> None:
    """Say so when a camera file gives lens distortion: the project's cameras are pinholes."""
    values = _nonzero(coeffs)
    if values is not None:
        warnings.warn(
            f"{path}: {what} {values} ignored: sim2real's cameras are pinholes; give "
            "undistorted (rectified) frames",
            stacklevel=5,
        )


def _kalibr_camera(d: dict) -> str | None:
    """The first ``camN`` entry of a Kalibr camchain, else None."""
    cams = sorted((k for k in d if re.fullmatch(r"cam\d+", str(k)) and isinstance(d[k], dict)),
                  key=lambda k: int(k[3:]))  # fmt: skip
    return cams[0] if cams and "intrinsics" in d[cams[0]] else None


def _from_kalibr(cam: dict, name: str, path: Path) -> tuple[dict[str, Any], dict[str, str]]:
    model = cam.get("camera_model", "pinhole")
    if model != "pinhole":
        raise InputError(path, f"{name}.camera_model", f"{model!r}: only pinhole cameras")
    try:
        fu, fv, pu, pv = (float(v) for v in cam["intrinsics"])
        width, height = (int(v) for v in get_field(cam, "resolution", path, f"{name}.resolution"))
    except (TypeError, ValueError) as exc:
        raise InputError(path, f"{name}.intrinsics", f"expected [fu, fv, pu, pv] ({exc})") from None
    warn_ignored_distortion(path, f"{name}.distortion_coeffs", cam.get("distortion_coeffs"))
    values = {"fx": fu, "fy": fv, "cx": pu, "cy": pv, "width": width, "height": height}
    names = dict.fromkeys(("fx", "fy", "cx", "cy"), f"{name}.intrinsics")
    return values, {**names, "width": f"{name}.resolution", "height": f"{name}.resolution"}
