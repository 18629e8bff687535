"""Distractor shapes: unit-size primitives from trimesh and the user's mesh files, built once,
scaled per frame."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from sim2real.core.mesh_io import Mesh


@functools.cache
def unit_primitive(kind: str) -> Mesh:
    """A primitive about 1 unit across, centred at its origin: box, sphere, cylinder, cone,
    capsule or torus (metres once scaled)."""
    import trimesh.creation as tc

    makers = {
        "box": lambda: tc.box(extents=(1.0, 1.0, 1.0)),
        "sphere": lambda: tc.icosphere(subdivisions=2, radius=0.5),
        "cylinder": lambda: tc.cylinder(radius=0.5, height=1.0, sections=20),
        "cone": lambda: tc.cone(radius=0.5, height=1.0, sections=20),
        "capsule": lambda: tc.capsule(height=0.5, radius=0.25, count=(12, 12)),
        "torus": lambda: tc.torus(0.35, 0.15, major_sections=24, minor_sections=10),
    }
    mesh = makers[kind]()
    vertices = np.asarray(mesh.vertices, np.float64)
    vertices -= (vertices.max(axis=0) + vertices.min(axis=0)) / 2
    return Mesh(vertices, np.asarray(mesh.faces, np.int32), name=kind)


@functools.cache
def unit_mesh(path: str) -> Mesh:
    """The mesh file at ``path`` centred and scaled to 1 unit across its largest side, like a
    primitive (InputError naming the file when it cannot be read)."""
    from sim2real.core.mesh_io import load_mesh

    mesh = load_mesh(path, unit="m")
    lo, hi = mesh.vertices.min(axis=0), mesh.vertices.max(axis=0)
    vertices = (mesh.vertices - (lo + hi) / 2) / max(float((hi - lo).max()), 1e-12)
    return Mesh(vertices, mesh.faces, name=Path(path).stem)


def scaled(mesh: Mesh, size: np.ndarray) -> Mesh:
    """``mesh`` stretched by ``size`` (3,) per axis."""
    return Mesh(mesh.vertices * size, mesh.faces, mesh.name)


def quad(corners: np.ndarray, name: str) -> Mesh:
    """A flat quadrilateral from its 4 corners (4, 3), in order."""
    return Mesh(np.asarray(corners, np.float64), np.array([[0, 1, 2], [0, 2, 3]], np.int32), name)
