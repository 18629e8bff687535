"""Read and write depth images: (H, W) float32 metres in memory, 0 = no return.

Encodings ``read_depth`` understands (``encoding="auto"`` picks by suffix: ``.png`` -> png,
``.tif``/``.tiff`` -> tiff, ``.npy`` -> npy, ``.pgm`` -> pgm):

- ``png``: uint16 x ``depth_scale`` [m per unit]; the scale comes from the argument, else the
  sidecar ``<stem>.json`` that ``write_depth`` leaves beside it, else 0.001 (millimetres);
  guessed from the suffix and read as millimetres, an image whose values say TUM or SUN (below)
  is refused;
- ``tiff``: uint16 x ``depth_scale`` (the argument, else a ``<stem>.json`` sidecar as for png,
  else mm: PCL's grabber frames), or float32 (below);
- ``tum``: TUM RGB-D PNG, depth = value / 5000 m;
- ``sun``: SUN RGB-D / SUN3D PNG: uint16 with the bits rotated right by 3,
  ``(v >> 3) | (v << 13)`` (16-bit), then millimetres (SUN3D toolbox ``depthRead.m``;
  Open3D ``RGBDImage::CreateFromSUNFormat``);
- ``npy``: float (below), or uint16 x ``depth_scale`` (the argument, else a sidecar; without
  either it is refused: a .npy of integers has no customary unit);
- ``pgm``: NYU Depth v2 raw Kinect frames: 16-bit PGM of raw disparity d (the NYU files hold
  it little-endian, despite PGM's big-endian rule: Open3D reads them big-endian, then swaps the
  bytes back in ``RGBDImage::CreateFromNYUFormat``), depth = 351.3 / (1092.5 - d) m, no return
  where that is not positive (d = 2047, the Kinect's invalid code), rounded to mm as Open3D does.

Float frames (tiff, npy) are metres. Some are mm or cm (the ZED SDK's ``UNIT.MILLIMETER``):
``depth_scale`` (or a sidecar's) converts those; without one, a float frame whose median lies
beyond ``FLOAT_METRES_MAX_MEDIAN_M`` is refused, not read 100-1000x too far; so is a scale
given for one already in metres."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np

from sim2real.core.atomic import atomic_path, write_text_atomic
from sim2real.core.depth_nyu import read_nyu_pgm
from sim2real.core.errors import InputError

DEFAULT_DEPTH_SCALE = 0.001  # metres per unit: millimetres
TUM_DEPTH_SCALE = 1.0 / 5000.0
ENCODINGS = ("auto", "png", "tiff", "tum", "sun", "npy", "pgm")
ENCODING_BY_SUFFIX = {".png": "png", ".tif": "tiff", ".tiff": "tiff", ".npy": "npy", ".pgm": "pgm"}
FIXED_UNIT_ENCODINGS = ("tum", "sun", "pgm")
"""Encodings whose unit is their own: no depth_scale applies."""


def sidecar_path(path: str | Path) -> Path:
    """``<stem>.json`` beside a depth PNG: holds ``{"depth_scale": metres per unit}``."""
    return Path(path).with_suffix(".json")


def _read_sidecar_scale(path: Path) -> float | None:
    """depth_scale from the sidecar; None when there is none (or a JSON without that key)."""
    side = sidecar_path(path)
    if not side.is_file():
        return None
    try:
        data = json.loads(side.read_text())
    except (OSError, ValueError) as exc:
        raise InputError(side, "depth_scale", f"unreadable depth sidecar ({exc})") from exc
    if not isinstance(data, dict) or "depth_scale" not in data:
        return None
    value = data["depth_scale"]
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not np.isfinite(value)
        or value <= 0
    ):
        raise InputError(
            side, "depth_scale", f"must be a positive number of metres per unit, got {value!r}"
        )
    return float(value)


def _read_png_uint16(path: Path) -> np.ndarray:
    from PIL import Image

    try:
        with Image.open(path) as im:
            mode = im.mode
            arr = np.array(im)
    except (OSError, ValueError) as exc:
        raise InputError(path, None, f"cannot read image ({exc})") from exc
    if mode in ("I;16", "I;16B", "I;16L"):
        return arr.astype(np.uint16, copy=False)
    if mode == "I" and arr.ndim == 2 and arr.min(initial=0) >= 0 and arr.max(initial=0) <= 65535:
        return arr.astype(np.uint16)  # some Pillow versions open 16-bit PNGs as 32-bit 'I'
    raise InputError(
        path, "mode", f"expected a single-channel 16-bit depth image, got Pillow mode {mode!r}"
    )


def _read_tiff(path: Path) -> np.ndarray:
    import tifffile

    try:
        arr = tifffile.imread(path)
    except (OSError, ValueError, tifffile.TiffFileError) as exc:
        raise InputError(path, None, f"cannot read TIFF ({exc})") from exc
    if arr.ndim == 3 and arr.shape[-1] == 1:
        arr = arr[..., 0]
    return arr


def _read_npy(path: Path) -> np.ndarray:
    try:
        arr = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise InputError(path, None, f"cannot read .npy ({exc})") from exc
    if not (np.issubdtype(arr.dtype, np.floating) or arr.dtype == np.uint16):
        raise InputError(path, "dtype", f"expected float depth or uint16 units, got {arr.dtype}")
    return arr


FLOAT_METRES_MAX_MEDIAN_M = 25.0
"""The farthest median return of a float frame in metres: the far end of the range the sensors'
unit check takes (``sensors.real_frame.PLAUSIBLE_MEDIAN_M``). In millimetres a frame's median
is beyond 50 (5 cm, nearer than any depth camera sees), so the two units never meet."""


MM_NEAREST_MEDIAN_M = 0.25
"""Nearer than this as mm, a median is likelier cm (0.4-2.5 m in cm reads 4-25 cm as mm)."""


def _float_to_metres(path: Path, raw: np.ndarray, depth_scale: float | None) -> np.ndarray:
    """Float depth in metres: metres as they are, another unit x ``depth_scale`` (the argument,
    else the sidecar's). A sidecar beside a frame already in metres is not read: it may be the
    one of a PNG of the same name."""
    valid = raw[np.isfinite(raw) & (raw > 0)]
    median = float(np.median(valid[:: max(1, valid.size // 20000)])) if valid.size else 0.0
    if median <= FLOAT_METRES_MAX_MEDIAN_M:
        if depth_scale is not None and depth_scale != 1:
            raise InputError(
                path,
                "depth_scale",
                f"float depth already in metres (median return {median:.4g} m): depth_scale "
                f"{depth_scale:g} would put it at {median * depth_scale:.4g} m; drop --depth-scale",
            )
        return raw.astype(np.float32)
    scale = depth_scale if depth_scale is not None else _read_sidecar_scale(path)
    if scale is None:
        cm = median * 0.001 < MM_NEAREST_MEDIAN_M
        unit, guess = ("centimetres", 0.01) if cm else ("millimetres", 0.001)
        raise InputError(
            path,
            "depth_scale",
            f"float depth whose median return is {median:.4g}: that looks like {unit}, not "
            f"metres (no depth camera's median lies beyond {FLOAT_METRES_MAX_MEDIAN_M:g} m; in "
            f"millimetres it is {median * 0.001:.3g} m, in centimetres {median * 0.01:.3g} m); "
            f"pass --depth-scale {guess:g} (metres per unit) or write "
            f'{sidecar_path(path).name} with {{"depth_scale": {guess:g}}} beside it, or convert '
            "the frames to metres",
        )
    return (raw.astype(np.float64) * scale).astype(np.float32)


def _units_to_metres(
    path: Path, raw: np.ndarray, encoding: str, depth_scale: float | None, guessed: bool
) -> np.ndarray:
    if raw.dtype != np.uint16:
        raise InputError(path, "dtype", f"expected uint16 (or float) depth, got {raw.dtype}")
    if encoding == "sun":
        raw = (raw >> 3) | (raw << 13)  # uint16 arithmetic: a 16-bit rotation right by 3
        scale = DEFAULT_DEPTH_SCALE
    elif encoding == "tum":
        scale = TUM_DEPTH_SCALE
    elif depth_scale is not None:
        scale = depth_scale
        mm_by_default = scale == DEFAULT_DEPTH_SCALE and not sidecar_path(path).is_file()
        if guessed and encoding == "png" and mm_by_default:  # a camera file's default unit
            _refuse_other_png_formats(path, raw)
    else:
        sidecar = _read_sidecar_scale(path) if encoding in ("png", "tiff", "npy") else None
        if sidecar is None and encoding == "npy":
            # PNGs default to millimetres as depth PNGs customarily are (BOP, TUM's tools,
            # Open3D); a .npy of integers is a dump of the sensor's own unit, which varies
            # (D400: 1 mm, D405: 0.1 mm, L515: 0.25 mm) and would read 4-10x off, plausibly
            raise InputError(
                path,
                "depth_scale",
                "a uint16 .npy does not say its unit: pass --depth-scale (metres per unit, "
                f'0.001 for millimetres) or write {sidecar_path(path).name} with {{"depth_scale": '
                "...}} beside it",
            )
        if sidecar is None and guessed:
            _refuse_other_png_formats(path, raw)
        scale = sidecar or DEFAULT_DEPTH_SCALE
    if encoding != "sun":  # SUN's bits are rotated: its ceiling is another depth
        raw = _drop_saturated(path, raw, scale)
    return (raw.astype(np.float64) * scale).astype(np.float32)


SATURATED = np.iinfo(np.uint16).max
"""The 16-bit ceiling: no sensor's measurement (65.5 m in millimetres; in a finer unit, a depth
beyond what it can hold, clipped)."""


def _drop_saturated(path: Path, raw: np.ndarray, scale: float) -> np.ndarray:
    """Pixels at the 16-bit ceiling read as no return, said when they are more than a few."""
    saturated = raw == SATURATED
    n = int(saturated.sum())
    if n > 0.001 * raw.size:
        finer = " (a finer unit than millimetres?)" if scale >= DEFAULT_DEPTH_SCALE else ""
        warnings.warn(
            f"{path}: {n} pixels ({100 * n / raw.size:.1f} %) at {SATURATED}, the 16-bit ceiling "
            f"({SATURATED * scale:.3g} m at {scale:g} m per unit: clipped{finer}), read as no "
            "return",
            stacklevel=5,
        )
    return np.where(saturated, 0, raw).astype(np.uint16) if n else raw


# Two PNG formats whose unit the image does not say but whose values do: TUM RGB-D stores the
# Kinect's millimetres times 5 (every value a multiple of 5), SUN RGB-D rotates millimetres left
# by 3 bits (multiples of 8 below 8.192 m). A sensor's millimetres hit either about 1 time in 5
# or 8 (0.19-0.23 and 0.12-0.16 on every real millimetre PNG here). Read as millimetres, both
# fall at plausible ranges (TUM 5x, SUN 8x too far), so only the values can tell.
_OTHER_PNG_FORMATS = ((5, 0.99, "tum", "TUM RGB-D's depth x 5000"), (8, 0.9, "sun", "SUN RGB-D's"))


def _refuse_other_png_formats(path: Path, raw: np.ndarray) -> None:
    values = raw[raw > 0]
    if values.size < 1000 or np.unique(values[:20000]).size < 32:  # too few to tell (or synthetic)
        return
    for step, share, encoding, what in _OTHER_PNG_FORMATS:
        multiples = np.mean(values % step == 0)
        if multiples >= share and (scene := _bop_scene_of(path)) is not None:
            raise InputError(  # a BOP folder says its unit in depth_scale, never by encoding
                path,
                "encoding",
                f"{100 * multiples:.0f} % of the depth values are multiples of {step}: a finer "
                "unit than millimetres (0.1 mm: x10)? give it as depth_scale (mm per unit) in "
                f"{scene / 'scene_camera.json'} or in BOP's camera.json",
            )
        if multiples >= share:
            raise InputError(
                path,
                "encoding",
                f"{100 * multiples:.0f} % of the depth values are multiples of {step}: {what} "
                "format, not millimetres, or a finer unit (0.1 mm: x10)? "
                f"pass --encoding {encoding}, or its unit (--depth-scale, or a "
                f'{sidecar_path(path).name} with {{"depth_scale": ...}}), or --encoding png to '
                "read it as millimetres",
            )


def _bop_scene_of(path: Path) -> Path | None:
    """The BOP scene folder of a depth frame (``scene/depth/000000.png`` beside
    ``scene/scene_camera.json``), or None."""
    for folder in (path.parent.parent, path.parent):
        if (folder / "scene_camera.json").is_file():
            return folder
    return None


def _check_scale(path: Path, depth_scale: float | None, encoding: str) -> None:
    if depth_scale is None:
        return
    if encoding in FIXED_UNIT_ENCODINGS:
        raise InputError(
            path, "depth_scale", f"does not apply to the {encoding} encoding (its unit is fixed)"
        )
    if not np.isfinite(depth_scale) or depth_scale <= 0:
        raise InputError(
            path, "depth_scale", f"must be a positive number of metres per unit, got {depth_scale}"
        )


def read_depth(
    path: str | Path, *, encoding: str = "auto", depth_scale: float | None = None
) -> np.ndarray:
    """(H, W) float32 depth in metres, 0 = no return, from a file in ``encoding`` (see the module
    doc). ``depth_scale`` [m per unit], the caller's explicit unit, applies to integer png, tiff
    and npy images, and to float ones in another unit than metres (millimetres: 0.001).
    Non-finite or negative values in the file are read as 0 (no return)."""
    path = Path(path)
    if encoding not in ENCODINGS:
        raise InputError(
            path, "encoding", f"unknown depth encoding {encoding!r}; expected one of {ENCODINGS}"
        )
    if not path.is_file():
        raise InputError(path, None, "depth image not found")
    guessed = encoding == "auto"
    if guessed:
        encoding = ENCODING_BY_SUFFIX.get(path.suffix.lower(), "")
        if not encoding:
            raise InputError(
                path,
                "encoding",
                f"cannot tell the depth encoding from the suffix {path.suffix!r}: "
                f"pass one of {ENCODINGS[1:]}",
            )
    _check_scale(path, depth_scale, encoding)

    if encoding == "pgm":
        depth = read_nyu_pgm(path)
    else:
        readers = {"npy": _read_npy, "tiff": _read_tiff}
        raw = readers.get(encoding, _read_png_uint16)(path)
        if np.issubdtype(raw.dtype, np.floating):
            depth = _float_to_metres(path, raw, depth_scale)
        else:
            depth = _units_to_metres(path, raw, encoding, depth_scale, guessed)

    if depth.ndim != 2:
        raise InputError(
            path, "shape", f"expected a single-channel (H, W) depth image, got shape {depth.shape}"
        )
    if not np.all(np.isfinite(depth)) or depth.min(initial=0) < 0:
        depth = np.where(np.isfinite(depth) & (depth > 0), depth, 0).astype(np.float32)
    return depth


def _check_sidecar_writable(path: Path) -> None:
    """Refuse to replace a ``<stem>.json`` that is not a depth sidecar (say, a camera.json)."""
    side = sidecar_path(path)
    if not side.exists():
        return
    try:
        data = json.loads(side.read_text())
    except (OSError, ValueError):
        data = None
    if not (isinstance(data, dict) and set(data) == {"depth_scale"}):
        raise InputError(
            side, "depth_scale", "exists and is not a depth sidecar: refusing to overwrite it"
        )


def _validate(path: Path, depth_m: np.ndarray) -> np.ndarray:
    depth = np.asarray(depth_m)
    if depth.ndim != 2 or depth.size == 0:
        raise InputError(
            path, "depth_m", f"expected a non-empty (H, W) array, got shape {depth.shape}"
        )
    if not np.issubdtype(depth.dtype, np.number) or np.iscomplexobj(depth):
        raise InputError(path, "depth_m", f"expected real numbers, got dtype {depth.dtype}")
    depth = depth.astype(np.float64)
    if not np.all(np.isfinite(depth)):
        raise InputError(
            path,
            "depth_m",
            f"{int(np.sum(~np.isfinite(depth)))} non-finite values (use 0 for no return)",
        )
    if depth.min() < 0:
        raise InputError(
            path, "depth_m", f"negative depth {depth.min():.4g} m (use 0 for no return)"
        )
    return depth


def write_depth(
    path: str | Path, depth_m: np.ndarray, *, depth_scale: float = DEFAULT_DEPTH_SCALE
) -> None:
    """Write (H, W) depth in metres (0 = no return), atomically, by suffix:

    - ``.png``: uint16 = round(depth / depth_scale), with ``{"depth_scale": ...}`` in the
      sidecar ``<stem>.json``; depths beyond 65535 units are an error;
    - ``.tif`` / ``.tiff``: float32 metres (lossless; ``depth_scale`` unused);
    - ``.npy``: float32 metres (``depth_scale`` unused).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".png", ".tif", ".tiff", ".npy"):
        raise InputError(
            path, "suffix", f"cannot write depth as {suffix!r}: use .png, .tif, .tiff or .npy"
        )
    depth = _validate(path, depth_m)
    if suffix == ".png":
        if not np.isfinite(depth_scale) or depth_scale <= 0:
            raise InputError(
                path,
                "depth_scale",
                f"must be a positive number of metres per unit, got {depth_scale}",
            )
        units = np.rint(depth / depth_scale)
        if units.max() > np.iinfo(np.uint16).max:
            raise InputError(
                path,
                "depth_m",
                f"depth {depth.max():.4g} m does not fit uint16 at depth_scale {depth_scale} "
                f"(max {65535 * depth_scale:.4g} m): use a larger depth_scale, .tiff or .npy",
            )
        _check_sidecar_writable(path)
        from PIL import Image

        image = Image.fromarray(units.astype(np.uint16))  # mode 'I;16'
        with atomic_path(path) as tmp:
            image.save(tmp, format="PNG")
            write_text_atomic(sidecar_path(path), json.dumps({"depth_scale": depth_scale}) + "\n")
    elif suffix == ".npy":
        with atomic_path(path) as tmp, tmp.open("wb") as f:
            np.save(f, depth.astype(np.float32))
    else:
        import tifffile

        with atomic_path(path) as tmp:
            tifffile.imwrite(tmp, depth.astype(np.float32))
