"""The task's model, loaded under the task's names: a robot's own file (the DFKI pendubot's
URDF names its joints ``Joint1``, ``Joint2``) is read through the config's ``joint_names`` and
``body_names`` (``{the task's name: the model's}``, as ROS remaps names), so the environment,
its parameters and every randomization term keep the task's names (:mod:`sim2real.sim.names`
renames the model's elements). The task's driven joints get a torque actuator when the model
has none on them (a URDF has none).

The map is checked both ways before anything is built: a name the task does not read, or one
the model lacks, is an error naming the config field; without a map, a joint or body of the
task that the model lacks says which names the model has and which key maps them."""

from __future__ import annotations

import difflib
from typing import Any

from sim2real.core.errors import InputError
from sim2real.learn.envs.task import Task
from sim2real.sim.model import SimModel, load_sim_model
from sim2real.sim.names import (
    JOINT_TARGET_KINDS,
    MAP_FIELD,
    NameMap,
    model_names_hint,
    target_kind,
)
from sim2real.sim.targets import element_names

_WILDCARDS = set("*?[")


def task_names(task: Task) -> tuple[list[str], list[str]]:
    """The joints and the bodies ``task`` reads by name, in its order: its joints, driven
    joints, push and base joints, and the names its parameter rows' targets spell out (a
    pattern names no one element: it is left out)."""
    joints = [*task.joints, *task.actuated, task.push_joint, task.floating_base]
    bodies = []
    for _, target, *_ in task.model_rows:
        name = target.partition(":")[2]
        if not name or _WILDCARDS & set(name):
            continue
        kind = target_kind(target)
        if kind in JOINT_TARGET_KINDS:
            joints.append(name)
        elif kind == "body":
            bodies.append(name)
    return list(dict.fromkeys(j for j in joints if j)), list(dict.fromkeys(bodies))


def load_task_model(task: Task, cfg: Any) -> SimModel:
    """``cfg.model`` with the task's names (``cfg.joint_names``, ``cfg.body_names``) and a
    torque actuator on each driven joint; InputErrors name ``config`` and the field, or (a
    joint or body the model lacks, unmapped) the task's name with no source, which a reality
    reports as a model of another robot."""
    joints, bodies = task_names(task)
    _check_task_has("joint", cfg.joint_names, joints, task.env_id)
    _check_task_has("body", cfg.body_names, bodies, task.env_id)
    names = NameMap(dict(cfg.joint_names), dict(cfg.body_names), "config")
    path = task.model_path(cfg.model)
    sim = load_sim_model(path, drive_joints=list(task.actuated), names=names)
    _check_model_has(sim, "joint", joints)
    _check_model_has(sim, "body", bodies)
    return sim


def _check_task_has(kind: str, mapping: dict[str, str], names: list[str], env_id: str) -> None:
    field = MAP_FIELD[kind]
    for name in mapping:
        if name not in names:
            close = difflib.get_close_matches(name, names, n=3, cutoff=0.4)
            hint = f"did you mean {', '.join(close)}? " if close else ""
            why = (f"{env_id} reads no {kind} {name!r} ({hint}it reads: "
                   f"{', '.join(names) or 'none by name'}); map only those to the model's")  # fmt: skip
            raise InputError("config", f"{field}.{name}", why)


def _check_model_has(sim: SimModel, kind: str, needed: list[str]) -> None:
    """A name the task reads that the model lacks: the model's names, and the key that maps
    them (``shoulder: no joint 'shoulder' in the model (the model's joints: Joint1, Joint2):
    if the model names it otherwise, map it: joint_names: {shoulder: <its name>}``)."""
    have = [n for n in element_names(sim.model, kind) if n and n != "world"]
    missing = [n for n in needed if n not in have]
    if not missing:
        return
    field = MAP_FIELD[kind]
    example = ", ".join(f"{n}: <the model's>" for n in missing)
    why = (f"no {kind} {missing[0]!r} in the model{model_names_hint(missing[0], kind, have)}: "
           f"if the model names the task's {kind}s otherwise, map them: {field}: {{{example}}}")  # fmt: skip
    raise InputError(None, missing[0], why)
