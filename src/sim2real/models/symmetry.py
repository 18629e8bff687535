"""Symmetries of a part: transforms S of the part frame that leave its shape unchanged, so
``T_cam_part`` and ``T_cam_part @ S`` look the same to any sensor.

Text forms (``--symmetry``):

- ``none``;
- ``axis:z``, ``axis:0,0,1`` (continuous: any rotation about that axis through the part's
  origin), ``axis:z@0,0,0.01`` (through a point, metres, part frame);
- ``discrete:z:4`` (n-fold: rotations by 360/n deg about the axis), ``discrete:x@0,0,0.01:2``;
- a JSON / YAML file with BOP's ``symmetries_discrete`` (16 numbers, row-major 4x4,
  translation in millimetres) and ``symmetries_continuous`` (``{axis, offset}``, offset in
  millimetres), either at the top level or as BOP's ``models_info.json`` keyed by object id
  (an object it lists without either key has no symmetry, as BOP writes it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from sim2real.core.errors import InputError
from sim2real.core.pose import check_rigid, make_pose

SymmetryKind = Literal["none", "continuous", "discrete"]
_NAMED_AXES = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}
_OPTION = "--symmetry"


def axis_rotation(axis: np.ndarray, angle_rad: float) -> np.ndarray:
    """(3, 3) rotation by ``angle_rad`` about the unit vector ``axis`` (Rodrigues)."""
    a = np.asarray(axis, dtype=np.float64)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + np.sin(angle_rad) * K + (1 - np.cos(angle_rad)) * (K @ K)


def rotation_about(axis: np.ndarray, point: np.ndarray, angle_rad: float) -> np.ndarray:
    """(4, 4) rotation by ``angle_rad`` about the line through ``point`` along ``axis``."""
    R = axis_rotation(axis, angle_rad)
    p = np.asarray(point, dtype=np.float64)
    return make_pose(R, p - R @ p)


@dataclass(frozen=True, eq=False)
class Symmetry:
    """A part's symmetry group, in the part frame (metres).

    ``continuous``: every rotation about ``axis`` through ``point``; ``discrete``: the listed
    transforms (identity not needed). A BOP file may give both: the group is then every
    ``D @ C`` with D discrete (or identity) and C continuous, kind ``continuous``."""

    kind: SymmetryKind = "none"
    axis: np.ndarray | None = None
    """(3,) unit vector, part frame (continuous only)."""
    point: np.ndarray | None = None
    """(3,) metres, part frame: a point on the axis (continuous only)."""
    discrete: list[np.ndarray] = field(default_factory=list)
    """(4, 4) rigid transforms of the part frame, translation in metres."""

    def discrete_with_identity(self) -> list[np.ndarray]:
        """The identity, then each discrete transform that is not the identity."""
        out = [np.eye(4)]
        for D in self.discrete:
            if not np.allclose(D, np.eye(4), atol=1e-9):
                out.append(np.asarray(D, dtype=np.float64))
        return out

    def continuous_transform(self, angle_rad: float) -> np.ndarray:
        """(4, 4) rotation of the continuous symmetry by ``angle_rad`` (identity if none)."""
        if self.kind != "continuous" or self.axis is None:
            return np.eye(4)
        point = self.point if self.point is not None else np.zeros(3)
        return rotation_about(self.axis, point, angle_rad)

    def transforms(self, n_continuous: int = 72) -> np.ndarray:
        """(K, 4, 4) float64: every symmetry transform, the identity first; a continuous
        symmetry is sampled at ``n_continuous`` angles (360 / n deg apart)."""
        if self.kind == "continuous":
            angles = 2 * np.pi * np.arange(n_continuous) / n_continuous
            C = [self.continuous_transform(a) for a in angles]
        else:
            C = [np.eye(4)]
        D = self.discrete_with_identity() if self.kind != "none" else [np.eye(4)]
        return np.stack([d @ c for d in D for c in C])

    def describe(self) -> str:
        if self.kind == "none":
            return "none"
        parts = []
        if self.kind == "continuous":
            p = self.point if self.point is not None else np.zeros(3)
            parts.append(
                f"continuous about ({', '.join(f'{v:.3g}' for v in self.axis)}) "
                f"through ({', '.join(f'{v:.3g}' for v in p)}) m"
            )
        if self.discrete:
            parts.append(f"{len(self.discrete_with_identity())} discrete transforms")
        return ", ".join(parts)


NO_SYMMETRY = Symmetry()


def _bad(message: str, source: str | Path | None = None, where: str = _OPTION) -> InputError:
    return InputError(source, where, message)


def _vector(text: str, what: str) -> np.ndarray:
    if text.lower() in _NAMED_AXES:
        return np.array(_NAMED_AXES[text.lower()])
    try:
        v = np.array([float(s) for s in text.split(",")])
    except ValueError:
        raise _bad(f"{what} {text!r} is not x, y, z or three numbers 'a,b,c'") from None
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise _bad(f"{what} {text!r} must be x, y, z or three numbers 'a,b,c'")
    return v


def _unit(v: np.ndarray, what: str, source: str | Path | None = None, where=_OPTION) -> np.ndarray:
    norm = float(np.linalg.norm(v))
    if not np.isfinite(norm) or norm < 1e-9:
        raise _bad(f"{what} must be a non-zero vector, got {v.tolist()}", source, where)
    return v / norm


def _axis_and_point(text: str) -> tuple[np.ndarray, np.ndarray]:
    axis_text, _, point_text = text.partition("@")
    axis = _unit(_vector(axis_text.strip(), "axis"), "axis")
    point = _vector(point_text.strip(), "point") if point_text else np.zeros(3)
    return axis, point


MAX_FOLD = 360
"""The finest discrete symmetry taken (1 deg): finer is a continuous one."""


def parse_symmetry(text: str | Path | None, *, obj_id: int | None = None) -> Symmetry:
    """A Symmetry from ``--symmetry`` text or a file (see the module doc); None or ``none`` is
    no symmetry. ``obj_id`` picks the entry of a BOP ``models_info.json``. Bad text raises
    ``InputError(None, '--symmetry', ...)``, a bad file ``InputError(file, field, ...)``."""
    if text is None:
        return NO_SYMMETRY
    s = str(text).strip()
    if s.lower() in ("", "none"):
        return NO_SYMMETRY
    path = Path(s)
    if path.suffix.lower() in (".json", ".yaml", ".yml"):
        if not path.is_file():
            raise InputError(path, _OPTION, "symmetry file not found")
        return load_symmetry_file(path, obj_id=obj_id)
    kind, _, rest = s.partition(":")
    kind = kind.strip().lower()
    if kind == "axis" and rest:
        axis, point = _axis_and_point(rest)
        return Symmetry("continuous", axis=axis, point=point)
    if kind == "discrete" and rest:
        axis_text, _, n_text = rest.rpartition(":")
        try:
            n = int(n_text)
        except ValueError:
            raise _bad(f"expected discrete:AXIS:N with an integer N >= 2, got {s!r}") from None
        if not axis_text or n < 2:
            raise _bad(f"expected discrete:AXIS:N with an integer N >= 2, got {s!r}")
        if n > MAX_FOLD:  # every pose error is taken over N transforms: 100000 ran for minutes
            raise _bad(f"{n}-fold is over {MAX_FOLD}: a part that fine is axis:AXIS (continuous)")
        axis, point = _axis_and_point(axis_text)
        rotations = [rotation_about(axis, point, 2 * np.pi * k / n) for k in range(1, n)]
        return Symmetry("discrete", discrete=rotations)
    raise _bad(
        f"unknown symmetry {s!r}: expected none, axis:AXIS[@x,y,z], discrete:AXIS[@x,y,z]:N "
        "(AXIS = x, y, z or a,b,c) or a BOP JSON/YAML file"
    )


def load_symmetry_file(path: str | Path, *, obj_id: int | None = None) -> Symmetry:
    """A Symmetry from BOP's ``symmetries_discrete`` / ``symmetries_continuous`` (mm)."""
    from sim2real.core.json_io import read_json
    from sim2real.core.yaml_io import read_yaml

    path = Path(path)
    if not path.is_file():
        raise InputError(path, None, "symmetry file not found")
    data = read_json(path) if path.suffix.lower() == ".json" else read_yaml(path, "symmetry file")
    if not isinstance(data, dict):
        raise InputError(path, None, "expected a mapping with symmetries_discrete/continuous")
    prefix = ""
    if data and all(str(k).isdigit() for k in data):  # BOP models_info.json: obj id -> info
        if obj_id is None and len(data) > 1:
            raise InputError(
                path, "obj_id", f"{len(data)} objects in the file: pick one (--obj-id)"
            )
        key = str(obj_id) if obj_id is not None else next(iter(data))
        entry = data.get(key, data.get(int(key)) if key.isdigit() else None)
        if not isinstance(entry, dict):
            raise InputError(path, key, f"no object {key} in the file")
        data, prefix = entry, f"{key}."
    known = {"symmetries_discrete", "symmetries_continuous"}
    if not known & set(data):
        if prefix or "diameter" in data:  # BOP's models_info omits both for asymmetric objects
            return NO_SYMMETRY
        raise InputError(path, None, "no symmetries_discrete or symmetries_continuous entry")
    discrete = []
    for i, values in enumerate(data.get("symmetries_discrete") or []):
        where = f"{prefix}symmetries_discrete[{i}]"
        try:
            T = np.asarray(values, dtype=np.float64).reshape(4, 4)
        except (TypeError, ValueError) as exc:
            raise InputError(path, where, "expected 16 numbers (row-major 4x4)") from exc
        T = check_rigid(T, path, where)
        T[:3, 3] /= 1000.0
        discrete.append(T)
    continuous = data.get("symmetries_continuous") or []
    if len(continuous) > 1:
        raise InputError(
            path, f"{prefix}symmetries_continuous", "more than one continuous axis (a sphere?)"
        )
    if continuous:
        where = f"{prefix}symmetries_continuous[0]"
        entry = continuous[0]
        try:
            axis = np.asarray(entry["axis"], dtype=np.float64).reshape(3)
            offset = np.asarray(entry.get("offset", [0, 0, 0]), dtype=np.float64).reshape(3)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InputError(
                path, where, "expected {axis: 3 numbers, offset: 3 numbers (mm)}"
            ) from exc
        if not np.all(np.isfinite(offset)):
            raise InputError(path, f"{where}.offset", "non-finite values")
        axis = _unit(axis, "axis", path, f"{where}.axis")
        return Symmetry("continuous", axis=axis, point=offset / 1000.0, discrete=discrete)
    return Symmetry("discrete", discrete=discrete) if discrete else NO_SYMMETRY
