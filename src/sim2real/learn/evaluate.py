"""Transfer evaluation: a policy's success rate and return in its training conditions and in
each reality (:mod:`sim2real.learn.reality`), episodes run in parallel environments.

Episodes start as the task says (a training-only start distribution of the policy's
environment config is dropped). Every environment of a batch starts together and contributes
its first episodes up to an equal share (``ceil(episodes / num_envs)``), so episodes that end
early by a termination do not outnumber those that run to the time limit. Seeds are fixed, so
two policies evaluated in the same reality meet the same draws of its parameters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from sim2real.core.local_jobs import report_share
from sim2real.core.stop_request import StoppedError, stop_requested
from sim2real.learn.envs.task import task_config
from sim2real.learn.reality import Reality, load_reality, reality_env

TRAINING = "training conditions"


@dataclass
class EvalResult:
    """Per-episode returns and successes in one world."""

    world: str
    returns: np.ndarray
    successes: np.ndarray
    skipped: str = ""
    """Why the policy could not run in this world (then no episodes)."""
    metrics: Any = None
    """The task's extra episode metrics (``Task.episode_metrics``) of these episodes, with
    ``to_dict()`` and ``lines()``; None when the task declares none."""

    @property
    def success_rate(self) -> float:
        return float(self.successes.mean()) if len(self.successes) else float("nan")

    @property
    def mean_return(self) -> float:
        return float(self.returns.mean()) if len(self.returns) else float("nan")

    def to_dict(self) -> dict:
        if self.skipped:
            return {"world": self.world, "episodes": 0, "skipped": self.skipped}
        return {
            "world": self.world,
            "episodes": len(self.returns),
            "success_rate": self.success_rate,
            "mean_return": self.mean_return,
            "std_return": float(self.returns.std()),
            **(self.metrics.to_dict() if self.metrics is not None else {}),
        }

    def details(self) -> list[str]:
        """The task's extra metrics, one line each (none without)."""
        return self.metrics.lines() if self.metrics is not None and not self.skipped else []

    def line(self) -> str:
        if self.skipped:
            return f"{self.world}: skipped ({self.skipped})"
        return (
            f"{self.world}: success {100 * self.success_rate:.1f} % of {len(self.returns)}, "
            f"return {self.mean_return:.1f} ± {self.returns.std():.1f}"
        )


def run_policy(
    policy, env, episodes: int, seed: int, world: str, progress=None, should_stop=None
) -> EvalResult:
    """``episodes`` episodes of ``policy`` (``act(obs) -> actions``) in ``env``; skipped when
    a group the actor reads has another size there (a teacher's privileged group follows the
    world's parameters, e.g. an actuator model adds its own). A task that declares
    ``episode_metrics`` has them recorded over the same episodes. ``progress(done)``: the
    episodes done so far, as they end. ``should_stop()`` true: StoppedError at the next step
    (a grid's cell in a worker process whose parent took a Ctrl-C)."""
    groups = getattr(policy, "obs_groups", None) or {}
    for name in getattr(getattr(policy, "roles", None), "actor", ()):
        have, need = env.obs_groups[name].dim, groups[name].dim
        if have != need:
            why = f"the actor reads {need} '{name}' values, this world gives {have}"
            return EvalResult(world, np.zeros(0), np.zeros(0, dtype=bool), skipped=why)
    # Each environment contributes its first episodes up to an equal quota: with episodes that
    # end early (a termination), counting the first to finish would over-count quick failures.
    quota = -(-episodes // env.num_envs)
    taken = np.zeros(env.num_envs, dtype=int)
    returns: list[float] = []
    successes: list[float] = []
    spec = getattr(getattr(env, "task", None), "episode_metrics", None)
    recorder = spec.recorder(env, episodes) if spec is not None else None
    obs = env.reset(seed=seed)
    while len(returns) < episodes:
        if should_stop is not None and should_stop():
            raise StoppedError(None, None, "stopped (Ctrl-C)")
        if recorder is not None:
            recorder.before_step(env)
        result = env.step(policy.act(obs))
        obs = result.obs
        done = ~np.isnan(result.info["episode_return"]) & (taken < quota)
        if recorder is not None:
            recorder.after_step(env, result, done)
        taken += done
        returns += result.info["episode_return"][done].tolist()
        successes += result.info["episode_success"][done].tolist()
        if progress is not None and done.any():
            progress(min(len(returns), episodes))
    metrics = recorder.result() if recorder is not None else None
    return EvalResult(
        world, np.array(returns[:episodes]), np.array(successes[:episodes]) > 0.5, "", metrics
    )


def evaluate_policy(
    policy,
    realities: list[Reality],
    *,
    episodes: int = 100,
    seed: int = 1,
    num_envs: int = 50,
    training: bool = True,
    progress=None,
    should_stop=None,
) -> list[EvalResult]:
    """Evaluate in the training conditions (the policy's environment and randomization) and
    in each reality; ``progress(done)``: the episodes done so far, over all of them;
    ``should_stop``: :func:`run_policy`'s."""
    from sim2real.learn.envs import make_vec

    n = max(1, min(num_envs, episodes))
    out = []
    with one_torch_thread():
        if training:
            config = task_config(policy.env_config)
            env = make_vec(policy.env_id, n, seed=seed, dr=policy.dr, config=config)
            report = _after(progress, 0)
            out.append(run_policy(policy, env, episodes, seed, TRAINING, report, should_stop))
        for reality in realities:
            env = reality_env(reality, policy.env_id, task_config(policy.env_config), n, seed)
            report = _after(progress, len(out) * episodes)
            out.append(run_policy(policy, env, episodes, seed, reality.name, report, should_stop))
    return out


@contextmanager
def one_torch_thread() -> Iterator[None]:
    """Within: torch on one thread. A policy's small network on a batch of tens: more threads
    only spin-wait (10x slower evaluation; on two cores they take the other's)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _after(progress, offset: int):
    """``progress(done)`` of a later part of one count: ``offset`` done before it."""
    return progress and (lambda done: progress(offset + done))


def cells_progress(progress, per_cell: int, done: float, total: int) -> None:
    """``progress(done, total, where)`` of a grid counted in ``per_cell`` units a cell, from
    the cells done in worker processes (the running ones' shares included)."""
    cells = f"{done:.1f}".removesuffix(".0")  # 1.5 while half of a second cell is done
    progress(done * per_cell, total * per_cell, f"{cells} of {total} cells evaluated")


def share_of_cell(episodes: int, done: int) -> None:
    """A cell's ``progress(done)`` in a worker process: its share of ``episodes`` done."""
    report_share(done / episodes)


def cell_name(run, world: str) -> str:
    """A grid's cell as its progress names it: ``seed-2: bench-span``."""
    return f"{Path(run).name}: {world}"


def cell_progress(progress, offset: float, total: float, where: str, done: float) -> None:
    """``progress(done, total, where)`` of the grid, from one cell's own count ``done``
    (``offset`` done before the cell)."""
    progress(offset + done, total, where)


def load_runs_and_worlds(
    runs: list[Path], realities: list[str], env_id: str | None = None
) -> tuple[list, list[Reality]]:
    """The trained runs' policies (each must be for ``env_id`` when given) and the worlds to
    judge them in (YAML paths or shipped names; none given: the task's evaluation worlds,
    :mod:`sim2real.learn.reality_sets`), all loaded before any episode runs so a bad input
    fails first."""
    from sim2real.learn.policy import load_policy
    from sim2real.learn.reality_sets import reality_sets

    loaded = [load_policy(p, expected_env_id=env_id) for p in runs]
    if not realities and loaded:
        realities = reality_sets(loaded[0].env_id).evaluation
    return loaded, [load_reality(r) for r in realities]


def evaluate_runs(
    runs: list[Path],
    realities: list[str],
    *,
    env_id: str | None = None,
    episodes: int = 100,
    seed: int = 1,
    run_jobs: Callable[[list[Callable[[], Any]]], list[Any]] | None = None,
    processes: int = 1,
    progress: Callable[[int, int, str], None] | None = None,
) -> tuple[dict[str, list[EvalResult]], list[Reality]]:
    """Each trained run (its folder) in its training conditions and in every reality (YAML
    paths or shipped names; none given: the task's evaluation worlds,
    :mod:`sim2real.learn.reality_sets`), all loaded before any episode runs so a bad input
    fails first; ``env_id``: the environment every run must be for. Returns the results by
    run and the realities. ``run_jobs``: runs the grid's cells (one per run and world, each
    seeded alike, so the figures do not depend on it), e.g. as Ray tasks
    (:func:`sim2real.core.ray_jobs.ray_runner`); default: in ``processes`` local worker
    processes (1: here, in order). ``progress(done, total, where)``: the episodes done over
    the grid, as they end (in local worker processes: read twice a second; as Ray tasks: as
    their cells end)."""
    loaded, worlds = load_runs_and_worlds(runs, realities, env_id)
    cells, where = [], []
    # in a local worker: stop at the next step once the parent took a Ctrl-C
    kw = {"episodes": episodes, "seed": seed, "should_stop": stop_requested}
    # in a worker process a cell says how far it is (the caller's own progress replaces this)
    kw["progress"] = partial(share_of_cell, episodes)
    for path, policy in zip(runs, loaded, strict=True):
        cells.append(partial(evaluate_policy, policy, [], **kw))
        cells += [partial(evaluate_policy, policy, [w], training=False, **kw) for w in worlds]
        where += [cell_name(path, name) for name in [TRAINING, *(w.name for w in worlds)]]
    if run_jobs is None and processes > 1 and len(cells) > 1:
        from sim2real.core.local_jobs import local_runner

        run_jobs = local_runner(processes, progress and partial(cells_progress, progress, episodes))
    if run_jobs is not None:
        done = run_jobs(cells)
    else:
        total = len(cells) * episodes
        done = [
            cell(progress=progress and partial(cell_progress, progress, k * episodes, total, w))
            for k, (cell, w) in enumerate(zip(cells, where, strict=True))
        ]
    per = 1 + len(worlds)
    results = {
        str(path): [r for cell in done[k * per : (k + 1) * per] for r in cell]
        for k, path in enumerate(runs)
    }
    return results, worlds
