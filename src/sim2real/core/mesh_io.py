"""Triangle meshes from OBJ, STL, PLY (and anything trimesh reads), in metres."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from sim2real.core.errors import InputError
from sim2real.core.pointcloud_io import require_ply_magic

MeshUnit = Literal["auto", "m", "cm", "mm", "inch"]
UNIT_TO_M = {"m": 1.0, "cm": 0.01, "mm": 0.001, "inch": 0.0254}
# A part tracked by a depth camera is between a few millimetres and a few metres across.
LARGEST_PLAUSIBLE_M = 5.0
SMALLEST_PLAUSIBLE_M = 0.002


class UnitWarning(UserWarning):
    """The mesh's size looks implausible for the unit it is read in."""


@dataclass(frozen=True)
class Mesh:
    """A triangle mesh in metres, in its own (part) frame."""

    vertices: np.ndarray
    """(N, 3) float64 metres."""
    faces: np.ndarray
    """(M, 3) int32 vertex indices."""
    name: str = "mesh"
    path: str | None = None
    """The file it was read from, if any."""

    @property
    def extent_m(self) -> np.ndarray:
        return self.vertices.max(axis=0) - self.vertices.min(axis=0)

    @property
    def centre_m(self) -> np.ndarray:
        """(3,) bounding-box centre [m], part frame."""
        return (self.vertices.max(axis=0) + self.vertices.min(axis=0)) / 2

    @property
    def diameter_m(self) -> float:
        """Bounding-box diagonal [m]: an upper bound of the true diameter."""
        return float(np.linalg.norm(self.extent_m))

    def transformed(self, T: np.ndarray) -> np.ndarray:
        """(N, 3) float64 vertices mapped by the 4×4 transform ``T``."""
        return self.vertices @ T[:3, :3].T + T[:3, 3]


def validate_mesh(
    vertices: np.ndarray, faces: np.ndarray, source: str | Path, name: str = "mesh"
) -> Mesh:
    """Check shapes, finiteness and index range; return a ``Mesh``."""
    vertices = np.asarray(vertices, dtype=np.float64)
    faces = np.asarray(faces)
    if vertices.ndim != 2 or vertices.shape[1] != 3 or len(vertices) == 0:
        raise InputError(source, "vertices", f"mesh has no vertices (shape {vertices.shape})")
    if faces.ndim != 2 or faces.shape[1] != 3 or len(faces) == 0:
        raise InputError(source, "faces", "mesh has no triangles (empty mesh or a point cloud)")
    if not np.all(np.isfinite(vertices)):
        bad = int((~np.isfinite(vertices)).any(axis=1).sum())
        raise InputError(source, "vertices", f"{bad} vertices have non-finite coordinates")
    if faces.min() < 0 or faces.max() >= len(vertices):
        raise InputError(source, "faces", f"face indices outside 0..{len(vertices) - 1}")
    v0, v1, v2 = (vertices[faces[:, k]] for k in range(3))
    if not np.cross(v1 - v0, v2 - v0).any():  # nothing a camera or a ray could hit
        raise InputError(source, "faces", "every triangle has zero area (a degenerate mesh)")
    return Mesh(vertices=vertices, faces=faces.astype(np.int32), name=name)


def _check_unit(mesh: Mesh, unit: MeshUnit, source: Path) -> Mesh:
    largest = float(mesh.extent_m.max())
    if unit == "auto":
        if largest > LARGEST_PLAUSIBLE_M:
            warnings.warn(
                f"{source}: bounding box is {largest:.3g} units across, implausible in metres; "
                "reading it in millimetres (pass --mesh-unit m to keep metres)",
                UnitWarning,
                stacklevel=3,
            )
            return Mesh(mesh.vertices * 0.001, mesh.faces, mesh.name, str(source))
        unit = "m"
    scaled = Mesh(mesh.vertices * UNIT_TO_M[unit], mesh.faces, mesh.name, str(source))
    size = largest * UNIT_TO_M[unit]
    if size > LARGEST_PLAUSIBLE_M or size < SMALLEST_PLAUSIBLE_M:
        warnings.warn(
            f"{source}: bounding box is {size:.3g} m across in unit '{unit}': check --mesh-unit",
            UnitWarning,
            stacklevel=3,
        )
    return scaled


def load_mesh(path: str | Path, unit: MeshUnit = "auto") -> Mesh:
    """Read a triangle mesh file (OBJ, STL, PLY, OFF, GLB...) with trimesh and convert it to
    metres. A prepared model folder is read by ``sim2real.models.part.load_part``.

    ``unit='auto'`` reads metres unless the bounding box is larger than 5 units, in which case
    it reads millimetres and warns (``UnitWarning``). Raises ``InputError`` for a missing,
    unreadable or empty file and for non-finite vertices.
    """
    path = Path(path)
    if unit not in ("auto", *UNIT_TO_M):
        raise InputError(
            path, "mesh_unit", f"unknown unit '{unit}'; choose auto, m, cm, mm or inch"
        )
    if path.is_dir():
        raise InputError(path, None, "is a folder, not a mesh file")
    import trimesh

    if not path.is_file():
        raise InputError(path, None, "mesh file not found")
    require_ply_magic(path)
    try:
        loaded = trimesh.load(path, process=False)
        if isinstance(loaded, trimesh.PointCloud):  # vertices, no faces: say so
            raise InputError(
                path,
                "faces",
                f"{len(loaded.vertices)} vertices but no triangles: a point cloud, not a mesh "
                "(a scan is prepared by `sim2real model prepare`)",
            )
        if not isinstance(loaded, trimesh.Trimesh):
            loaded = trimesh.load(path, force="mesh", process=False)
    except InputError:
        raise
    except Exception as exc:  # trimesh raises many types for corrupt files
        raise InputError(path, None, f"cannot read mesh ({type(exc).__name__}: {exc})") from exc
    vertices = np.asarray(getattr(loaded, "vertices", np.empty((0, 3))))
    faces = np.asarray(getattr(loaded, "faces", np.empty((0, 3))))
    mesh = validate_mesh(vertices, faces.reshape(-1, 3) if faces.size else faces, path, path.stem)
    return _check_unit(mesh, unit, path)
