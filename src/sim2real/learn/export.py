"""Export of a deployable policy for a robot: ``policy.onnx`` and ``policy.json``.

The ONNX graph maps one input ``obs`` (float32, [1, D]) to one output ``action`` (float32,
[1, A]) in [-1, 1]: the observation normalizer and the clamp are inside the graph, so the robot
side only builds the observation vector (``raw * scale`` of the terms listed in
``policy.json``, ``history`` frames oldest first) and multiplies the action by
``action_limit``; for a legged task it turns the action into joint position targets
``default_joint_pos + action_scale * action`` for its drivers' PD (``kp``, ``kd``), joints in
the order of ``joint_names``. :mod:`sim2real.learn.deploy` is such a robot-side runner.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from sim2real import __version__
from sim2real.core.atomic import atomic_path, write_text_atomic
from sim2real.core.errors import InputError
from sim2real.learn.policy import Policy, load_policy
from sim2real.learn.ppo import Actor

ONNX_FILE = "policy.onnx"
JSON_FILE = "policy.json"
JSON_FORMAT = "sim2real-deploy/1"


@dataclass
class ExportResult:
    onnx_path: Path
    json_path: Path
    obs_dim: int
    action_dim: int


class _DeterministicActor(nn.Module):
    """Normalize, mean action, clamp to [-1, 1]: the whole map a robot runs."""

    def __init__(self, actor: Actor) -> None:
        super().__init__()
        self.actor = actor

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.actor(obs).clamp(-1.0, 1.0)


def deploy_spec(policy: Policy) -> dict:
    """The content of ``policy.json`` for a deployable policy; InputError otherwise."""
    meta = policy.meta
    source = policy.path or "policy"
    private = [n for n in meta.roles.actor if not meta.obs_groups[n].deployable]
    if private:
        raise InputError(
            source,
            "roles.actor",
            f"the actor reads non-deployable observation group(s) {', '.join(private)} "
            "(a privileged teacher): distill it into a deployable student first",
        )
    if len(meta.roles.actor) != 1:
        raise InputError(
            source,
            "roles.actor",
            f"the export contract has one stacked observation group, the actor reads "
            f"{len(meta.roles.actor)} ({', '.join(meta.roles.actor)})",
        )
    group = meta.obs_groups[meta.roles.actor[0]]
    spec = {
        "format": JSON_FORMAT,
        "env": meta.env_id,
        "control_dt": meta.control_dt,
        "action_limit": [float(x) for x in meta.action_limit],
        "history": group.history,
        "obs_terms": [{"name": t.name, "scale": float(t.scale)} for t in group.terms],
        "obs_dim": group.dim,
        "action_dim": len(meta.action_limit),
        "obs_layout": "history frames oldest first; each frame is obs_terms in order, raw*scale",
        "sim2real_version": __version__,
        "policy_kind": meta.kind,
        "dr": meta.dr,
    }
    spec.update(_legged_fields(meta))
    return spec


def _legged_fields(meta) -> dict:
    """A legged task's joints, default pose, action scale, PD gains and motor model (none for
    a task on a fixed base)."""
    from sim2real.learn.envs import TASKS, make_vec
    from sim2real.learn.envs.legged import deploy_fields

    task = TASKS.get(meta.env_id)  # None: an environment of the user's own (no task)
    if task is None or task.floating_base is None:
        return {}
    env = make_vec(meta.env_id, 1, dr=None, config=meta.env_config)
    try:
        return deploy_fields(env)
    finally:
        env.close()


def export_policy(run_dir: str | Path, out_dir: str | Path) -> ExportResult:
    """Write ``out_dir/policy.onnx`` and ``out_dir/policy.json`` from a run folder."""
    policy = load_policy(run_dir)
    spec = deploy_spec(policy)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    module = _DeterministicActor(policy.actor).eval()
    dummy = torch.zeros(1, spec["obs_dim"])
    onnx_path = out_dir / ONNX_FILE
    with atomic_path(onnx_path) as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporter's deprecation chatter
        torch.onnx.export(
            module,
            (dummy,),
            str(tmp),
            input_names=["obs"],
            output_names=["action"],
            dynamo=False,
        )
    json_path = out_dir / JSON_FILE
    write_text_atomic(json_path, json.dumps(spec, indent=2) + "\n")
    return ExportResult(onnx_path, json_path, spec["obs_dim"], spec["action_dim"])
