"""Registry of the learning environments: each is a *task* (:mod:`.task`) on the one generic
batched environment (:mod:`.manager`). Ids, configs, the batched constructor, and the gymnasium
registration (on import) of a single-environment wrapper for each id."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import gymnasium
from pydantic import ValidationError

from sim2real.core.errors import InputError
from sim2real.core.strict import validation_error
from sim2real.learn.envs import cartpole, go1, goto, pendubot, pendulum
from sim2real.learn.envs.gym_env import gym_factory
from sim2real.learn.envs.manager import ManagerVecEnv
from sim2real.learn.envs.task import Task
from sim2real.learn.randomization import Randomization
from sim2real.learn.vec import VecEnv, close_env

TASKS: dict[str, Task] = {
    t.env_id: t for t in (pendulum.TASK, pendubot.TASK, cartpole.TASK, go1.TASK, *goto.TASKS)
}
ENV_IDS: tuple[str, ...] = tuple(TASKS)


def task(env_id: str) -> Task:
    """The task registered as ``env_id`` (InputError with close matches)."""
    if env_id not in TASKS:
        # compared without the shared "sim2real/" prefix, which made every id look close
        names = {i.removeprefix("sim2real/"): i for i in ENV_IDS}
        close = difflib.get_close_matches(env_id.removeprefix("sim2real/"), names, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(names[c] for c in close)}?" if close else ""
        raise InputError("ENV", env_id, f"unknown environment (have {', '.join(ENV_IDS)}){hint}")
    return TASKS[env_id]


def env_config(env_id: str, data: dict | None = None, source: str | Path = "config") -> Any:
    """The environment's config (defaults, or ``data`` validated; errors as InputError)."""
    cls = task(env_id).config_cls
    try:
        return cls.model_validate(data or {})
    except ValidationError as err:
        raise validation_error(err, source, model=cls) from None


def default_dr_path(env_id: str) -> Path | Randomization:
    """The randomization used when ``dr="default"``: a YAML path (or, for an environment whose
    default is defined in code, the :class:`Randomization` itself)."""
    return task(env_id).default_dr


def make_vec(
    env_id: str,
    num_envs: int,
    *,
    seed: int = 0,
    dr: str | Path | Randomization | None = "default",
    config: Any = None,
    env_offset: int = 0,
) -> VecEnv:
    """``num_envs`` environments of ``env_id``. ``dr``: ``"default"`` (the environment's
    shipped randomization), ``None`` (none), a YAML path or a :class:`Randomization`.
    ``config``: the env's config object or a dict of its fields. ``env_offset``: the global
    index of the first environment: environment ``i`` draws from the stream of
    ``(seed, env_offset + i)``, so a shard built with ``env_offset=k`` steps exactly as
    environments ``k...`` of the whole batch."""
    t = task(env_id)
    if config is not None and not isinstance(config, t.config_cls):
        config = env_config(env_id, config)
    cls = t.vec_env or ManagerVecEnv
    return cls(t, num_envs, seed=seed, dr=dr, config=config, env_offset=env_offset)


CONFIG_SECTIONS = {"config": "", "config.params": "params", "config.actuator": "actuator"}
"""The sections of an environment's config its own errors name (InputError sources), as
fields of the file the config came from."""


def config_error_in(err: InputError, source: str | Path) -> InputError | None:
    """``err``, raised while building an environment, as a field of ``source`` (the file its
    config came from); None when it is not about the config."""
    if err.source not in CONFIG_SECTIONS:
        return None
    field = ".".join(p for p in (CONFIG_SECTIONS[err.source], err.field) if p) or None
    return InputError(source, field, err.message)


def check_env_builds(
    env_id: str, data: dict | None, source: str | Path, dr: str | Path | None = "default"
) -> None:
    """Build one environment of ``data`` (config fields read from ``source``): what only the
    model can tell (its name, a parameter, the control period against its timestep) fails
    before any work, named by ``source``. Warns of each of its ``params`` that an absolute
    term of ``dr`` overwrites."""
    from sim2real.learn.dr_notes import warn_overwritten

    try:
        env = make_vec(env_id, 1, dr=dr, config=env_config(env_id, data, source))
    except InputError as err:
        raise (config_error_in(err, source) or err) from None
    keep = "to keep it, give a --dr of your own without that term"
    warn_overwritten(env, (data or {}).get("params") or {}, source, keep)
    close_env(env)


def _register() -> None:
    for env_id, t in TASKS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=gym_factory(t))


_register()
