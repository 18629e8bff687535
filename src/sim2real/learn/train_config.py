"""The settings of a PPO training run (``policy train --settings``, the shipped
``configs/<slug>.train.yaml``), a curriculum's stages among them."""

from __future__ import annotations

import math
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, ValidationError, model_validator

from sim2real.core.errors import InputError
from sim2real.core.seed_range import MAX_SEED
from sim2real.core.strict import StrictModel, validation_error
from sim2real.core.yaml_io import load_yaml_text
from sim2real.learn.ppo import NetConfig, PPOConfig
from sim2real.learn.reality_sets import env_slug


class TrainStage(StrictModel):
    """One stage of a curriculum: other training conditions until ``until_env_steps``."""

    until_env_steps: int = Field(ge=1, description="this stage ends at this many steps in all")
    dr_terms: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="fields of the run's randomization terms replaced for this stage, by term "
        "name (e.g. {friction: {range: [0.0, 0.0]}})",
    )
    training_env: dict[str, Any] = Field(
        default_factory=dict,
        description="environment fields of this stage, over the settings' training_env",
    )


class TrainConfig(StrictModel):
    """Settings of one PPO training run."""

    total_env_steps: int = Field(2_000_000, ge=1, description="environment steps in all")
    num_envs: int = Field(64, ge=1, description="environments stepped together")
    steps_per_env: int = Field(64, ge=1, description="rollout length per iteration")
    seed: int = Field(
        0, ge=0, le=MAX_SEED, description="seeds the environments, the weights and the sampling"
    )
    checkpoint_every: int = Field(20, ge=1, description="iterations between checkpoints")
    episode_window: int = Field(200, ge=1, description="finished episodes the curve averages")
    torch_threads: int = Field(1, ge=1, description="torch CPU threads (small networks: 1)")
    noise_correlation_s: float = Field(
        0.0,
        ge=0,
        description="time constant of the exploration noise [s] (0: white). At 100 Hz, white "
        "noise averages out before the body moves; correlated noise (AR(1), same per-step "
        "Gaussian marginal) explores motions that last a swing",
    )
    sde_resample_steps: int = Field(
        16, ge=1, description="steps between draws of the state-dependent noise (gSDE)"
    )
    validate_every: int = Field(
        0,
        ge=0,
        description="iterations between evaluations on the task's validation worlds, the best "
        "so far kept as policy.pt (sim2real.learn.validation_watch); 0: policy.pt is the latest",
    )
    validation_episodes: int = Field(50, ge=1, description="episodes per validation world")
    training_env: dict[str, Any] = Field(
        default_factory=dict,
        description="environment fields for training only, under those given with the "
        "environment config (a mapping such as reward merges key by key): training aids such "
        "as wider start states (init_q_rad, init_qvel_rad_s), which evaluation drops, and "
        "reward weights",
    )
    ppo: PPOConfig = Field(
        default_factory=PPOConfig,
        description="PPO's settings (clip, epochs, learning rate, entropy...)",
    )
    net: NetConfig = Field(default_factory=NetConfig, description="the actor-critic networks")
    stages: list[TrainStage] = Field(
        default_factory=list,
        description="a curriculum: stages of other training conditions before the settings' "
        "own, each until its until_env_steps (sim2real.learn.curriculum)",
    )

    @model_validator(mode="after")
    def _minibatches_fit_the_batch(self) -> TrainConfig:
        batch = self.num_envs * self.steps_per_env
        if self.ppo.minibatches > batch:  # empty minibatches: NaN losses at every step
            why = f"ppo.minibatches: {self.ppo.minibatches} of a {batch}-step batch"
            raise ValueError(why + " (num_envs x steps_per_env): at most one step each")
        return self

    @property
    def iterations(self) -> int:
        return math.ceil(self.total_env_steps / (self.num_envs * self.steps_per_env))


def _read_settings(path: Path) -> dict[str, Any]:
    try:
        data = load_yaml_text(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(path, None, f"cannot read training settings ({exc})") from exc
    if not isinstance(data, dict):
        raise InputError(path, None, f"expected a mapping of settings, got a {type(data).__name__}")
    return data


def _shipped_settings(env_id: str) -> dict[str, Any] | None:
    """The fields of ``configs/<slug>.train.yaml`` shipped for ``env_id`` (None: none)."""
    ref = resources.files("sim2real.learn") / "configs" / f"{env_slug(env_id)}.train.yaml"
    if not ref.is_file():
        return None
    with resources.as_file(ref) as path:
        return _read_settings(path)


def deep_merge(below: dict[str, Any], above: dict[str, Any]) -> dict[str, Any]:
    """``above`` over ``below``: a mapping in both merges key by key (at every depth); any
    other value of ``above`` (a number, a list) replaces ``below``'s."""
    out = dict(below)
    for key, value in above.items():
        under = out.get(key)
        both = isinstance(under, dict) and isinstance(value, dict)
        out[key] = deep_merge(under, value) if both else value
    return out


def load_train_config(path: str | Path, env_id: str | None = None) -> TrainConfig:
    """The settings in ``path``; with ``env_id`` (``policy train --settings``) the file names
    only what it changes, over the settings shipped for ``env_id`` (:func:`deep_merge`: a
    file of ``total_env_steps: 2048`` keeps the task's gamma, learning-rate schedule, reward
    shaping...)."""
    path = Path(path)
    data = _read_settings(path)
    shipped = _shipped_settings(env_id) if env_id is not None else None
    if shipped is not None:
        data = deep_merge(shipped, data)
    try:
        return TrainConfig(**data)
    except ValidationError as exc:
        raise validation_error(exc, path, model=TrainConfig) from exc


def default_train_config(env_id: str) -> TrainConfig:
    """The settings shipped for ``env_id`` (``configs/<slug>.train.yaml``), else the defaults."""
    shipped = _shipped_settings(env_id)
    if shipped is None:
        return TrainConfig()
    try:
        return TrainConfig(**shipped)
    except ValidationError as exc:
        raise validation_error(exc, f"{env_slug(env_id)}.train.yaml", model=TrainConfig) from exc


def merge_env_config(training_env: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """The training settings' ``training_env`` under the given environment config; a mapping
    in both (``reward``, ``params``) merges key by key, so ``reward: {action_rate: 0.1}`` adds a
    weight to the settings' own instead of dropping them."""
    out = dict(training_env)
    for key, value in given.items():
        below = out.get(key)
        out[key] = (
            {**below, **value} if isinstance(below, dict) and isinstance(value, dict) else value
        )
    return out
