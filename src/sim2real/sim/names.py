"""A model's joints and bodies read under other names: a task reads ``shoulder`` where a robot's
URDF says ``Joint1`` (ROS remaps names, mjlab matches them by pattern). The elements are renamed
in the spec before it is compiled, and so are the references to them (actuators, sensors,
equality constraints, contact excludes, camera and light targets): everything compiled from it
(qpos addresses, actuators, parameter targets, randomization terms) reads the new names and
knows no mapping. A joint's one actuator takes the joint's new name too: the tasks address a
driven joint's actuator by the joint's name. A tendon's wraps keep the names they were written
with (MjSpec offers no way to change them): a renamed joint in a tendon is MuJoCo's compile
error, which names both."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

import mujoco
from pydantic import Field

from sim2real.core.errors import InputError
from sim2real.core.strict import StrictModel

_JOINT_TRN = (mujoco.mjtTrn.mjTRN_JOINT, mujoco.mjtTrn.mjTRN_JOINTINPARENT)
JOINT_TARGET_KINDS = ("joint", "extra", "actuator")
"""Parameter target kinds that name a joint (a driven joint's actuator is named like it)."""
MAP_FIELD = {"joint": "joint_names", "body": "body_names"}
"""The config field that maps each kind of element."""
_BODY_OBJ = (mujoco.mjtObj.mjOBJ_BODY, mujoco.mjtObj.mjOBJ_XBODY)


class ModelNameFields(StrictModel):
    """Config fields that map the task's joint and body names to a model's own (a robot's URDF
    names its joints otherwise), as ROS remaps names: read through a ``NameMap``."""

    joint_names: dict[str, str] = Field(
        default_factory=dict,
        description="{the task's joint: the model's}, for a model that names them otherwise "
        "(a robot's URDF): the task's names then read and write the model's joints",
    )
    body_names: dict[str, str] = Field(
        default_factory=dict,
        description="{the task's body: the model's}, for the bodies the task's parameters name",
    )


@dataclass(frozen=True)
class NameMap:
    """Names to read a model by, each mapped to the model's own: ``{name read: name in the
    model}``. Its errors name ``source`` and the fields ``joint_names.<name>`` and
    ``body_names.<name>`` (the config fields that carry the maps)."""

    joints: dict[str, str] = field(default_factory=dict)
    bodies: dict[str, str] = field(default_factory=dict)
    source: str | None = None

    def joint(self, own: str) -> str:
        """The name the model's joint ``own`` is read by."""
        return next((new for new, old in self.joints.items() if old == own), own)

    def target(self, target: str) -> str:
        """A parameter target written in the model's own names (a ``sysid fit`` sidecar's), in
        the names it is read by; a pattern stays as written."""
        field_, sep, own = target.partition(":")
        kind = target_kind(target)
        if kind == "body":
            own = next((new for new, old in self.bodies.items() if old == own), own)
        elif kind in JOINT_TARGET_KINDS:
            own = self.joint(own)
        return f"{field_}{sep}{own}"


def target_kind(target: str) -> str:
    """The element kind a parameter target ``"<kind>.<field>:<name>"`` addresses."""
    return target.partition(":")[0].split(".")[0]


def rename_elements(spec: mujoco.MjSpec, names: NameMap) -> list[str]:
    """Rename ``spec``'s joints and bodies as ``names`` says, references included; notes on
    what was renamed. A name the model lacks, one model element read under two names, or a new
    name another element already has: an InputError naming ``names.source`` and the field."""
    notes = []
    joints = _renames(spec, "joint", names.joints, names.source)
    bodies = _renames(spec, "body", names.bodies, names.source)
    for element, new in [*joints.values(), *bodies.values()]:
        element.name = new
    if joints:
        renamed = {old: new for old, (_, new) in joints.items()}
        _retarget_joints(spec, renamed)
        notes.append(f"joints read as {_listed(renamed)}")
        _rename_joint_actuators(spec, list(renamed.values()))
    if bodies:
        renamed = {old: new for old, (_, new) in bodies.items()}
        _retarget_bodies(spec, renamed)
        notes.append(f"bodies read as {_listed(renamed)}")
    return notes


def _renames(spec: mujoco.MjSpec, kind: str, mapping: dict[str, str], source) -> dict:
    """``{old name: (element, new name)}`` of one kind, checked against the model."""
    elements = spec.joints if kind == "joint" else spec.bodies[1:]  # bodies[0]: the world
    by_name = {e.name: e for e in elements if e.name}
    field = MAP_FIELD[kind]
    out: dict = {}
    for new, old in mapping.items():
        if old not in by_name:
            why = f"no {kind} {old!r} in the model{model_names_hint(old, kind, list(by_name))}"
            raise InputError(source, f"{field}.{new}", why)
        if old in out:
            why = f"the model's {kind} {old!r} is already read as {out[old][1]!r}"
            raise InputError(source, f"{field}.{new}", why)
        out[old] = (by_name[old], new)
    kept = set(by_name) - set(out)
    for _, new in out.values():
        if new in kept:
            why = f"the model has another {kind} named {new!r}: map that one too, or this one not"
            raise InputError(source, f"{field}.{new}", why)
    return out


def model_names_hint(name: str, kind: str, names: list[str]) -> str:
    """'; close matches: ... (the model's <kind>s: every name)', for a message on a name the
    model lacks."""
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.4)
    hint = f"; close matches: {', '.join(close)}" if close else ""
    plural = "bodies" if kind == "body" else f"{kind}s"
    return f"{hint} (the model's {plural}: {', '.join(names[:16]) or 'none'})"


def _listed(renamed: dict[str, str]) -> str:
    return ", ".join(f"{new} ({old})" for old, new in renamed.items())


def _retarget_joints(spec: mujoco.MjSpec, renamed: dict[str, str]) -> None:
    """Actuators, sensors and joint couplings that name a renamed joint name it anew."""
    for a in spec.actuators:
        if a.trntype in _JOINT_TRN:
            a.target = renamed.get(a.target, a.target)
    _retarget_sensors(spec, (mujoco.mjtObj.mjOBJ_JOINT,), renamed)
    for e in spec.equalities:
        if e.type == mujoco.mjtEq.mjEQ_JOINT:
            e.name1, e.name2 = renamed.get(e.name1, e.name1), renamed.get(e.name2, e.name2)


def _retarget_bodies(spec: mujoco.MjSpec, renamed: dict[str, str]) -> None:
    """Actuators, sensors, constraints, excludes, cameras and lights that name a renamed body."""
    for a in spec.actuators:
        if a.trntype == mujoco.mjtTrn.mjTRN_BODY:
            a.target = renamed.get(a.target, a.target)
    _retarget_sensors(spec, _BODY_OBJ, renamed)
    for e in spec.equalities:
        if e.type != mujoco.mjtEq.mjEQ_JOINT and e.objtype == mujoco.mjtObj.mjOBJ_BODY:
            e.name1, e.name2 = renamed.get(e.name1, e.name1), renamed.get(e.name2, e.name2)
    for x in spec.excludes:
        x.bodyname1 = renamed.get(x.bodyname1, x.bodyname1)
        x.bodyname2 = renamed.get(x.bodyname2, x.bodyname2)
    for c in [*spec.cameras, *spec.lights]:
        c.targetbody = renamed.get(c.targetbody, c.targetbody)


def _retarget_sensors(spec: mujoco.MjSpec, objtypes: tuple, renamed: dict[str, str]) -> None:
    for s in spec.sensors:
        if s.objtype in objtypes:
            s.objname = renamed.get(s.objname, s.objname)
        if s.reftype in objtypes:
            s.refname = renamed.get(s.refname, s.refname)


def _rename_joint_actuators(spec: mujoco.MjSpec, joints: list[str]) -> None:
    """The one actuator on each renamed joint takes the joint's name (the tasks find a joint's
    actuator by it), with the sensors that read it; where the joint has several, or the name
    is another actuator's, they stay as they are."""
    taken = {a.name for a in spec.actuators}
    renamed = {}
    for joint in joints:
        on = [a for a in spec.actuators if a.trntype in _JOINT_TRN and a.target == joint]
        if len(on) != 1 or on[0].name == joint or joint in taken:
            continue
        if on[0].name:
            renamed[on[0].name] = joint
        taken.add(joint)
        on[0].name = joint
    _retarget_sensors(spec, (mujoco.mjtObj.mjOBJ_ACTUATOR,), renamed)
