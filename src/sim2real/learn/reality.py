"""A *reality*: a description of a world other than the one a policy was trained in, the proxy
for a real robot in transfer evaluation.

YAML (every field optional)::

    description: the identified pendulum, 20 % heavier, 20 ms more delay
    model: ../runs/sysid/fitted.xml    # built-in name, MJCF or URDF (relative to this file)
    joint_names: {shoulder: Joint1}    # the task's joint: the model's (a robot's own names)
    body_names: {link1: Link1}         # the same for the bodies the task's parameters name
    params: {frictionloss_Nm: 0.35}    # absolute values by parameter name or target
    actuator: {kind: torque, params: {torque_time_constant_s: 0.005}}
    extra_delay_s: 0.015
    randomization:                     # per-episode draws (the DR term format), e.g. shifts
      terms:
        - {name: mass, target: mass_kg, mode: reset, distribution: uniform,
           range: [0.8, 1.2], operation: scale}

The policy's own environment configuration is kept (history, scales, torque limit, episode
length, its extra delay: the deployment's own latency) and the reality's fields replace the
world's: a reality that names a model takes that model's parameters, not the training's
(``params`` given at training were of the training's model, and leaked into every reality
before); one without ``model`` changes the training's world. Without ``randomization`` the world
is fixed (no training randomization). Parameter names and targets are checked against the
environment: an unknown one fails with close matches.

A model that names the task's joints or bodies otherwise (the DFKI pendubot's URDF: ``Joint1``
for ``shoulder``) is read through ``joint_names`` / ``body_names``, and everything after it
(parameters, targets, randomization terms) uses the task's names
(:mod:`sim2real.learn.envs.model_names`). Only with ``model``: the maps are of that model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from sim2real.core.errors import InputError
from sim2real.core.strict import validation_error
from sim2real.core.yaml_io import read_yaml
from sim2real.learn.misplaced_files import misplaced_file
from sim2real.sim.names import ModelNameFields

REALITY_DIR = Path(__file__).parent / "configs" / "realities"


class Reality(ModelNameFields):
    name: str = Field("", description="the reality's name (its file's stem by default)")
    description: str = Field("", description="what this world stands for, in words")
    model: str | None = Field(
        None,
        description="another built-in model name, MJCF or URDF path (default: the training's)",
    )
    params: dict[str, float] = Field(
        default_factory=dict,
        description="absolute values by parameter name or target, on top of the model",
    )
    actuator: dict[str, Any] | None = Field(
        None, description="an actuator model config driving the joint (kind, params)"
    )
    extra_delay_s: float = Field(
        0.0, ge=0.0, le=0.2, description="action delay added to the environment's [s]"
    )
    randomization: dict[str, Any] | None = Field(
        None, description="terms drawn per episode in this world (a randomization mapping)"
    )
    source: str = Field(
        "", exclude=True, description="the file it was read from (not written back)"
    )


def shipped_realities() -> dict[str, Path]:
    """The realities that come with the package, by name."""
    return {p.stem: p for p in sorted(REALITY_DIR.glob("*.yaml"))}


def load_reality(arg: str | Path) -> Reality:
    """A reality YAML path, or the name of a shipped one."""
    path = Path(arg)
    if not path.is_file():
        shipped = shipped_realities()
        if str(arg) not in shipped:
            raise InputError(
                "--reality",
                str(arg),
                f"no such file and no shipped reality of that name (shipped: {', '.join(shipped)})",
            )
        path = shipped[str(arg)]
    data = read_yaml(path, "reality") or {}
    if not isinstance(data, dict):
        raise InputError(path, None, "expected a mapping of reality fields")
    misplaced = misplaced_file(data, path, "reality")
    if misplaced is not None:
        raise InputError(path, None, misplaced)
    if isinstance(data.get("params"), list) or "terms" in data:  # a dr.yaml or a DR terms file
        why = ("a randomization file, not a reality: give it to `policy train --dr`, or its "
               "content under a reality's `randomization:`")  # fmt: skip
        raise InputError(path, None, why)
    try:
        reality = Reality.model_validate(data)
    except ValidationError as err:
        raise validation_error(err, path) from None
    if reality.model is None and (reality.joint_names or reality.body_names):
        field = "joint_names" if reality.joint_names else "body_names"
        why = "maps the task's names to a model's: name that model too (model: FILE)"
        raise InputError(path, field, why)
    if reality.model is not None and not _is_builtin(reality.model):
        model_path = Path(reality.model)
        if not model_path.is_absolute():
            model_path = path.parent / model_path
        if not model_path.is_file():
            raise InputError(path, "model", f"model file {model_path} not found")
        reality.model = str(model_path)
    reality.name = reality.name or path.stem
    reality.source = str(path)
    return reality


def _is_builtin(name: str) -> bool:
    """A built-in model, or one a task bundles (e.g. the cart-pole's ``cartpole``)."""
    from sim2real.learn.envs import TASKS
    from sim2real.sim.builtin import BUILTINS

    return name in BUILTINS or any(name in t.models for t in TASKS.values())


def reality_env(reality: Reality, env_id: str, env_config: dict, num_envs: int, seed: int):
    """The policy's environment with the reality's world: a VecEnv (errors name the reality
    file and the field)."""
    from sim2real.learn.dr_notes import warn_overwritten
    from sim2real.learn.envs import config_error_in, make_vec
    from sim2real.learn.randomization import randomization_from_dict

    config = dict(env_config)
    if reality.model is not None:  # another model: the training's parameters were of its own
        config["model"] = reality.model
        maps = {"joint_names": reality.joint_names, "body_names": reality.body_names}
        for own in ("params", *maps):
            config.pop(own, None)
        config.update({field: names for field, names in maps.items() if names})
    config["params"] = {**config.get("params", {}), **reality.params}
    if reality.actuator is not None:
        config["actuator"] = reality.actuator
    config["extra_delay_s"] = config.get("extra_delay_s", 0.0) + reality.extra_delay_s
    dr = None
    if reality.randomization is not None:
        try:
            dr = randomization_from_dict(reality.randomization, reality.source)
        except InputError as err:
            field = f"randomization.{err.field}" if err.field else "randomization"
            raise InputError(reality.source, field, err.message) from None
    try:
        env = make_vec(env_id, num_envs, seed=seed, dr=dr, config=config)
    except InputError as err:
        own = err.source == "config.params" and err.field not in reality.params
        own = own or err.source is None  # a joint or body the task needs is not in the model
        if reality.model is not None and own:  # the task's own parameters miss in this model
            why = f"{reality.model} is not a model of {env_id} ({err.field}: {err.message})"
            raise InputError(reality.source, "model", why) from None
        named = config_error_in(err, reality.source)  # say which reality field it was
        if named is not None:
            raise named from None
        if dr is not None and (err.field or "").startswith("terms"):
            raise InputError(reality.source, f"randomization.{err.field}", err.message) from None
        raise
    keep = "to keep it, drop that term from the reality's randomization"
    warn_overwritten(env, reality.params, reality.source, keep)
    return env
