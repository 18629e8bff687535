"""Real depth frames as (H, W) float32 metres with their camera: depth images (through
``sim2real.core.depth_io.read_depth``) and organised point clouds (PCD, PLY), whose pinhole
intrinsics are fitted to their points."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np
from pydantic import ValidationError

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.errors import InputError
from sim2real.core.strict import validation_error

CLOUD_SUFFIXES = (".pcd", ".ply")
MAX_PINHOLE_RESIDUAL_PX = 0.5
"""An organised cloud is a depth image when its points reproject within 0.5 px (RMS) through
the pinhole intrinsics fitted to them."""


def _encoding_of(path: Path, encoding: str) -> str:
    if encoding != "auto":
        return encoding
    return {".png": "png", ".tif": "tiff", ".tiff": "tiff", ".npy": "npy", ".pgm": "pgm"}.get(
        path.suffix.lower(), "auto"
    )


def _count_invalid(path: Path, encoding: str) -> tuple[int, int]:
    """(non-finite, negative) values in a float file; ``read_depth`` reads them as 0."""
    try:
        if encoding == "npy":
            raw = np.load(path, allow_pickle=False)
        elif encoding == "tiff":
            import tifffile

            raw = tifffile.imread(path)
        else:
            return 0, 0
    except Exception:  # unreadable: read_depth raises the InputError
        return 0, 0
    if not np.issubdtype(raw.dtype, np.floating):
        return 0, 0
    finite = np.isfinite(raw)
    return int((~finite).sum()), int((raw[finite] < 0).sum())


FIXED_SCALES = {"tum": 1.0 / 5000.0, "sun": 0.001}
"""Metres per unit of the encodings whose unit is fixed by their dataset's format."""
PLAUSIBLE_MEDIAN_M = (0.05, 25.0)
"""The median return of a real depth frame lies between 5 cm (the shortest-range preset,
D405, starts at 7 cm) and 25 m; outside, the depth unit is wrong."""


def _stated_scale(camera: CameraIntrinsics | None) -> float | None:
    """The camera file's depth_scale when the file states one (not the default)."""
    if camera is None or "depth_scale" not in camera.model_fields_set:
        return None
    return camera.depth_scale


def _check_unit_witnesses(path: Path, encoding: str, camera: CameraIntrinsics | None) -> None:
    """InputError(path, 'depth_scale') when the unit the frame carries (its sidecar, its
    encoding's fixed unit) contradicts the one the camera file states."""
    from sim2real.core.depth_io import sidecar_path

    stated = _stated_scale(camera)
    if stated is None:
        return
    witness, what = None, ""
    if encoding in FIXED_SCALES:
        witness, what = FIXED_SCALES[encoding], f"the {encoding} encoding stores"
    elif encoding == "png" and sidecar_path(path).is_file():
        try:
            data = json.loads(sidecar_path(path).read_text())
        except (OSError, ValueError):
            data = None  # read_depth reports a broken sidecar
        if isinstance(data, dict) and isinstance(data.get("depth_scale"), int | float):
            witness, what = (
                float(data["depth_scale"]),
                f"its sidecar {sidecar_path(path).name} says",
            )
    if witness is not None and not np.isclose(witness, stated, rtol=1e-6, atol=0):
        raise InputError(
            path,
            "depth_scale",
            f"{what} {witness:g} m per unit but the camera file states {stated:g}: the depth "
            "unit contradicts the camera file; pass --depth-scale to say which holds",
        )


def check_plausible_depth(path, depth_m: np.ndarray, scale: float | None) -> None:
    """InputError(path, 'depth_scale') when the returns lie where no depth camera works: the
    unit the frame was read with is wrong (metres-like integers, millimetres as metres...)."""
    z = depth_m[depth_m > 0]
    if z.size == 0:
        return
    median = float(np.median(z))
    lo, hi = PLAUSIBLE_MEDIAN_M
    if lo <= median <= hi:
        return
    how = f"read with {scale:g} m per unit" if scale is not None else "read in its own unit"
    hint = (
        "the values look like a coarser unit (metres or centimetres as integers?)"
        if median < lo
        else "the values look like a finer unit (millimetres read as metres?)"
    )
    fix = (
        "check --depth-scale or the camera file's depth_scale"
        if scale is not None
        else "a float image or a point cloud is read as metres: convert it to metres"
    )
    raise InputError(
        path,
        "depth_scale",
        f"{how}, the median return lies at {median:.4g} m ({np.min(z):.4g}-{np.max(z):.4g} m), "
        f"outside any depth camera's range ({lo:g}-{hi:g} m): {hint}; {fix}",
    )


def _image_scale(path: Path, encoding: str, camera: CameraIntrinsics | None) -> float | None:
    """The camera's depth_scale for an integer png/tiff without a sidecar scale, else None."""
    from sim2real.core.depth_io import sidecar_path

    if camera is None or encoding not in ("png", "tiff"):
        return None
    if encoding == "png" and sidecar_path(path).is_file():
        try:
            data = json.loads(sidecar_path(path).read_text())
        except (OSError, ValueError):
            data = None  # read_depth reports a broken sidecar
        if not isinstance(data, dict) or "depth_scale" in data:
            return None  # the scale written with the image is the better witness
    if encoding == "tiff":
        import tifffile

        try:
            with tifffile.TiffFile(path) as tif:
                if np.issubdtype(tif.pages[0].dtype, np.floating):
                    return None
        except Exception:
            return None
    return camera.depth_scale


def _cloud_size(path: Path, camera: CameraIntrinsics | None) -> tuple[int, int]:
    """(width, height) of an organised cloud: the PCD header's WIDTH/HEIGHT; a PLY has none,
    so it takes the camera's size."""
    if path.suffix.lower() == ".pcd":
        head = path.read_bytes()[:4096].split(b"\nDATA", 1)[0].decode("ascii", "replace")
        size = {}
        for key in ("WIDTH", "HEIGHT"):
            m = re.search(rf"^{key}\s+(\d+)", head, re.MULTILINE)
            if m is None:
                raise InputError(path, key, "missing from the PCD header")
            size[key] = int(m.group(1))
        if size["HEIGHT"] <= 1:
            raise InputError(path, "HEIGHT", "an unorganised cloud (HEIGHT 1) is not a depth frame")
        return size["WIDTH"], size["HEIGHT"]
    if camera is None:
        raise InputError(
            path, "--camera", "a PLY holds no image size: pass the camera of this organised cloud"
        )
    return camera.width, camera.height


def _cloud_to_depth(
    path: Path, camera: CameraIntrinsics | None
) -> tuple[np.ndarray, CameraIntrinsics]:
    from sim2real.core.pointcloud_io import open3d_cloud

    width, height = _cloud_size(path, camera)
    if camera is not None:
        check_frame_size(path, (height, width), camera)
    cloud = open3d_cloud(path, remove_nan_points=False, remove_infinite_points=False)
    points = np.asarray(cloud.points, dtype=np.float64)
    if len(points) != width * height:
        raise InputError(
            path, "points", f"{len(points)} points, not {width}x{height}: not an organised cloud"
        )
    points = points.reshape(height, width, 3)
    valid = np.isfinite(points).all(axis=2) & (np.nan_to_num(points[..., 2]) > 0)
    if valid.sum() < 10:
        raise InputError(path, "points", "no valid depth (no finite point in front of the camera)")
    v, u = np.nonzero(valid)
    p = points[valid]
    fit = {}
    residual_sq = np.zeros(len(p))
    for axis, pixel, (f_name, c_name) in ((0, u, ("fx", "cx")), (1, v, ("fy", "cy"))):
        a = np.stack([p[:, axis] / p[:, 2], np.ones(len(p))], axis=1)
        coef = np.linalg.lstsq(a, pixel.astype(np.float64), rcond=None)[0]
        residual_sq += (pixel - a @ coef) ** 2
        fit[f_name], fit[c_name] = float(coef[0]), float(coef[1])
    rms = float(np.sqrt(residual_sq.mean()))
    if not rms < MAX_PINHOLE_RESIDUAL_PX or fit["fx"] <= 0 or fit["fy"] <= 0:
        raise InputError(
            path,
            "points",
            f"not a pinhole organised cloud: its points reproject {rms:.2f} px (RMS) from "
            f"their pixels through the best-fitting intrinsics (fx {fit['fx']:.1f}, "
            f"fy {fit['fy']:.1f}); at most {MAX_PINHOLE_RESIDUAL_PX} px is accepted",
        )
    try:
        fitted = CameraIntrinsics(
            **fit,
            width=width,
            height=height,
            depth_scale=camera.depth_scale if camera is not None else 0.001,
        )
    except ValidationError as exc:  # e.g. a principal point outside the image
        why = validation_error(exc, path).message
        raise InputError(path, "points", f"not a pinhole organised cloud: {why}") from None
    if camera is not None:
        off = max(abs(getattr(camera, k) - fit[k]) for k in ("fx", "fy", "cx", "cy"))
        if off > 1.0:
            warnings.warn(
                f"{path}: the cloud's own intrinsics (fx {fit['fx']:.2f}, fy {fit['fy']:.2f}, "
                f"cx {fit['cx']:.2f}, cy {fit['cy']:.2f}) differ from the camera's by up to "
                f"{off:.1f} px; using the cloud's",
                stacklevel=3,
            )
    depth = np.where(valid, np.nan_to_num(points[..., 2]), 0).astype(np.float32)
    return depth, fitted


def check_frame_size(source, shape: tuple[int, ...], camera: CameraIntrinsics) -> None:
    """InputError(source, '--camera') when an (H, W) frame does not have the camera's size."""
    if tuple(shape) != (camera.height, camera.width):
        raise InputError(
            source,
            "--camera",
            f"the frame is {shape[1]}x{shape[0]} px but the camera is "
            f"{camera.width}x{camera.height} px",
        )


def load_real_frame(
    path: str | Path,
    camera: CameraIntrinsics | None,
    *,
    encoding: str = "auto",
    depth_scale: float | None = None,
) -> tuple[np.ndarray, CameraIntrinsics]:
    """A real depth frame as ((H, W) float32 metres, 0 = no return; its camera).

    Depth images go through ``sim2real.core.depth_io.read_depth`` (png, tiff, tum, sun, npy,
    pgm) and need ``camera``; an integer png/tiff without an explicit ``depth_scale`` or a
    sidecar takes the camera's ``depth_scale``. Non-finite or negative values (float files)
    are read as no return, with a warning that counts them.
    Organised point clouds (``.pcd`` with HEIGHT > 1; ``.ply`` of exactly the camera's
    width × height points) become the depth z of each point, with the pinhole intrinsics
    fitted to the points by least squares (which are returned; ``camera``, if given, must
    have the same size and only lends its depth_scale).
    Raises InputError(file, field) for a missing camera, a size mismatch, or a frame without
    any valid depth.
    """
    from sim2real.core.depth_io import read_depth

    path = Path(path)
    if not path.is_file():
        raise InputError(path, None, "depth frame not found")
    if path.suffix.lower() in CLOUD_SUFFIXES:
        depth, camera = _cloud_to_depth(path, camera)
        check_plausible_depth(path, depth, None)
    else:
        if camera is None:
            raise InputError(
                path, "--camera", "a depth image needs the camera's intrinsics: pass --camera"
            )
        enc = _encoding_of(path, encoding)
        non_finite, negative = _count_invalid(path, enc)
        if depth_scale is None:
            _check_unit_witnesses(path, enc, camera)
            depth_scale = _image_scale(path, enc, camera)
        depth = read_depth(path, encoding=encoding, depth_scale=depth_scale)
        check_plausible_depth(path, depth, depth_scale)
        if non_finite or negative:
            warnings.warn(
                f"{path}: {non_finite} non-finite and {negative} negative depth values "
                "read as no return",
                stacklevel=2,
            )
        check_frame_size(path, depth.shape, camera)
    if not (depth > 0).any():
        raise InputError(path, "depth", "no valid depth: every pixel is 0 (no return)")
    return depth, camera
