"""The parameter space of a task's environment: the model parameters a task lists (nominal =
what the loaded model holds), the environment's own (effort limit, observation biases, push),
the actuator model's, and the config's ``params`` on top."""

from __future__ import annotations

import difflib
from typing import Any

from sim2real.actuators.joint_motors import SHARED
from sim2real.core.errors import InputError
from sim2real.params.space import Param, ParamSpace, outside_bounds
from sim2real.sim.model import SimModel
from sim2real.sim.targets import resolve_target

NON_NEGATIVE = {
    "body.mass", "body.inertia", "body.inertia_x", "body.inertia_y", "body.inertia_z",
    "body.inertia_scale", "joint.damping", "joint.armature", "joint.frictionloss",
    "geom.friction", "extra.delay_s", "extra.pos_noise", "extra.vel_noise",
}  # fmt: skip
"""Targets whose negative value is no physical world (a negative friction, mass...)."""
NON_NEGATIVE_MOTOR = {f"actuator.{n}" for n in SHARED}
"""The legged motors' shared parameters (strength, rotor inertia, drive friction)."""


def _param(name, target, nominal, lo, hi) -> Param:
    lo, hi = min(lo, nominal), max(hi, nominal)
    return Param(name=name, target=target, nominal=float(nominal), bounds=(lo, hi))


def _model_params(sim: SimModel, rows: list, source: str) -> list[Param]:
    out = []
    for name, target, lo, hi in rows:
        handle = resolve_target(sim.model, target, source)
        out.append(_param(name, target, handle.read(sim.model, sim.extras), lo, hi))
    return out


def _env_params(torque_limit: float, suffixes: list[str]) -> list[Param]:
    out = [_param("torque_limit_Nm", "env.torque_limit_Nm", torque_limit, 0.01, 50.0)]
    for s in suffixes:
        out.append(_param(f"obs_bias_q{s}", f"env.obs_bias_q{s}", 0.0, -1.0, 1.0))
        out.append(_param(f"obs_bias_qvel{s}", f"env.obs_bias_qvel{s}", 0.0, -5.0, 5.0))
    out.append(_param("push_Nm", "env.push_Nm", 0.0, -20.0, 20.0))
    return out


def build_space(
    cfg: Any, sim: SimModel, actuator_cfg: Any | None, rows: list, suffixes: list[str]
) -> ParamSpace:
    """The environment's parameter space with ``cfg.params`` as nominal values. A name or
    target of ``cfg.params`` not in the default space is added when it is a valid MuJoCo
    target (e.g. ``joint.armature:shoulder``). A value outside its parameter's bounds (the
    task's table, those randomization terms are checked against) is refused."""
    params = _model_params(sim, rows, "config.params") + _env_params(cfg.torque_limit_Nm, suffixes)
    if actuator_cfg is not None:
        for p in actuator_cfg.param_space().params:
            params.append(p.model_copy(update={"name": f"actuator.{p.name}"}))
    by_key = {p.name: k for k, p in enumerate(params)}
    by_key.update({p.target: k for k, p in enumerate(params)})
    for key, value in cfg.params.items():
        k = by_key.get(key)
        if k is None:
            if ":" not in key and not key.startswith("extra.") and not key.startswith("option."):
                close = difflib.get_close_matches(key, list(by_key), n=4, cutoff=0.4)
                hint = f"; close matches: {', '.join(close)}" if close else ""
                raise InputError("config.params", key, f"unknown parameter{hint}")
            handle = resolve_target(sim.model, key, "config.params")
            params.append(_param(key, key, handle.read(sim.model, sim.extras), -1e9, 1e9))
            k = len(params) - 1
        p = params[k]
        field = p.target.partition(":")[0]
        if value < 0 and (field in NON_NEGATIVE or field in NON_NEGATIVE_MOTOR):
            raise InputError("config.params", key, f"{field} must be >= 0 (got {value})")
        wrong = outside_bounds(p.name, value, value, p.bounds)  # the bounds DR terms meet
        if wrong is not None:
            raise InputError("config.params", key, wrong)
        params[k] = p.model_copy(update={"nominal": float(value)})
    return ParamSpace(params=params)


def column_kinds(space: ParamSpace) -> list[str]:
    """Per parameter: ``env`` (the environment's own), ``actuator`` (the actuator model's) or
    ``model`` (written into the MuJoCo model copy and its extras)."""
    return [
        "env"
        if p.target.startswith("env.")
        else "actuator"
        if p.target.startswith("actuator.") and ":" not in p.target
        else "model"
        for p in space.params
    ]
