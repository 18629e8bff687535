"""Sensor presets: a camera (intrinsics) plus a noise profile, shipped as YAML files in
``sim2real/sensors/profiles/`` with their provenance in comments and in ``noise.source``.

A user's own sensor file has the same two sections, ``camera:`` and ``noise:``, and loads
with :func:`load_sensor`.
"""

from __future__ import annotations

import difflib
import functools
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from pydantic import ValidationError

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.errors import InputError
from sim2real.core.strict import validation_error
from sim2real.core.yaml_io import read_yaml_mapping
from sim2real.sensors.profile import NoiseProfile, profile_from_dict

_PROFILES = "profiles"


@dataclass(frozen=True)
class SensorPreset:
    """A depth sensor: its camera and its noise profile."""

    name: str
    camera: CameraIntrinsics
    profile: NoiseProfile


def load_sensor(path: str | Path, name: str | None = None) -> SensorPreset:
    """Read a sensor YAML with ``camera:`` (CameraIntrinsics fields) and ``noise:``
    (NoiseProfile fields) sections. Errors name the file and the dotted field, e.g.
    ``camera.fx`` or ``noise.axial.a_m``. ``name`` defaults to the profile's name."""
    data = read_yaml_mapping(path)
    unknown = sorted(set(data) - {"camera", "noise"})
    if unknown:
        raise InputError(path, unknown[0], "unknown section; expected 'camera' and 'noise'")
    for section in ("camera", "noise"):
        if section not in data:
            raise InputError(path, section, "missing section")
    if not isinstance(data["camera"], dict):
        raise InputError(path, "camera", "expected a mapping of camera intrinsics")
    try:
        camera = CameraIntrinsics.model_validate(data["camera"])
    except ValidationError as exc:
        raise validation_error(exc, path, "camera", CameraIntrinsics) from None
    profile = profile_from_dict(data["noise"], path, "noise")
    return SensorPreset(name=name or profile.name, camera=camera, profile=profile)


def preset_names() -> list[str]:
    """Names of the built-in presets, sorted."""
    return sorted(_preset_files())


@functools.cache
def _preset_files() -> dict[str, Path]:
    folder = resources.files("sim2real.sensors").joinpath(_PROFILES)
    return {
        Path(entry.name).stem: Path(str(entry))
        for entry in folder.iterdir()
        if entry.name.endswith(".yaml")
    }


@functools.cache
def _load_preset(name: str) -> SensorPreset:
    return load_sensor(_preset_files()[name], name=name)


def get_preset(name: str) -> SensorPreset:
    """The built-in preset ``name`` (a fresh copy: editing it does not change the preset).
    An unknown name raises InputError(None, 'sensor', ...) listing the choices."""
    files = _preset_files()
    if name not in files:
        close = difflib.get_close_matches(name, list(files), n=3, cutoff=0.5)
        hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
        raise InputError(
            None,
            "sensor",
            f"unknown preset {name!r}{hint}; choose one of: {', '.join(sorted(files))}",
        )
    preset = _load_preset(name)
    return SensorPreset(preset.name, preset.camera, preset.profile.model_copy(deep=True))


def resolve_profile(value: str) -> tuple[str, NoiseProfile]:
    """(name, profile) of a preset name or a profile YAML file (a sensor file's ``noise:``
    section too); the name of a file is its stem."""
    from sim2real.sensors.profile import load_profile

    path = Path(value)
    if path.suffix.lower() in (".yaml", ".yml") or path.is_file():
        return path.stem, load_profile(path)
    return value, get_preset(value).profile
