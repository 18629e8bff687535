"""Camera intrinsics from a Stereolabs ZED factory calibration, ``SN<serial>.conf`` (INI; read by
``sim2real.core.camera_io.load_camera``).

The file holds each lens at each capture resolution (``[LEFT_CAM_HD]``, ``[RIGHT_CAM_2K]``...)
and no image size: the frames' size picks the section. The ZED SDK aligns depth to the left
camera, so the ``LEFT_CAM_<resolution>`` section is read. The values are the raw lens's; the
SDK's depth is in the rectified left image, whose intrinsics (the SDK's
``calibration_parameters.left_cam``) differ slightly: export those for exact ones.
The file says no depth unit (the SDK's is the user's choice): ``depth_scale`` is left unset.
"""

from __future__ import annotations

import configparser
import re
from pathlib import Path
from typing import Any

from sim2real.core.camera_yaml import warn_ignored_distortion
from sim2real.core.errors import InputError

# (width, height) of each section suffix: ZED, ZED Mini, ZED 2 / 2i (2K FHD HD VGA), ZED X and
# ZED X One (FHD1200 SVGA, and the 4K model's 4k QHDPLUS), as the ZED SDK names its resolutions
ZED_RESOLUTIONS: dict[str, tuple[int, int]] = {
    "2K": (2208, 1242),
    "FHD": (1920, 1080),
    "HD": (1280, 720),
    "VGA": (672, 376),
    "FHD1200": (1920, 1200),
    "SVGA": (960, 600),
    "4K": (3840, 2160),
    "QHDPLUS": (3200, 1800),
}

_SECTION = re.compile(r"LEFT_CAM_(\w+)")
_LENS_DISTORTION = ("k1", "k2", "p1", "p2", "k3")
_FULL_DISTORTION = ("k1", "k2", "p1", "p2", "k3", "k4", "k5", "k6")  # [LEFT_DISTO], newer files


def is_zed_conf(text: str) -> bool:
    """True when the text opens with an INI section header (``[LEFT_CAM_2K]``), which no JSON
    document can."""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return re.fullmatch(r"\[[A-Za-z_][\w.]*\]", first) is not None


def _parse(text: str, path: Path) -> configparser.ConfigParser:
    ini = configparser.ConfigParser(strict=False, interpolation=None)
    try:
        ini.read_string(text, source=str(path))
    except configparser.Error as exc:
        raise InputError(path, None, f"not a valid ZED calibration (INI) file ({exc})") from None
    return ini


def _left_sections(ini: configparser.ConfigParser) -> dict[str, tuple[int, int] | None]:
    """Each ``LEFT_CAM_<res>`` section with its image size (None for a resolution not known)."""
    found = {}
    for name in ini.sections():
        if (m := _SECTION.fullmatch(name)) is not None:
            found[name] = ZED_RESOLUTIONS.get(m.group(1).upper())
    return found


def _describe(sections: dict[str, tuple[int, int] | None]) -> str:
    return ", ".join(
        f"{n} {s[0]}x{s[1]}" if s else f"{n} (size unknown)" for n, s in sections.items()
    )


def _pick_section(
    sections: dict[str, tuple[int, int] | None], path: Path, width: int | None, height: int | None
) -> str:
    if not sections:
        raise InputError(path, None, "ZED calibration without a [LEFT_CAM_<resolution>] section")
    sized = {n: s for n, s in sections.items() if s is not None}
    if width is None and height is None:
        if len(sections) == 1 and sized:
            return next(iter(sized))
        raise InputError(
            path,
            "width",
            f"a ZED calibration holds one camera per resolution ({_describe(sections)}): pass the "
            "frames' image size (width, height) to pick one, or give that section's values as a "
            "camera.json (fx, fy, cx, cy, width, height)",
        )
    matches = [n for n, (w, h) in sized.items()
               if width in (None, w) and height in (None, h)]  # fmt: skip
    if len(matches) != 1:
        asked = f"{width if width is not None else '?'}x{height if height is not None else '?'}"
        what = "no section" if not matches else "several sections"
        raise InputError(
            path, "width", f"{what} for {asked} px frames; the file has {_describe(sections)}"
        )
    return matches[0]


def _number(section: configparser.SectionProxy, key: str, path: Path) -> float:
    if key not in section:
        raise InputError(path, f"{section.name}.{key}", "missing field")
    try:
        return float(section[key])
    except ValueError:
        raise InputError(path, f"{section.name}.{key}", f"not a number: {section[key]!r}") from None


def from_zed_conf(
    text: str, path: Path, width: int | None, height: int | None
) -> tuple[dict[str, Any], dict[str, str]]:
    """(values, our field -> the file's name for it) of the left camera at the frames' size."""
    ini = _parse(text, path)
    name = _pick_section(_left_sections(ini), path, width, height)
    section = ini[name]
    values: dict[str, Any] = {k: _number(section, k, path) for k in ("fx", "fy", "cx", "cy")}
    size = ZED_RESOLUTIONS[_SECTION.fullmatch(name).group(1).upper()]
    values["width"], values["height"] = size
    coeffs = [_number(section, k, path) for k in _LENS_DISTORTION if k in section]
    warn_ignored_distortion(path, f"{name} k1 k2 p1 p2 k3 (the raw lens's)", coeffs)
    if ini.has_section("LEFT_DISTO"):
        disto = ini["LEFT_DISTO"]
        coeffs = [_number(disto, k, path) for k in _FULL_DISTORTION if k in disto]
        warn_ignored_distortion(path, "LEFT_DISTO (the raw lens's)", coeffs)
    return values, {k: f"{name}.{k}" for k in ("fx", "fy", "cx", "cy")}
