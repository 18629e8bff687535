"""Read any supported input into triangles in metres: CAD (STEP/IGES, through Open CASCADE),
meshes (STL, OBJ, PLY, OFF, glTF/GLB, through trimesh) and scans (PLY/PCD/XYZ point clouds,
reconstructed with Open3D). Units come from the file when it declares them (CAD, glTF), from
``--unit``, or from the size; a size that fits two units equally well is an error."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sim2real.core.errors import InputError
from sim2real.core.mesh_io import LARGEST_PLAUSIBLE_M, SMALLEST_PLAUSIBLE_M, UNIT_TO_M
from sim2real.core.pointcloud_io import require_ply_magic
from sim2real.models.cad_import import CAD_SUFFIXES, import_cad
from sim2real.models.scan_reconstruct import ScanMesh, reconstruct_scan

MESH_SUFFIXES = (".stl", ".obj", ".ply", ".off", ".glb", ".gltf")
SCAN_SUFFIXES = (".pcd", ".xyz", ".xyzn", ".xyzrgb", ".pts", ".ply")
SUPPORTED = tuple(sorted(set(CAD_SUFFIXES + MESH_SUFFIXES + SCAN_SUFFIXES)))


@dataclass
class RawInput:
    """The input as triangles in metres (input frame), before any cleaning."""

    vertices: np.ndarray
    faces: np.ndarray
    kind: str
    """cad, mesh or scan"""
    format: str
    unit: str
    unit_from: str
    metres_per_unit: float
    points: np.ndarray | None = None
    """(N, 3) metres: the scan's points (scans only)."""
    scan: ScanMesh | None = None
    notes: list[str] = field(default_factory=list)


def resolve_unit(largest: float, requested: str, source: Path) -> tuple[str, str, list[str]]:
    """(unit, how it was chosen, notes) for an input ``largest`` units across."""
    if requested != "auto":
        size = largest * UNIT_TO_M[requested]
        notes = []
        if not SMALLEST_PLAUSIBLE_M <= size <= LARGEST_PLAUSIBLE_M:
            notes.append(f"the part is {size:.3g} m across in --unit {requested}: check the unit")
        return requested, "user", notes
    in_m = SMALLEST_PLAUSIBLE_M <= largest <= LARGEST_PLAUSIBLE_M
    in_mm = SMALLEST_PLAUSIBLE_M <= largest * 1e-3 <= LARGEST_PLAUSIBLE_M
    if in_m and in_mm:
        raise InputError(
            source,
            "--unit",
            f"ambiguous units: the part is {largest:.3g} units across, plausible both in metres "
            f"and in millimetres; pass --unit m or --unit mm",
        )
    if in_m:
        return "m", "size", [f"unit: metres, from the size ({largest:.3g} units across)"]
    if in_mm:
        return (
            "mm",
            "size",
            [
                f"unit: millimetres, from the size ({largest:.3g} units across; a file in "
                "centimetres or inches needs --unit cm or --unit inch)"
            ],
        )
    raise InputError(
        source,
        "--unit",
        f"the part is {largest:.3g} units across: implausible in metres and in millimetres; "
        "pass --unit",
    )


def _check_file(path: Path) -> None:
    if not path.exists():
        raise InputError(path, None, "input file not found")
    if path.is_dir():
        raise InputError(path, None, "is a folder, expected a CAD, mesh or point-cloud file")
    if path.stat().st_size == 0:
        raise InputError(path, None, "the file is empty")
    if path.suffix.lower() not in SUPPORTED:
        raise InputError(
            path, "suffix", f"unsupported format {path.suffix!r}; expected one of {SUPPORTED}"
        )
    require_ply_magic(path)


def _read_trimesh(path: Path):
    import trimesh

    try:
        return trimesh.load(path, force="mesh", process=False)
    except Exception as exc:  # trimesh raises many types for corrupt files
        raise InputError(path, None, f"cannot read it ({type(exc).__name__}: {exc})") from exc


def load_input(
    path: str | Path,
    unit: str = "auto",
    *,
    chordal_tolerance_mm: float = 0.05,
    angular_tolerance_deg: float = 20.0,
    scan_method: str = "poisson",
    density_quantile: float = 0.02,
) -> RawInput:
    """Read ``path`` (see the module doc) into a ``RawInput`` in metres."""
    path = Path(path)
    _check_file(path)
    if unit not in ("auto", *UNIT_TO_M):
        raise InputError(None, "--unit", f"unknown unit {unit!r}; choose auto, m, cm, mm or inch")
    suffix = path.suffix.lower()
    fmt = suffix.lstrip(".")
    if suffix in CAD_SUFFIXES:
        cad = import_cad(path, chordal_tolerance_mm, angular_tolerance_deg)
        declared = cad.declared_unit or "mm"
        scale = cad.metres_per_unit or 1e-3
        notes = list(cad.notes)
        notes.append(
            f"{cad.solids} solid(s), {cad.surfaces} faces, tessellated by Open CASCADE within "
            f"{chordal_tolerance_mm:g} mm (chordal) and {angular_tolerance_deg:g} deg"
        )
        vertices = cad.vertices
        if unit != "auto" and unit != declared:
            if declared in UNIT_TO_M and UNIT_TO_M[declared] == UNIT_TO_M[unit]:
                pass
            else:
                factor = UNIT_TO_M[unit] / scale
                vertices = vertices * factor
                notes.append(
                    f"--unit {unit} overrides the unit the file declares ({declared}): "
                    f"coordinates scaled by {factor:g}"
                )
                return RawInput(
                    vertices, cad.faces, "cad", fmt, unit, "user", UNIT_TO_M[unit], notes=notes
                )
        how = "file" if cad.declared_unit else "format"
        return RawInput(vertices, cad.faces, "cad", fmt, declared, how, scale, notes=notes)

    is_scan = suffix in SCAN_SUFFIXES and suffix != ".ply"
    loaded = None
    if suffix == ".ply":
        loaded = _read_trimesh(path)
        n_faces = len(getattr(loaded, "faces", []))
        is_scan = n_faces == 0
    if is_scan:
        from sim2real.core.pointcloud_io import read_point_cloud

        points, normals = read_point_cloud(path)
        largest = float(np.max(points.max(axis=0) - points.min(axis=0)))
        chosen, how, notes = resolve_unit(largest, unit, path)
        scale = UNIT_TO_M[chosen]
        points = points * scale
        scan = reconstruct_scan(
            points, normals, source=path, method=scan_method, density_quantile=density_quantile
        )
        notes += [
            f"scan of {scan.points_in} points, spacing {1000 * scan.spacing:.2f} mm, "
            f"meshed by {scan.method}",
            *scan.notes,
        ]
        return RawInput(
            scan.vertices, scan.faces, "scan", fmt, chosen, how, scale, points, scan, notes
        )
    if loaded is None:
        loaded = _read_trimesh(path)
    vertices = np.asarray(getattr(loaded, "vertices", np.empty((0, 3))), dtype=np.float64)
    faces = np.asarray(getattr(loaded, "faces", np.empty((0, 3))), dtype=np.int64)
    if len(vertices) == 0 or faces.size == 0:
        raise InputError(path, "faces", "no triangles in the file (empty or not a mesh)")
    faces = faces.reshape(-1, 3)
    if not np.all(np.isfinite(vertices)):
        raise InputError(path, "vertices", "non-finite vertex coordinates")
    if faces.min() < 0 or faces.max() >= len(vertices):
        raise InputError(path, "faces", "face indices outside the vertex list")
    largest = float(np.max(vertices.max(axis=0) - vertices.min(axis=0)))
    if suffix in (".glb", ".gltf") and unit == "auto":
        chosen, how, notes = "m", "format", ["glTF is in metres by specification"]
    else:
        chosen, how, notes = resolve_unit(largest, unit, path)
    return RawInput(
        vertices * UNIT_TO_M[chosen],
        faces,
        "mesh",
        fmt,
        chosen,
        how,
        UNIT_TO_M[chosen],
        notes=notes,
    )
