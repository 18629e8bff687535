"""Built-in parts made in code, so demos and benchmarks need no downloaded file."""

from __future__ import annotations

import numpy as np

from sim2real.core.mesh_io import Mesh, validate_mesh


def machined_bracket(subdivisions: int = 0) -> Mesh:
    """An L-bracket as machined from aluminium: a 120 × 60 × 10 mm base with two Ø12 mm
    through-holes, a 10 mm thick upright wall 60 mm high with a Ø10 mm hole, and a 45° chamfer
    along the wall's outer top edge. Metres; the base's underside is z = 0, z up."""
    import trimesh
    from trimesh.creation import box, cylinder

    base = box((0.120, 0.060, 0.010))
    base.apply_translation((0.0, 0.0, 0.005))
    wall = box((0.010, 0.060, 0.060))
    wall.apply_translation((-0.055, 0.0, 0.030))
    holes = []
    for y in (-0.015, 0.015):
        hole = cylinder(radius=0.006, height=0.05, sections=48)
        hole.apply_translation((0.025, y, 0.0))
        holes.append(hole)
    wall_hole = cylinder(radius=0.005, height=0.05, sections=48)
    wall_hole.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, (0, 1, 0)))
    wall_hole.apply_translation((-0.055, 0.0, 0.038))
    chamfer = box((0.010, 0.080, 0.010))  # a 45° cut of 5 mm on the outer top edge
    chamfer.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 4, (0, 1, 0)))
    chamfer.apply_translation((-0.060, 0.0, 0.060))
    body = trimesh.boolean.union([base, wall])
    body = trimesh.boolean.difference([body, *holes, wall_hole, chamfer])
    for _ in range(subdivisions):
        body = body.subdivide()
    return validate_mesh(body.vertices, body.faces, "built-in bracket", "bracket")


def torus_mesh(triangles: int = 40_000, major_m: float = 0.08, minor_m: float = 0.03) -> Mesh:
    """A torus with about ``triangles`` faces (the benchmark's 40k-triangle part)."""
    from trimesh.creation import torus

    minor_sections = max(8, int(np.sqrt(triangles / 4)))
    major_sections = max(8, triangles // (2 * minor_sections))
    t = torus(major_m, minor_m, major_sections=major_sections, minor_sections=minor_sections)
    return validate_mesh(t.vertices, t.faces, "built-in torus", "torus")
