"""A trained policy on disk (``RUN/policy.pt``) and in memory (:class:`Policy`).

``policy.pt`` holds the actor's weights (normalizer included) and everything needed to use it
without the training code: the environment's name and configuration, the randomization, the
observation groups and the roles. It contains only tensors and plain values, so it loads with
``torch.load(weights_only=True)``: a policy file cannot run code. Training, distillation and
export all write or read this one format.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from sim2real import __version__
from sim2real.core.atomic import atomic_path
from sim2real.core.errors import InputError
from sim2real.learn.ppo import Actor, NetConfig
from sim2real.learn.vec import ObsGroup, ObsRoles, ObsTerm, VecEnv, concat_obs

POLICY_FILE = "policy.pt"
POLICY_FORMAT = "sim2real-policy/1"


def groups_to_plain(groups: dict[str, ObsGroup]) -> dict[str, Any]:
    return {
        name: {
            "terms": [[t.name, float(t.scale)] for t in g.terms],
            "history": g.history,
            "deployable": g.deployable,
        }
        for name, g in groups.items()
    }


def groups_from_plain(plain: dict[str, Any]) -> dict[str, ObsGroup]:
    return {
        name: ObsGroup(
            terms=tuple(ObsTerm(str(n), float(s)) for n, s in g["terms"]),
            history=int(g["history"]),
            deployable=bool(g["deployable"]),
        )
        for name, g in plain.items()
    }


@dataclass
class PolicyMeta:
    """What a policy needs besides its weights: the world it was trained in and how it reads
    observations."""

    env_id: str
    obs_groups: dict[str, ObsGroup]
    roles: ObsRoles
    action_limit: np.ndarray  # (A,) N·m per actuator
    control_dt: float  # s
    max_episode_steps: int
    dr: str | None = "default"  # "default", None (no randomization) or a DR YAML path
    env_config: dict[str, Any] = field(default_factory=dict)
    net: NetConfig = field(default_factory=NetConfig)
    kind: str = "ppo"  # "ppo" or "distill"
    iteration: int = 0
    env_steps: int = 0

    @classmethod
    def from_env(cls, env: VecEnv, roles: ObsRoles, **kw: Any) -> PolicyMeta:
        return cls(
            env_id=env.env_id,
            obs_groups=dict(env.obs_groups),
            roles=roles,
            action_limit=np.asarray(env.action_limit, dtype=np.float64).reshape(-1),
            control_dt=float(env.control_dt),
            max_episode_steps=int(env.max_episode_steps),
            **kw,
        )

    @property
    def deployable(self) -> bool:
        return self.roles.deployable(self.obs_groups)

    @property
    def actor_dim(self) -> int:
        return sum(self.obs_groups[n].dim for n in self.roles.actor)

    def to_plain(self) -> dict[str, Any]:
        return {
            "env_id": self.env_id,
            "obs_groups": groups_to_plain(self.obs_groups),
            "roles": {"actor": list(self.roles.actor), "critic": list(self.roles.critic)},
            "action_limit": [float(x) for x in self.action_limit],
            "control_dt": self.control_dt,
            "max_episode_steps": self.max_episode_steps,
            "dr": self.dr,
            "env_config": self.env_config,
            "net": self.net.model_dump(),
            "kind": self.kind,
            "iteration": self.iteration,
            "env_steps": self.env_steps,
        }

    @classmethod
    def from_plain(cls, p: dict[str, Any]) -> PolicyMeta:
        return cls(
            env_id=str(p["env_id"]),
            obs_groups=groups_from_plain(p["obs_groups"]),
            roles=ObsRoles(actor=tuple(p["roles"]["actor"]), critic=tuple(p["roles"]["critic"])),
            action_limit=np.asarray(p["action_limit"], dtype=np.float64),
            control_dt=float(p["control_dt"]),
            max_episode_steps=int(p["max_episode_steps"]),
            dr=p["dr"],
            env_config=dict(p["env_config"] or {}),
            net=NetConfig(**p["net"]),
            kind=str(p["kind"]),
            iteration=int(p["iteration"]),
            env_steps=int(p["env_steps"]),
        )


class Policy:
    """A loaded actor. ``act`` is deterministic: the mean action clipped to [-1, 1]."""

    def __init__(self, actor: Actor, meta: PolicyMeta, path: Path | None = None) -> None:
        self.actor = actor.eval()
        self.meta = meta
        self.path = path

    env_id = property(lambda self: self.meta.env_id)
    env_config = property(lambda self: self.meta.env_config)
    dr = property(lambda self: self.meta.dr)
    roles = property(lambda self: self.meta.roles)
    obs_groups = property(lambda self: self.meta.obs_groups)
    deployable = property(lambda self: self.meta.deployable)
    action_limit = property(lambda self: self.meta.action_limit)
    control_dt = property(lambda self: self.meta.control_dt)

    def act(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        """Observation groups, (N, dim) each (or (dim,) for one) -> actions (N, A) (or (A,))."""
        x = concat_obs(obs, self.meta.roles.actor)
        single = x.ndim == 1
        with torch.no_grad():
            a = self.actor(torch.from_numpy(np.atleast_2d(x))).clamp(-1.0, 1.0).numpy()
        return a[0] if single else a


def save_policy(run_dir: str | Path, actor: Actor, meta: PolicyMeta) -> Path:
    """Write ``RUN/policy.pt`` atomically."""
    path = Path(run_dir) / POLICY_FILE
    payload = {
        "format": POLICY_FORMAT,
        "sim2real_version": __version__,
        "meta": meta.to_plain(),
        "actor": actor.state_dict(),
    }
    with atomic_path(path) as tmp:
        torch.save(payload, tmp)
    return path


def load_policy(run_dir: str | Path, expected_env_id: str | None = None) -> Policy:
    """The policy of a run folder (or of a ``policy.pt`` given directly). InputError when the
    folder or file is missing or corrupt, or when it was trained on another environment than
    ``expected_env_id``."""
    run_dir = Path(run_dir)
    path = run_dir if run_dir.suffix == ".pt" else run_dir / POLICY_FILE
    if not path.is_file():
        raise InputError(path, None, "no trained policy here (expected a run folder of `train`)")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise InputError(path, None, f"not a readable policy file ({exc})") from exc
    if not isinstance(payload, dict) or payload.get("format") != POLICY_FORMAT:
        raise InputError(path, "format", f"not a {POLICY_FORMAT} file")
    try:
        meta = PolicyMeta.from_plain(payload["meta"])
        actor = Actor(meta.actor_dim, len(meta.action_limit), meta.net)
        actor.load_state_dict(payload["actor"])
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        raise InputError(path, "meta", f"corrupt policy file ({exc})") from exc
    if expected_env_id is not None and meta.env_id != expected_env_id:
        raise InputError(path, "env_id", f"trained on {meta.env_id!r}, not on {expected_env_id!r}")
    return Policy(actor, meta, path)
