"""The contract between environments and learners: a batched environment on the CPU with
named observation groups.

Every environment of :mod:`sim2real.learn.envs` implements :class:`VecEnv`; PPO, distillation,
export and evaluation use nothing else. One step advances all ``num_envs`` environments by
``control_dt``; finished environments reset themselves (autoreset) and the observation
returned for them is the first of the new episode, the last one of the old episode being in
``StepResult.final_obs``.

Randomness is per environment: the environments of :mod:`sim2real.learn.envs` draw from
streams seeded by ``(seed, global index)``, the global index being ``env_offset + i`` for
``make_vec(..., env_offset=...)``; a batch of environments ``k..m`` built that way steps
exactly as those environments of the whole batch, so a batch can be sharded by index.

Observation groups have names (``"policy"``: what the real robot measures, stacked over a
history, so a deployable policy reads it; ``"privileged"``: the randomized parameters and the
noiseless state, simulation only). Learners map groups to roles (``actor``, ``critic``) by
configuration (:class:`ObsRoles`): a deployable policy's actor reads only deployable groups, a
teacher's actor reads privileged ones too. Each value in a group is ``raw * scale`` of a named
term (the export contract of ``policy.json``), frames oldest first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np


@dataclass(frozen=True)
class ObsTerm:
    """One scalar of a frame: ``raw * scale`` is what the network sees."""

    name: str
    scale: float = 1.0


@dataclass(frozen=True)
class ObsGroup:
    """``history`` frames of ``terms``, oldest first: ``dim == history * len(terms)``.
    ``deployable``: every term is measured on the real robot (or is the policy's own past
    action)."""

    terms: tuple[ObsTerm, ...]
    history: int = 1
    deployable: bool = True

    @property
    def dim(self) -> int:
        return self.history * len(self.terms)


@dataclass
class ObsRoles:
    """Which groups each role reads, concatenated in this order."""

    actor: tuple[str, ...] = ("policy",)
    critic: tuple[str, ...] = ("policy", "privileged")

    def check(self, groups: dict[str, ObsGroup]) -> None:
        for role in (self.actor, self.critic):
            for name in role:
                if name not in groups:
                    raise KeyError(f"no observation group {name!r} (have {', '.join(groups)})")

    def deployable(self, groups: dict[str, ObsGroup]) -> bool:
        """True when the actor reads deployable groups only."""
        return all(groups[name].deployable for name in self.actor)


def concat_obs(obs: dict[str, np.ndarray], names: tuple[str, ...]) -> np.ndarray:
    """(N, sum of dims) float32: the named groups side by side."""
    return np.concatenate([obs[n] for n in names], axis=-1).astype(np.float32, copy=False)


@dataclass
class StepResult:
    """Arrays have a leading ``num_envs`` axis. ``terminated``: the episode ended by the task
    (no bootstrap); ``truncated``: by the time limit (bootstrap from ``final_obs``).
    ``info`` holds at least ``episode_return`` and ``episode_success`` (float arrays, NaN where
    no episode ended this step) and ``episode_length``; an environment with named reward terms
    (``reward_names``) also ``episode_terms``: (N, terms) each weighted term's episode sum."""

    obs: dict[str, np.ndarray]
    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    final_obs: dict[str, np.ndarray]
    info: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class VecEnv(Protocol):
    """A batch of ``num_envs`` environments with per-environment parameters."""

    env_id: str  # the registered name, e.g. "sim2real/PendulumSwingup-v0"
    num_envs: int
    action_dim: int
    action_limit: np.ndarray  # (A,) applied torque = action * action_limit, action in [-1, 1]
    control_dt: float  # s
    max_episode_steps: int
    obs_groups: dict[str, ObsGroup]

    def reset(self, seed: int | None = None) -> dict[str, np.ndarray]:
        """Start every environment; ``seed`` makes the whole batch reproducible."""
        ...

    def step(self, action: np.ndarray) -> StepResult:
        """(N, A) actions, clipped to [-1, 1]."""
        ...

    def get_state(self) -> dict[str, Any]:
        """Everything needed to continue exactly (simulator states, RNG, histories,
        randomized parameters); picklable."""
        ...

    def set_state(self, state: dict[str, Any]) -> None: ...


def close_env(env: VecEnv) -> None:
    """Release the environment's threads or files, where it has any."""
    close = getattr(env, "close", None)
    if callable(close):
        close()
