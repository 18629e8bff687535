"""URDF read as a robot expects, through MuJoCo's URDF import: the common ROS pattern of an
undeclared ``world`` link holding the base by a fixed joint welds the base to the world (MuJoCo
refused it: "URDF joint parent or child missing"); geoms whose mesh files are not shipped are
dropped, said (the dynamics do not depend on them: the inertials carry the mass); a dropped
``<transmission>`` gear is said."""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import mujoco


def read_urdf(path: Path) -> tuple[mujoco.MjSpec, list[str]]:
    """The spec of the URDF at ``path`` (integrator implicitfast, links on fixed joints kept as
    named bodies) and notes on what was changed or is not applied. MuJoCo's own errors (a
    ``ValueError``) pass through."""
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError:
        root = None  # MuJoCo reads it or says why: not ours to judge its XML further
    world = _undeclared_root(root) if root is not None else None
    notes = ["URDF: integrator set to implicitfast"]
    if world is None:
        spec = mujoco.MjSpec.from_file(str(path))
    else:
        ET.SubElement(root, "link", name=world)  # a link declared without inertial: the world
        spec = mujoco.MjSpec.from_string(ET.tostring(root, encoding="unicode"))
        spec.modelfiledir = str(path.parent.resolve()) + "/"  # meshes relative to the file
        notes.append(f"URDF: link {world!r} is not declared: taken as the world frame")
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    spec.compiler.fusestatic = False  # a link on a fixed joint keeps its name for targets
    notes += _drop_missing_meshes(spec, path)
    if root is not None:
        notes += _ignored_transmissions(path, root)
    return spec, notes


def _undeclared_root(root: ET.Element) -> str | None:
    """The one link that joints name as a parent, that is never a child and never declared,
    when every declared link hangs below it (so it can only be the world); else None (a typo in
    a parent name stays MuJoCo's error)."""
    declared = {link.get("name") for link in root.findall("link")}
    joints = root.findall("joint")
    children = {c.get("link") for j in joints if (c := j.find("child")) is not None}
    parents = {p.get("link") for j in joints if (p := j.find("parent")) is not None}
    missing = parents - declared - children - {None}
    if len(missing) != 1 or not declared <= children:
        return None
    return missing.pop()


def _drop_missing_meshes(spec: mujoco.MjSpec, path: Path) -> list[str]:
    """Delete the meshes whose files do not exist, with the geoms that use them."""
    meshdir = spec.compiler.meshdir or spec.meshdir
    missing = []
    for mesh in list(spec.meshes):
        file = Path(mesh.file).name if spec.strippath else mesh.file
        if (path.parent / meshdir / file).is_file():
            continue
        for geom in [g for g in spec.geoms if g.meshname == mesh.name]:
            spec.delete(geom)
        spec.delete(mesh)
        missing.append(mesh.file)
    if not missing:
        return []
    note = (
        f"URDF: mesh files not found, their geoms dropped (the inertials carry the mass): "
        f"{', '.join(missing)}"
    )
    warnings.warn(f"{path}: {note}", stacklevel=4)
    return [note]


def _ignored_transmissions(path: Path, root: ET.Element) -> list[str]:
    """MuJoCo's URDF import drops ``<transmission>``: a mechanical reduction other than 1 is
    said (a forgotten one fitted a sixth of the torque, 'converged')."""
    notes = []
    for t in root.iter("transmission"):
        ratios = [(r.text or "1").strip() for r in t.iter("mechanicalReduction")]
        ratio = next((r for r in ratios if not _is_one(r)), None)
        if ratio is not None:
            joints = ", ".join(j.get("name", "?") for j in t.iter("joint"))
            note = (
                f"transmission {t.get('name', '?')} of {joints}: mechanicalReduction {ratio} is "
                "not applied (MuJoCo's URDF import drops transmissions): give the joint torque "
                f"in the log, or the mapping's scale: {ratio}"
            )
            warnings.warn(f"{path}: {note}", stacklevel=4)
            notes.append(note)
    return notes


def _is_one(text: str) -> bool:
    try:
        return float(text) == 1.0
    except ValueError:  # not a number: said as written
        return False
