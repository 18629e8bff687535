"""STEP and IGES import through Open CASCADE, as bundled by the ``gmsh`` wheel from PyPI.

Why gmsh rather than ``cadquery-ocp``: both wrap Open CASCADE, but gmsh is one self-contained
wheel with a small, stable Python API (``occ.importShapes``, ``mesh.importStl``), it is already a
project dependency, and it needs no CadQuery stack. Its drawbacks: one global kernel state (not
thread-safe; every call here runs under a lock) and chatty native output (silenced here).

Tessellation: Open CASCADE's own ``BRepMesh_IncrementalMesh`` (what gmsh calls the model's STL
representation), driven by ``Mesh.StlLinearDeflection`` = the chordal tolerance (largest
distance between a triangle and the exact surface) and ``Mesh.StlAngularDeflection`` (largest
angle between neighbouring facets of a curved face). Faces share their edge discretisation, so
a closed solid gives a closed triangle mesh.

Units: Open CASCADE converts what it reads to ``Geometry.OCCTargetUnit``; it is set to metres
here, so coordinates come back in metres whatever unit the file declares. The declared unit is
also read from the file's header (STEP ``LENGTH_UNIT``, IGES global parameters 14-15) and
reported.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sim2real.core.errors import InputError

CAD_SUFFIXES = (".step", ".stp", ".iges", ".igs")
_LOCK = threading.Lock()
_STEP_PREFIX = {"": 1.0, "MILLI": 1e-3, "CENTI": 1e-2, "DECI": 1e-1, "MICRO": 1e-6, "KILO": 1e3}
_STEP_CONVERSION = {"INCH": 0.0254, "FOOT": 0.3048, "MILLIMETRE": 1e-3, "METRE": 1.0}
_IGES_UNITS = {  # IGES global parameter 14: unit flag -> metres per unit
    1: ("inch", 0.0254),
    2: ("mm", 1e-3),
    4: ("foot", 0.3048),
    5: ("mile", 1609.344),
    6: ("m", 1.0),
    7: ("km", 1e3),
    8: ("mil", 2.54e-5),
    9: ("micron", 1e-6),
    10: ("cm", 1e-2),
    11: ("microinch", 2.54e-8),
}


@dataclass
class CadImport:
    """A CAD file tessellated into triangles, in metres (file frame)."""

    vertices: np.ndarray
    """(N, 3) float64 metres."""
    faces: np.ndarray
    """(M, 3) int64 vertex indices."""
    declared_unit: str | None
    """The length unit the file declares (``mm``, ``m``, ``inch``...), None if not found."""
    metres_per_unit: float | None
    solids: int
    surfaces: int
    notes: list[str] = field(default_factory=list)


@contextlib.contextmanager
def _quiet_native_output():
    """Open CASCADE's STEP/IGES translators print to the C-level stdout, whatever gmsh's
    ``General.Terminal`` says: point file descriptor 1 at /dev/null for the duration."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no usable stdout: nothing to silence
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


@contextlib.contextmanager
def gmsh_session():
    """``gmsh`` initialised without GUI, terminal output or user config; finalised on exit.
    One at a time (gmsh keeps global state)."""
    import gmsh

    with _LOCK, _quiet_native_output():
        # not interruptible: gmsh would set Ctrl-C to kill the process and never set it back
        # (its finalize restores a handler it did not keep), so a training or tracking run
        # after a CAD import died on Ctrl-C without saving
        gmsh.initialize(["-nopopup"], readConfigFiles=False, interruptible=False)
        try:
            gmsh.option.setNumber("General.Terminal", 0)
            gmsh.option.setNumber("General.Verbosity", 0)
            yield gmsh
        finally:
            gmsh.finalize()


def declared_unit(path: Path, text: str | None = None) -> tuple[str | None, float | None]:
    """(unit name, metres per unit) that a STEP or IGES file declares; (None, None) if absent."""
    if text is None:
        text = path.read_text(errors="replace")
    if path.suffix.lower() in (".step", ".stp"):
        return _step_unit(text)
    return _iges_unit(text)


def _step_unit(text: str) -> tuple[str | None, float | None]:
    flat = re.sub(r"\s+", "", text.upper())
    for entity in flat.split(";"):
        if "LENGTH_UNIT" not in entity:
            continue
        conv = re.search(r"CONVERSION_BASED_UNIT\('([A-Z]+)'", entity)
        if conv and conv.group(1) in _STEP_CONVERSION:
            name = conv.group(1).lower()
            return {"millimetre": "mm", "metre": "m"}.get(name, name), _STEP_CONVERSION[
                conv.group(1)
            ]
        si = re.search(r"SI_UNIT\((\$|\.([A-Z]+)\.),\.METRE\.\)", entity)
        if si:
            prefix = si.group(2) or ""
            if prefix in _STEP_PREFIX:
                short = {"": "m", "MILLI": "mm", "CENTI": "cm", "DECI": "dm", "MICRO": "um"}
                return short.get(prefix, prefix.lower() + "metre"), _STEP_PREFIX[prefix]
    return None, None


def _iges_unit(text: str) -> tuple[str | None, float | None]:
    lines = [ln for ln in text.splitlines() if len(ln) >= 73 and ln[72] == "G"]
    if not lines:
        return None, None
    glob = "".join(ln[:72] for ln in lines)
    delim, end = ",", ";"
    params: list[str] = []
    i, cur = 0, ""
    # parameters 1-2 may redefine the delimiters (given as 1Hx); the usual file keeps ',' ';'
    while i < len(glob) and len(params) < 16:
        m = re.match(r"(\d+)H", glob[i:])
        if m and cur.strip() == "":
            n = int(m.group(1))
            start = i + len(m.group(0))
            cur = glob[start : start + n]
            i = start + n
            continue
        ch = glob[i]
        if ch in (delim, end):
            params.append(cur.strip())
            cur = ""
        else:
            cur += ch
        i += 1
    if len(params) < 15:
        return None, None
    try:
        flag = int(float(params[13]))
    except ValueError:
        return None, None
    if flag in _IGES_UNITS:
        return _IGES_UNITS[flag]
    if flag == 3:  # unit named in parameter 15
        name = params[14].upper()
        named = {"MM": ("mm", 1e-3), "M": ("m", 1.0), "CM": ("cm", 1e-2), "IN": ("inch", 0.0254)}
        named["INCH"] = named["IN"]
        return named.get(name, (None, None))
    return None, None


def _register_unit_setting(gmsh) -> None:
    """Open CASCADE defines the unit-conversion setting that ``Geometry.OCCTargetUnit`` sets
    when its STEP translator starts; an IGES read before any STEP use fails to set it. Writing
    a tiny STEP file starts that translator."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        gmsh.model.add("unit-setting")
        gmsh.model.occ.addBox(0, 0, 0, 1, 1, 1)
        gmsh.model.occ.synchronize()
        gmsh.write(str(Path(folder) / "start.step"))
        gmsh.clear()


def _drop_sewn_originals(gmsh, faces: list[int], volume: int) -> None:
    """Sewing may bound the solid with copies of the faces: the originals would then be meshed
    too, a second skin over the first (an IGES cylinder's area came out doubled). Each copy's
    original (same area) goes; faces the solid left out (not sewn: a hole's wall) stay."""
    boundary = [t for _, t in gmsh.model.getBoundary([(3, volume)], oriented=False)]
    copies = [t for t in boundary if t not in faces]
    loose = [t for t in faces if t not in boundary]
    area = {t: gmsh.model.occ.getMass(2, t) for t in copies + loose}
    drop = []
    for c in copies:
        twin = next((t for t in loose if t not in drop and np.isclose(area[t], area[c])), None)
        if twin is not None:
            drop.append(twin)
    if drop:
        gmsh.model.occ.remove([(2, t) for t in drop])
        gmsh.model.occ.synchronize()


def import_cad(
    path: str | Path, chordal_tolerance_mm: float = 0.05, angular_tolerance_deg: float = 20.0
) -> CadImport:
    """Read a STEP / IGES file and tessellate its solids within ``chordal_tolerance_mm``.

    Raises ``InputError`` for a missing, empty or unreadable file and for a file with no solid
    (only curves or open surfaces). Coordinates come back in metres, in the file's frame."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, None, "CAD file not found")
    if path.stat().st_size == 0:
        raise InputError(path, None, "the file is empty")
    if not chordal_tolerance_mm > 0:
        raise InputError(None, "--chordal-tol-mm", f"must be > 0, got {chordal_tolerance_mm}")
    text = path.read_text(errors="replace")
    is_step = path.suffix.lower() in (".step", ".stp")
    if is_step and "ISO-10303-21" not in text[:2000]:
        raise InputError(path, None, "not a STEP file (no ISO-10303-21 header)")
    unit, scale = declared_unit(path, text)
    notes: list[str] = []
    if unit is None:
        notes.append("no length unit declared in the file: Open CASCADE read it in millimetres")
    with gmsh_session() as gmsh:
        if not is_step:
            _register_unit_setting(gmsh)
        gmsh.option.setString("Geometry.OCCTargetUnit", "M")
        # IGES (and some STEP) files hold trimmed faces, not solids: sew them into shells and
        # make solids of the closed ones; a file with open surfaces only still has no solid
        gmsh.option.setNumber("Geometry.OCCSewFaces", 1)
        gmsh.option.setNumber("Geometry.OCCMakeSolids", 1)
        try:
            entities = gmsh.model.occ.importShapes(str(path))
            gmsh.model.occ.synchronize()
        except Exception as exc:
            raise InputError(path, None, f"Open CASCADE cannot read it ({exc})") from exc
        solids = len(gmsh.model.getEntities(3))
        surfaces = len(gmsh.model.getEntities(2))
        curves = len(gmsh.model.getEntities(1))
        if not entities and not surfaces:
            raise InputError(path, None, "no geometry in the file (corrupt or empty model)")
        no_solid = InputError(
            path,
            "solids",
            f"no solid in the file ({surfaces} surfaces, {curves} curves, and they do not close "
            "a volume): export the part as a closed solid body",
        )
        from_faces = solids == 0
        if from_faces:  # trimmed faces only (usual in IGES): try to close them into a solid
            try:
                faces = [t for _, t in gmsh.model.getEntities(2)]
                loop = gmsh.model.occ.addSurfaceLoop(faces, sewing=True)
                volume = gmsh.model.occ.addVolume([loop])
                gmsh.model.occ.synchronize()
                _drop_sewn_originals(gmsh, faces, volume)
            except Exception as exc:
                raise no_solid from exc
            notes.append(f"the file holds {surfaces} faces and no solid: sewn into a solid")
        gmsh.option.setNumber("Mesh.StlLinearDeflectionRelative", 0)
        gmsh.option.setNumber("Mesh.StlLinearDeflection", chordal_tolerance_mm * 1e-3)
        gmsh.option.setNumber("Mesh.StlAngularDeflection", np.deg2rad(angular_tolerance_deg))
        try:
            gmsh.model.mesh.importStl()
        except Exception as exc:
            raise InputError(path, None, f"tessellation failed ({exc})") from exc
        tags, coords, _ = gmsh.model.mesh.getNodes()
        types, _, node_tags = gmsh.model.mesh.getElements(2)
    tri = [nt for t, nt in zip(types, node_tags, strict=True) if t == 2]
    if len(tags) == 0 or not tri:
        raise InputError(path, None, "Open CASCADE produced no triangles for the solids")
    vertices = np.asarray(coords, dtype=np.float64).reshape(-1, 3)
    lookup = np.zeros(int(np.max(tags)) + 1, dtype=np.int64)
    lookup[np.asarray(tags, dtype=np.int64)] = np.arange(len(tags))
    faces = lookup[np.concatenate(tri).astype(np.int64)].reshape(-1, 3)
    if from_faces:
        from sim2real.models.clean import is_watertight, merge_vertices

        d = float(np.linalg.norm(np.ptp(vertices, axis=0)))
        v, f, _ = merge_vertices(vertices, faces, max(d, 1e-12) * 1e-7)
        if not is_watertight(f, len(v)):
            if is_step:
                raise no_solid
            notes.append(
                "the IGES faces do not sew into a closed solid: imported as open surfaces "
                "(gaps are filled or reported by the cleaning)"
            )
    return CadImport(vertices, faces, unit, scale, max(solids, 1), surfaces, notes)
