"""A STEP bracket made with the CAD kernel itself (Open CASCADE through gmsh), for the demo
and the tests: an L-bracket with two through-holes and a filleted inner corner, whose
dimensions and volume are known exactly."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from sim2real.core.atomic import atomic_path

BASE_MM = (100.0, 60.0, 10.0)
"""Base plate x, y, z [mm]; the upright wall stands on it at x = 0..10."""
WALL_MM = (10.0, 60.0, 50.0)
HOLE_RADIUS_MM = 6.0
HOLE_CENTRES_MM = ((60.0, 15.0), (60.0, 45.0))
FILLET_MM = 5.0


def bracket_volume_mm3() -> float:
    """Analytic volume: base + wall above the base - two holes + the inner fillet's fill
    (a square r x r less a quarter disc, along the 60 mm edge)."""
    bx, by, bz = BASE_MM
    wx, wy, wz = WALL_MM
    holes = len(HOLE_CENTRES_MM) * np.pi * HOLE_RADIUS_MM**2 * bz
    fillet = FILLET_MM**2 * (1 - np.pi / 4) * by
    return bx * by * bz + wx * wy * (wz - bz) - holes + fillet


def write_bracket_step(path: str | Path, unit: str = "mm") -> Path:
    """Write the bracket as STEP (or IGES, by suffix) in ``unit`` 'mm' or 'm' (STEP only for
    'm': the numbers are written in metres and the file declares metres)."""
    from sim2real.models.cad_import import gmsh_session

    path = Path(path)
    scale = {"mm": 1.0, "m": 1e-3}[unit]
    with atomic_path(path) as tmp, gmsh_session() as gmsh:
        # Open CASCADE's unit setting outlives gmsh.finalize: state it (numbers are mm)
        gmsh.option.setString("Geometry.OCCTargetUnit", "MM")
        occ = gmsh.model.occ
        bx, by, bz = (s * scale for s in BASE_MM)
        wx, wy, wz = (s * scale for s in WALL_MM)
        base = occ.addBox(0, 0, 0, bx, by, bz)
        wall = occ.addBox(0, 0, 0, wx, wy, wz)
        body, _ = occ.fuse([(3, base)], [(3, wall)])
        occ.synchronize()
        e = 0.01 * scale
        edges = gmsh.model.getEntitiesInBoundingBox(
            wx - e, -e, bz - e, wx + e, by + e, bz + e, 1
        )  # the inner corner between base and wall
        body = occ.fillet([body[0][1]], [t for _, t in edges], [FILLET_MM * scale])
        holes = [
            (
                3,
                occ.addCylinder(
                    x * scale, y * scale, -scale, 0, 0, bz + 2 * scale, HOLE_RADIUS_MM * scale
                ),
            )
            for x, y in HOLE_CENTRES_MM
        ]
        occ.cut(body, holes)
        occ.synchronize()
        gmsh.write(str(tmp))
    if unit == "m":
        if path.suffix.lower() not in (".step", ".stp"):
            raise ValueError("a bracket in metres is written as STEP only")
        text = path.read_text()
        text, n = re.subn(r"SI_UNIT\(\s*\.MILLI\.\s*,\s*\.METRE\.\s*\)", "SI_UNIT($,.METRE.)", text)
        if n != 1:
            raise RuntimeError("unexpected STEP unit block")
        path.write_text(text)
    return path
