"""Registry of the learning environments: ids, configs, the batched constructor, and the
gymnasium registration (on import) of a single-environment wrapper for each id."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import gymnasium
from pydantic import BaseModel, ValidationError

from sim2real.core.errors import InputError
from sim2real.core.strict import validation_error
from sim2real.learn.envs import double_pendulum, pendulum
from sim2real.learn.randomization import Randomization
from sim2real.learn.vec import VecEnv


class _Entry:
    def __init__(self, config_cls: type[BaseModel], vec_cls: type, gym_entry: str, default_dr):
        self.config_cls, self.vec_cls, self.gym_entry = config_cls, vec_cls, gym_entry
        self.default_dr = default_dr


_ENVS: dict[str, _Entry] = {
    pendulum.ENV_ID: _Entry(
        pendulum.PendulumSwingupConfig,
        pendulum.PendulumSwingupVec,
        "sim2real.learn.envs.pendulum:PendulumSwingupEnv",
        pendulum.DEFAULT_DR,
    ),
    double_pendulum.ENV_ID: _Entry(
        double_pendulum.PendubotSwingupConfig,
        double_pendulum.PendubotSwingupVec,
        "sim2real.learn.envs.double_pendulum:PendubotSwingupEnv",
        double_pendulum.DEFAULT_DR,
    ),
}
ENV_IDS: tuple[str, ...] = tuple(_ENVS)


def _entry(env_id: str) -> _Entry:
    if env_id not in _ENVS:
        close = difflib.get_close_matches(env_id, ENV_IDS, n=3, cutoff=0.4)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise InputError("ENV", env_id, f"unknown environment (have {', '.join(ENV_IDS)}){hint}")
    return _ENVS[env_id]


def env_config(env_id: str, data: dict | None = None, source: str | Path = "config") -> Any:
    """The environment's config (defaults, or ``data`` validated; errors as InputError)."""
    cls = _entry(env_id).config_cls
    try:
        return cls.model_validate(data or {})
    except ValidationError as err:
        raise validation_error(err, source) from None


def default_dr_path(env_id: str) -> Path | Randomization:
    """The randomization used when ``dr="default"``: a YAML path (or, for an environment whose
    default is defined in code, the :class:`Randomization` itself)."""
    return _entry(env_id).default_dr


def make_vec(
    env_id: str,
    num_envs: int,
    *,
    seed: int = 0,
    dr: str | Path | Randomization | None = "default",
    config: Any = None,
) -> VecEnv:
    """``num_envs`` environments of ``env_id``. ``dr``: ``"default"`` (the environment's
    shipped randomization), ``None`` (none), a YAML path or a :class:`Randomization`.
    ``config``: the env's config object or a dict of its fields."""
    entry = _entry(env_id)
    if config is not None and not isinstance(config, entry.config_cls):
        config = env_config(env_id, config)
    return entry.vec_cls(num_envs, seed=seed, dr=dr, config=config)


def _register() -> None:
    for env_id, entry in _ENVS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=entry.gym_entry)


_register()
