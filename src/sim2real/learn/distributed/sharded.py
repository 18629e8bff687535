"""A :class:`~sim2real.learn.vec.VecEnv` whose environments live in Ray actors: shard ``s``
holds the environments of global indices ``k_s .. k_{s+1} - 1`` (contiguous, sizes differing
by at most one) as a VecEnv of its own, stepped in its actor (by ``mujoco.rollout`` inside the
environment); the learner sends each shard its slice of the actions and gathers the results.

Learners see one batch of ``num_envs`` and need no change: inject it through
``train(..., make_env=sharded_make_env(workers, address))``. With a factory that seeds each
environment by its global index (``env_offset``), the gathered batch equals the local one.
"""

from __future__ import annotations

import contextlib
import inspect
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from sim2real.core.errors import InputError
from sim2real.core.ray_cluster import (
    RaySession,
    check_workers,
    connect,
    require_ray,
    unwrap_remote_error,
)
from sim2real.learn.vec import StepResult, VecEnv

ShardFactory = Callable[..., VecEnv]  # (env_id, num_envs, *, seed, dr, config[, env_offset])
READY_TIMEOUT_S = 120.0  # actors must be placed and have built their environments by then


def shard_bounds(num_envs: int, workers: int) -> list[tuple[int, int]]:
    """``workers`` contiguous (start, stop) ranges covering ``0 .. num_envs - 1``, the first
    ``num_envs % workers`` one longer: 10 over 3 -> (0, 4), (4, 7), (7, 10)."""
    base, extra = divmod(num_envs, workers)
    bounds, start = [], 0
    for s in range(workers):
        stop = start + base + (s < extra)
        bounds.append((start, stop))
        start = stop
    return bounds


def accepts_offset(factory: ShardFactory) -> bool:
    """True when ``factory`` takes ``env_offset`` (seeds environment i by its global index)."""
    try:
        return "env_offset" in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False


def shard_seed(seed: int | None, offset: int, with_offset: bool) -> int | None:
    """The seed a shard is built and reset with. With ``env_offset`` support: ``seed`` itself
    (the factory derives environment i's stream from (seed, i)); without: a seed of its own
    per shard, so shards do not repeat each other's draws (then the batch differs from the
    local one)."""
    if seed is None or with_offset or offset == 0:
        return seed
    return int(np.random.SeedSequence([seed, offset]).generate_state(1)[0])


def default_factory() -> ShardFactory:
    from sim2real.learn.envs import make_vec

    return make_vec


class Shard:
    """The body of one actor: a VecEnv of ``num_envs`` environments from global index
    ``offset`` on."""

    def __init__(self, factory, env_id, num_envs, offset, seed, dr, config) -> None:
        # an error here is kept for spec() to raise: Ray reports a failed constructor only as
        # "the actor died", without the cause
        self.error: Exception | None = None
        try:
            self._build(factory, env_id, num_envs, offset, seed, dr, config)
        except Exception as err:
            self.error = err

    def _build(self, factory, env_id, num_envs, offset, seed, dr, config) -> None:
        self.offset = offset
        self.with_offset = accepts_offset(factory)
        kw = {"env_offset": offset} if self.with_offset else {}
        seed = shard_seed(seed, offset, self.with_offset)
        self.env = factory(env_id, num_envs, seed=seed, dr=dr, config=config, **kw)

    def spec(self) -> dict[str, Any]:
        if self.error is not None:
            raise self.error
        e = self.env
        return {
            "env_id": e.env_id,
            "num_envs": e.num_envs,
            "action_dim": e.action_dim,
            "action_limit": np.asarray(e.action_limit),
            "control_dt": e.control_dt,
            "max_episode_steps": e.max_episode_steps,
            "obs_groups": dict(e.obs_groups),
            "reward_names": tuple(getattr(e, "reward_names", ())),
        }

    def reset(self, seed: int | None) -> dict[str, np.ndarray]:
        return self.env.reset(shard_seed(seed, self.offset, self.with_offset))

    def step(self, action: np.ndarray) -> StepResult:
        return self.env.step(action)

    def get_state(self) -> dict[str, Any]:
        return self.env.get_state()

    def set_state(self, state: dict[str, Any]) -> None:
        self.env.set_state(state)

    def close(self) -> None:
        close = getattr(self.env, "close", None)
        if callable(close):
            close()


def _cat(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate([np.asarray(p) for p in parts], axis=0)


def _cat_obs(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {name: _cat([p[name] for p in parts]) for name in parts[0]}


def gather(results: list[StepResult]) -> StepResult:
    """The shards' results side by side, in shard order (``info`` arrays concatenated)."""
    info = {}
    for key in results[0].info:
        values = [r.info[key] for r in results]
        if all(np.ndim(v) >= 1 for v in values):
            info[key] = _cat(values)
        else:  # a per-shard scalar: one per shard
            info[key] = values
    return StepResult(
        obs=_cat_obs([r.obs for r in results]),
        reward=_cat([r.reward for r in results]),
        terminated=_cat([r.terminated for r in results]),
        truncated=_cat([r.truncated for r in results]),
        final_obs=_cat_obs([r.final_obs for r in results]),
        info=info,
    )


class ShardedVecEnv:
    """``num_envs`` environments of ``env_id`` over ``workers`` Ray actors (one CPU each),
    on the cluster at ``address`` or a local Ray instance. ``count_bytes``: record what one
    step sends and receives (pickled sizes, as Ray serializes them) in :attr:`traffic`."""

    def __init__(
        self,
        env_id: str,
        num_envs: int,
        *,
        workers: int,
        seed: int = 0,
        dr: Any = "default",
        config: Any = None,
        address: str | None = None,
        factory: ShardFactory | None = None,
        count_bytes: bool = False,
    ) -> None:
        workers = check_workers(workers)
        if workers > num_envs:
            raise InputError(
                "--workers", None, f"{workers} workers for {num_envs} environments: give at most "
                f"{num_envs} (or more environments)",
            )  # fmt: skip
        if isinstance(dr, (str, Path)) and str(dr) != "default":
            from sim2real.learn.randomization import load_randomization

            dr = load_randomization(dr)  # read here: the file need not exist on other nodes
        self.actors: list = []
        self.session: RaySession = connect(address, workers=workers)
        self._closed = False
        import ray

        if self.session.cpus < workers:
            self.close()
            raise InputError(
                "--workers", None, f"{workers} workers need {workers} CPUs; the Ray cluster at "
                f"{address} has {self.session.cpus:g}",
            )  # fmt: skip
        self.bounds = shard_bounds(num_envs, workers)
        actor_cls = ray.remote(num_cpus=1, max_restarts=0)(Shard)
        factory = factory or default_factory()
        self.offset_seeding = accepts_offset(factory)
        self.actors = [
            actor_cls.remote(factory, env_id, stop - start, start, seed, dr, config)
            for start, stop in self.bounds
        ]
        try:
            specs = ray.get([a.spec.remote() for a in self.actors], timeout=READY_TIMEOUT_S)
        except ray.exceptions.GetTimeoutError:
            self.close()
            raise InputError(
                "--workers", None, f"the {workers} Ray workers were not ready within "
                f"{READY_TIMEOUT_S:.0f} s (too few free CPUs on the cluster?)",
            ) from None  # fmt: skip
        except ray.exceptions.RayError as err:
            self.close()
            raise unwrap_remote_error(err) from None
        spec = specs[0]
        self.env_id: str = spec["env_id"]
        self.num_envs = int(num_envs)
        self.action_dim: int = spec["action_dim"]
        self.action_limit: np.ndarray = spec["action_limit"]
        self.control_dt: float = spec["control_dt"]
        self.max_episode_steps: int = spec["max_episode_steps"]
        self.obs_groups = spec["obs_groups"]
        self.reward_names: tuple[str, ...] = spec["reward_names"]
        self.workers = workers
        self.count_bytes = count_bytes
        self.traffic: dict[str, int] = {"steps": 0, "sent_bytes": 0, "received_bytes": 0}

    def _get(self, refs: list) -> list:
        import ray

        return ray.get(refs)

    def reset(self, seed: int | None = None) -> dict[str, np.ndarray]:
        return _cat_obs(self._get([a.reset.remote(seed) for a in self.actors]))

    def step(self, action: np.ndarray) -> StepResult:
        action = np.asarray(action).reshape(self.num_envs, -1)
        chunks = [np.ascontiguousarray(action[lo:hi]) for lo, hi in self.bounds]
        results = self._get([a.step.remote(c) for a, c in zip(self.actors, chunks, strict=True)])
        if self.count_bytes:
            self.traffic["steps"] += 1
            self.traffic["sent_bytes"] += sum(len(pickle.dumps(c, protocol=5)) for c in chunks)
            self.traffic["received_bytes"] += sum(len(pickle.dumps(r, protocol=5)) for r in results)
        return gather(results)

    def get_state(self) -> dict[str, Any]:
        return {
            "env_id": self.env_id,
            "bounds": list(self.bounds),
            "shards": self._get([a.get_state.remote() for a in self.actors]),
        }

    def set_state(self, state: dict[str, Any]) -> None:
        if state.get("env_id") != self.env_id:
            raise ValueError(f"state of {state.get('env_id')!r}, not {self.env_id!r}")
        if "shards" not in state:
            raise InputError("--workers", None, "the run was trained without Ray workers: "
                             "resume it without --workers")  # fmt: skip
        bounds = [tuple(b) for b in state["bounds"]]
        if bounds != self.bounds:
            raise InputError(
                "--workers", None, f"the run was trained over {len(bounds)} Ray workers "
                f"(environments {bounds}), not {len(self.bounds)}: resume with --workers "
                f"{len(bounds)}",
            )  # fmt: skip
        self._get(
            [a.set_state.remote(s) for a, s in zip(self.actors, state["shards"], strict=True)]
        )

    def close(self) -> None:
        """Stop the actors (and the local Ray instance, if this environment started it)."""
        if self._closed:
            return
        self._closed = True
        import ray

        with contextlib.suppress(Exception):  # an actor already gone has nothing to release
            ray.get([a.close.remote() for a in self.actors], timeout=10)
        for a in self.actors:
            ray.kill(a)
        self.actors = []
        self.session.shutdown()

    def __del__(self) -> None:  # a run that raised still frees its actors
        try:
            if not getattr(self, "_closed", True):
                self.close()
        except Exception:
            pass


def sharded_make_env(
    workers: int, address: str | None = None, factory: ShardFactory | None = None
) -> Callable[..., ShardedVecEnv]:
    """A ``make_env`` for :func:`sim2real.learn.train.train`: the same signature as
    :func:`sim2real.learn.envs.make_vec`, environments over ``workers`` Ray actors."""
    check_workers(workers)
    require_ray("--address" if address else "--workers")  # before any work

    def make_env(env_id: str, num_envs: int, **kw: Any) -> ShardedVecEnv:
        return ShardedVecEnv(
            env_id, num_envs, workers=workers, address=address, factory=factory, **kw
        )

    return make_env
