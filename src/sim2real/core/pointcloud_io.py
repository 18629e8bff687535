"""Read and write point clouds (.ply, .pcd) through Open3D, imported only when called.

Points are (N, 3) float64 metres; normals (N, 3) unit vectors; colours (N, 3) in [0, 1]
(or uint8 0-255).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sim2real.core.atomic import atomic_path
from sim2real.core.errors import InputError

WRITE_SUFFIXES = (".ply", ".pcd")
READ_SUFFIXES = (".ply", ".pcd", ".xyz", ".xyzn", ".xyzrgb", ".pts")


def _array(path: Path, field: str, value: np.ndarray, n: int | None) -> np.ndarray:
    a = np.asarray(value)
    if a.ndim != 2 or a.shape[1] != 3:
        raise InputError(path, field, f"expected an (N, 3) array, got shape {a.shape}")
    if n is not None and a.shape[0] != n:
        raise InputError(path, field, f"expected {n} rows (one per point), got {a.shape[0]}")
    if not np.issubdtype(a.dtype, np.number) or np.iscomplexobj(a):
        raise InputError(path, field, f"expected real numbers, got dtype {a.dtype}")
    a = a.astype(np.float64)
    if not np.all(np.isfinite(a)):
        raise InputError(
            path, field, f"{int(np.sum(~np.isfinite(a).all(axis=1)))} rows with non-finite values"
        )
    return a


def write_point_cloud(
    path: str | Path,
    points: np.ndarray,
    normals: np.ndarray | None = None,
    colors: np.ndarray | None = None,
) -> None:
    """Write (N, 3) points [m] with optional (N, 3) normals and colours to ``.ply`` or ``.pcd``
    (binary), atomically: nothing is left at ``path`` when validation or writing fails.
    ``.ply`` keeps float64 exactly; Open3D's ``.pcd`` writer stores float32 (about 1e-7
    relative)."""
    path = Path(path)
    if path.suffix.lower() not in WRITE_SUFFIXES:
        raise InputError(
            path, "suffix", f"cannot write a point cloud as {path.suffix!r}: use .ply or .pcd"
        )
    pts = _array(path, "points", points, None)
    if pts.shape[0] == 0:
        raise InputError(path, "points", "no points to write")
    nrm = None if normals is None else _array(path, "normals", normals, pts.shape[0])
    col = None
    if colors is not None:
        raw = np.asarray(colors)
        col = _array(path, "colors", raw, pts.shape[0])
        if raw.dtype == np.uint8:
            col = col / 255.0
        if col.min() < 0 or col.max() > 1:
            raise InputError(path, "colors", "expected values in [0, 1] (or uint8 0-255)")

    import open3d as o3d

    cloud = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(pts))
    if nrm is not None:
        cloud.normals = o3d.utility.Vector3dVector(nrm)
    if col is not None:
        cloud.colors = o3d.utility.Vector3dVector(col)
    with atomic_path(path) as tmp:  # temporary file keeps the suffix: Open3D picks the format by it
        if not o3d.io.write_point_cloud(str(tmp), cloud, write_ascii=False):
            raise InputError(path, None, "Open3D could not write the point cloud")


def require_ply_magic(path: Path) -> None:
    """Refuse (InputError) a ``.ply`` that does not start with ``ply``: the PLY readers
    (Open3D's, trimesh's) say it in their own words: a line on stderr, an exception text."""
    if path.suffix.lower() == ".ply":
        with path.open("rb") as f:
            if f.read(3) != b"ply":
                raise InputError(path, None, "not a PLY file (it does not start with 'ply')")


def open3d_cloud(path: str | Path, **options):
    """``open3d.io.read_point_cloud(path, **options)`` without Open3D's own complaints on stdout
    (its reader warns there about an empty or broken file): the callers say it in one line. A
    ``.ply`` that does not start with ``ply`` is refused here (InputError), before Open3D's PLY
    reader prints its own line on stderr."""
    import open3d as o3d

    path = Path(path)
    require_ply_magic(path)
    with o3d.utility.VerbosityContextManager(o3d.utility.VerbosityLevel.Error):
        return o3d.io.read_point_cloud(str(path), **options)


def read_point_cloud(path: str | Path) -> tuple[np.ndarray, np.ndarray | None]:
    """(points (N, 3) float64 [m], normals (N, 3) float64 or None) from a point-cloud file.

    Points with non-finite coordinates (the holes of an organised PCD) are dropped, with their
    normals. Raises ``InputError`` for a missing, unreadable or empty file."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, None, "point cloud file not found")
    if path.suffix.lower() not in READ_SUFFIXES:
        raise InputError(
            path,
            "suffix",
            f"unsupported point cloud format {path.suffix!r}: expected {READ_SUFFIXES}",
        )
    cloud = open3d_cloud(path)
    pts = np.asarray(cloud.points, dtype=np.float64)
    if pts.shape[0] == 0:
        raise InputError(path, "points", "no points (the file is empty or Open3D cannot read it)")
    normals = np.asarray(cloud.normals, dtype=np.float64) if cloud.has_normals() else None
    keep = np.isfinite(pts).all(axis=1)
    if not keep.all():
        pts = pts[keep]
        normals = None if normals is None else normals[keep]
        if pts.shape[0] == 0:
            raise InputError(path, "points", "no finite points")
    return pts.copy(), None if normals is None else normals.copy()
