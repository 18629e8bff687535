"""PPO training of a policy on a :class:`~sim2real.learn.vec.VecEnv`, into a run folder
(:mod:`sim2real.learn.run_folder`): ``RUN/config.yaml`` (the fully resolved settings),
``RUN/metrics.csv`` (the training curve), ``RUN/tb/`` (TensorBoard scalars; under
``Episode_Reward/`` each reward term's mean episode sum), ``RUN/policy.pt`` (the actor, see
:mod:`sim2real.learn.policy`: the latest, or with ``validate_every`` the best on the validation
worlds, :mod:`sim2real.learn.validation_watch`) and ``RUN/train_state.pt`` (everything needed
to continue). The rollout is :mod:`sim2real.learn.ppo_rollout`'s, the update :mod:`.ppo`'s.

``train(..., resume=True)`` continues exactly where a killed run stopped: the checkpoint holds
the model, the optimizer, the normalizers, every random generator, the environment's own state
and its last observation, the iteration counter and the curve so far, so 2 + 2 iterations give
the same parameters as 4 in one go.
"""

from __future__ import annotations

import math
import random
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from sim2real.core.errors import InputError
from sim2real.core.stop_request import StoppedError, ctrl_c_requests_stop, stop_requested
from sim2real.learn.learners.normalize import ReturnScale
from sim2real.learn.policy import PolicyMeta, save_policy
from sim2real.learn.ppo import PPO, ActorCritic, RolloutStorage
from sim2real.learn.ppo_rollout import ExplorationNoise, collect
from sim2real.learn.reality_sets import env_slug
from sim2real.learn.run_folder import (
    METRIC_COLUMNS,
    METRICS_FILE,
    TIMING_COLUMNS,
    TRAIN_STATE_FILE,
    TrainResult,
    load_train_state,
    metrics_row,
    progress_bar,
    read_metrics,
    save_train_state,
    write_config,
    write_metrics,
)
from sim2real.learn.train_config import (
    TrainConfig,
    TrainStage,
    default_train_config,
    load_train_config,
    merge_env_config,
)
from sim2real.learn.validation_watch import BestOnValidation
from sim2real.learn.vec import ObsRoles, VecEnv, close_env

__all__ = [  # the run folder's names, for the callers that know them from here
    "METRICS_FILE",
    "METRIC_COLUMNS",
    "TIMING_COLUMNS",
    "TRAIN_STATE_FILE",
    "EnvFactory",
    "ReturnScale",
    "TrainConfig",
    "TrainResult",
    "TrainStage",
    "default_train_config",
    "env_slug",
    "load_train_config",
    "progress_bar",
    "read_metrics",
    "train",
]

EnvFactory = Callable[..., VecEnv]  # (env_id, num_envs, *, seed, dr, config) -> VecEnv


def default_make_env(env_id: str, num_envs: int, **kw: Any) -> VecEnv:
    from sim2real.learn.envs import make_vec

    return make_vec(env_id, num_envs, **kw)


def stage(iteration: int, dr: Any, env_config: dict[str, Any]) -> dict[str, Any]:
    """One entry of a run's ``stages``: the training conditions from ``iteration`` on."""
    return {"from_iteration": iteration, "dr": dr, "env_config": env_config}


def train(
    run_dir: str | Path,
    env_id: str,
    *,
    dr: str | Path | None = "default",
    env_config: dict[str, Any] | Any = None,
    train_config: TrainConfig | None = None,
    roles: ObsRoles | None = None,
    resume: bool = False,
    new_conditions: dict[str, Any] | None = None,
    quiet: bool = False,
    make_env: EnvFactory | None = None,
    progress_label: str | None = None,
) -> TrainResult:
    """Train a policy with PPO into ``run_dir`` (arguments: :func:`_train_stage`). Settings
    with ``stages`` run a curriculum (:mod:`sim2real.learn.curriculum`): each stage a resume
    on its conditions; a resumed curriculum run goes on through its plan."""
    from sim2real.learn.curriculum import is_curriculum_run, train_curriculum

    run_dir = Path(run_dir)
    if not resume and (run_dir / TRAIN_STATE_FILE).exists():  # before a curriculum's files
        raise InputError(run_dir, None, "already holds a run: resume it or choose a new folder")
    given = _as_stored({"dr": dr, "env_config": env_config})
    new_conditions = _as_stored(new_conditions) if new_conditions else None
    kw = {"roles": roles, "quiet": quiet, "make_env": make_env, "progress_label": progress_label}
    cfg = train_config if train_config is not None or resume else default_train_config(env_id)
    if is_curriculum_run(run_dir) if resume else bool(cfg.stages):
        if new_conditions:
            why = "a curriculum run takes its conditions from its settings' stages"
            raise InputError(run_dir, "stages", why)
        return train_curriculum(_train_stage, run_dir, env_id, **given, train_config=cfg,
                                resume=resume, **kw)  # fmt: skip
    return _train_stage(run_dir, env_id, **given, train_config=cfg, resume=resume,
                        new_conditions=new_conditions, **kw)  # fmt: skip


def _as_stored(conditions: dict[str, Any]) -> dict[str, Any]:
    """Training conditions as a run stores them: a randomization path as text, an
    environment's config object as its fields."""
    out = dict(conditions)
    if isinstance(out.get("dr"), Path):
        out["dr"] = str(out["dr"])
    if hasattr(out.get("env_config"), "model_dump"):
        out["env_config"] = out["env_config"].model_dump(mode="json")
    return out


def _train_stage(
    run_dir: str | Path, env_id: str, *, dr, env_config, train_config: TrainConfig | None,
    roles: ObsRoles | None, resume: bool, new_conditions: dict[str, Any] | None, quiet: bool,
    make_env: EnvFactory | None, progress_label: str | None = None,
) -> TrainResult:  # fmt: skip
    """Train a policy with PPO into ``run_dir``, on one set of conditions.

    ``dr``: "default" (the environment's randomization), None (none) or a DR YAML path.
    ``roles``: which observation groups actor and critic read (default: deployable actor,
    asymmetric critic); a teacher reads ``("policy", "privileged")``. With ``resume`` the run
    stored in ``run_dir`` continues with its own settings; of ``train_config`` only
    ``total_env_steps`` is taken (to extend a run); ``new_conditions`` (``dr`` and / or
    ``env_config``) replace the run's own from here on, a curriculum's next stage: each
    environment takes them at its next episode, what actor and critic observe must stay, and
    the run's ``stages`` record when each began (the run's own again: a plain resume).
    ``make_env`` replaces :func:`sim2real.learn.envs.make_vec` (tests). ``progress_label``: the
    progress as labelled lines on stderr, not a bar (one of several trainings side by side).
    """
    run_dir = Path(run_dir)
    make_env = make_env or default_make_env
    state: dict[str, Any] | None = None
    if resume:
        state = load_train_state(run_dir, env_id)
        cfg = TrainConfig(**state["train_config"])
        if train_config is not None:
            cfg = cfg.model_copy(update={"total_env_steps": train_config.total_env_steps})
            if cfg.iterations < state["iteration"]:  # else: exit 0 having done nothing
                done = state["env_steps"]
                why = f"{cfg.total_env_steps} is fewer than the {done} the run has done"
                raise InputError("--steps", None, why + ": give more to extend it")
        shards = len(state["env_state"].get("shards", ()))
        if shards and make_env is default_make_env:  # its environments live in the shards
            why = f"the run was trained over {shards} Ray workers: resume with --workers {shards}"
            raise InputError("--workers", None, why)
        dr, env_config = state["dr"], state["env_config"]
        dr = (new_conditions or {}).get("dr", dr)
        env_config = (new_conditions or {}).get("env_config", env_config)
        roles = ObsRoles(actor=tuple(state["roles"][0]), critic=tuple(state["roles"][1]))
    else:
        cfg = train_config or default_train_config(env_id)
        roles = roles or ObsRoles()
    if dr is not None and not isinstance(dr, str):  # the run must say where its DR came from
        raise InputError("dr", None, "give 'default', None or the path of a randomization YAML")
    env_config = merge_env_config(cfg.training_env, env_config or {})
    first = stage(0, state["dr"], state["env_config"]) if state else stage(0, dr, env_config)
    stages = (state or {}).get("stages") or [first]  # runs saved before stages: one
    if state is not None and (dr, env_config) == (state["dr"], state["env_config"]):
        new_conditions = None  # the run's own (a stage's command run again): a plain resume
    if state is not None and new_conditions:
        stages = [*stages, stage(state["iteration"], dr, env_config)]

    watch = None
    if cfg.validate_every:  # its worlds load before any training: a bad one fails first
        watch = BestOnValidation.for_task(run_dir, env_id, cfg.validation_episodes)
    torch.set_num_threads(cfg.torch_threads)
    env = make_env(env_id, cfg.num_envs, seed=cfg.seed, dr=dr, config=env_config)
    try:
        roles.check(env.obs_groups)
    except KeyError as exc:
        raise InputError("roles", None, str(exc.args[0])) from exc
    if "privileged" in roles.actor and env_config.get("goal_start_fall_rad") is not None:
        why = "a training aid that evaluation drops: a teacher's actor cannot read its flag"
        raise InputError("config", "goal_start_fall_rad", why)
    meta = PolicyMeta.from_env(env, roles, dr=dr, env_config=env_config, net=cfg.net)
    actor_dim = meta.actor_dim
    critic_dim = sum(env.obs_groups[n].dim for n in roles.critic)

    torch.manual_seed(cfg.seed)
    model = ActorCritic(actor_dim, critic_dim, env.action_dim, cfg.net)
    ppo = PPO(model, cfg.ppo)
    generator = torch.Generator().manual_seed(cfg.seed)
    rho = math.exp(-env.control_dt / cfg.noise_correlation_s) if cfg.noise_correlation_s else 0.0
    noise_shape = (cfg.num_envs, *model.actor.log_std.shape)  # per env: (A,) or (features, A)
    noise = ExplorationNoise(rho, cfg.sde_resample_steps, noise_shape, generator)
    reward_scale = ReturnScale(cfg.num_envs, cfg.ppo.gamma) if cfg.ppo.normalize_rewards else None
    episodes: deque[tuple[float, float]] = deque(maxlen=cfg.episode_window)
    episode_terms: deque[np.ndarray] = deque(maxlen=cfg.episode_window)
    reward_names = tuple(getattr(env, "reward_names", ()))
    rows: list[dict[str, float]] = []
    iteration, env_steps, wall_before = 0, 0, 0.0
    if state is None:
        np.random.seed(cfg.seed)
        random.seed(cfg.seed)
        obs = env.reset(seed=cfg.seed)
    else:
        saved = state["model"]["actor.normalizer.mean"], state["model"]["critic.normalizer.mean"]
        if (len(saved[0]), len(saved[1])) != (actor_dim, critic_dim):  # e.g. a longer history
            why = "these conditions change what actor or critic observe; start a new run"
            raise InputError(run_dir / TRAIN_STATE_FILE, "observations", why)
        model.load_state_dict(state["model"])
        ppo.optimizer.load_state_dict(state["optimizer"])
        ppo.learning_rate = state["learning_rate"]
        generator.set_state(state["rng"]["generator"])
        noise.set_state(state["noise"])
        if reward_scale is not None:
            reward_scale.load_state(state["reward_scale"])
        torch.set_rng_state(state["rng"]["torch"])
        np.random.set_state(state["rng"]["numpy"])
        random.setstate(state["rng"]["python"])
        try:
            env.set_state(state["env_state"])
        except (KeyError, ValueError) as exc:  # another layout: older code, other --workers
            why = f"the saved environments do not fit these ({exc}); start a new run"
            raise InputError(run_dir / TRAIN_STATE_FILE, "env_state", why) from None
        obs = state["obs"]
        episodes.extend(state["episodes"])
        if not new_conditions:  # new reward weights: other terms; logs only, so start afresh
            episode_terms.extend(state.get("episode_terms", []))  # not saved before: logs only
        if watch is not None:
            watch.load_state(state.get("validation"))
        rows = list(state["metrics"])
        iteration, env_steps, wall_before = state["iteration"], state["env_steps"], state["wall_s"]
    write_config(run_dir, env_id, dr, env_config, roles, cfg.model_dump(), stages)
    write_metrics(run_dir, rows)

    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(run_dir / "tb"), purge_step=iteration + 1 if resume else None)
    storage = RolloutStorage(cfg.steps_per_env, cfg.num_envs, actor_dim, critic_dim, env.action_dim)
    batch = cfg.num_envs * cfg.steps_per_env
    start = time.perf_counter()

    saved_at = iteration if state is not None else None  # the last checkpoint's iteration

    def checkpoint() -> None:
        nonlocal saved_at
        save_train_state(run_dir, locals_for_state())
        saved_at = iteration
        if watch is None:  # else policy.pt is the best on validation, written by the watch
            meta.iteration, meta.env_steps = iteration, env_steps
            save_policy(run_dir, model.actor, meta)

    def locals_for_state() -> dict[str, Any]:
        return {
            "env_id": env_id,
            "dr": dr,
            "env_config": env_config,
            "roles": [list(roles.actor), list(roles.critic)],
            "train_config": cfg.model_dump(),
            "model": model.state_dict(),
            "optimizer": ppo.optimizer.state_dict(),
            "learning_rate": ppo.learning_rate,
            "rng": {
                "generator": generator.get_state(),
                "torch": torch.get_rng_state(),
                "numpy": np.random.get_state(),
                "python": random.getstate(),
            },
            "env_state": env.get_state(),
            "noise": noise.get_state(),
            "reward_scale": None if reward_scale is None else reward_scale.state(),
            "obs": obs,
            "episodes": list(episodes),
            "episode_terms": list(episode_terms),
            "stages": stages,
            "metrics": rows,
            "validation": None if watch is None else watch.state(),
            "iteration": iteration,
            "env_steps": env_steps,
            "wall_s": wall_before + time.perf_counter() - start,
        }

    try:
        with progress_bar(quiet, progress_label) as progress, ctrl_c_requests_stop():
            task = progress.add_task(
                "train",
                total=cfg.iterations * batch,
                completed=iteration * batch,
                rate="-",
                info="",
            )
            while iteration < cfg.iterations:
                t0 = time.perf_counter()
                obs = collect(
                    env,
                    model,
                    storage,
                    obs,
                    roles,
                    generator,
                    noise,
                    reward_scale,
                    cfg.ppo,
                    episodes,
                    episode_terms,
                )
                t1 = time.perf_counter()
                losses = ppo.update(storage, generator, progress=iteration / cfg.iterations)
                model.actor.normalizer.update(storage.actor_obs.flatten(0, 1))
                model.critic.normalizer.update(storage.critic_obs.flatten(0, 1))
                t2 = time.perf_counter()
                iteration += 1
                env_steps += batch
                row = metrics_row(iteration, env_steps, episodes, losses, storage, t0, t1, t2)
                row["wall_s"] = wall_before + t2 - start
                rows.append(row)
                write_metrics(run_dir, rows)
                for key in METRIC_COLUMNS[2:]:
                    writer.add_scalar(f"train/{key}", row[key], iteration)
                if episode_terms:  # each reward term's mean episode sum over the window
                    terms = np.mean(episode_terms, axis=0)
                    for name, value in zip(reward_names, terms, strict=True):
                        writer.add_scalar(f"Episode_Reward/{name}", value, iteration)
                progress.update(
                    task,
                    completed=iteration * batch,
                    rate=f"{row['steps_per_s']:,.0f}",
                    info=f"return {row['mean_return']:.1f} success {100 * row['success_rate']:.0f} %",
                )
                last_one = iteration == cfg.iterations
                if watch is not None and (iteration % cfg.validate_every == 0 or last_one):
                    watch.evaluate(model.actor, meta, iteration, env_steps)
                stopping = stop_requested() and not last_one  # Ctrl-C: here, the state whole
                if iteration % cfg.checkpoint_every == 0 or last_one or stopping:
                    checkpoint()
                if stopping:
                    why = f"stopped at iteration {iteration} of {cfg.iterations} (Ctrl-C), saved"
                    raise StoppedError(run_dir, None, why + ": --resume continues exactly")
    except KeyboardInterrupt:  # a second Ctrl-C, or one outside the main thread's watch
        where = f"iteration {saved_at}'s checkpoint stays: --resume continues from there"
        where = "no checkpoint yet" if saved_at is None else where
        why = f"interrupted in iteration {iteration + 1} (Ctrl-C twice): {where}"
        raise StoppedError(run_dir, None, why) from None
    finally:
        writer.close()
        close_env(env)
    last = rows[-1] if rows else {"mean_return": math.nan, "success_rate": math.nan}
    return TrainResult(
        run_dir=run_dir,
        iterations=iteration,
        env_steps=env_steps,
        wall_s=wall_before + time.perf_counter() - start,
        mean_return=float(last["mean_return"]),
        success_rate=float(last["success_rate"]),
        deployable=meta.deployable,
        kept=None if watch is None else watch.best,
    )
