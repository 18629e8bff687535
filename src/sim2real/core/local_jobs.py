"""Independent jobs (the seeds of a sweep, the cells of an evaluation grid) in local worker
processes: zero-argument picklable callables in, their results out in the same order (the
same contract as :func:`sim2real.core.ray_jobs.run_on_ray`)."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed, wait
from typing import Any

from sim2real.core.stop_request import StoppedError, follow_parent_stop, stop_requested

JobRunner = Callable[[Sequence[Callable[[], Any]]], list[Any]]
"""Runs zero-argument jobs, returns their results in order (locally, or as Ray tasks)."""


def local_runner(workers: int, progress: Callable[[int, int], None] | None = None) -> JobRunner:
    """Jobs in ``workers`` processes (1: in this process, in order); ``progress(done, total)``
    as each ends. On Ctrl-C, or when a job fails, the workers' trainings stop at the end of
    their iteration, saved (``core.stop_request``), the jobs not begun are not begun, and the
    KeyboardInterrupt or the job's error is raised once all have stopped."""

    def run(jobs: Sequence[Callable[[], Any]]) -> list[Any]:
        if workers <= 1 or len(jobs) <= 1:
            results = []
            for job in jobs:
                results.append(job())
                if progress is not None:
                    progress(len(results), len(jobs))
            return results
        context = worker_context()
        stop = context.Event()
        with ProcessPoolExecutor(min(workers, len(jobs)), mp_context=context,
                                 initializer=follow_parent_stop, initargs=(stop,)) as pool:  # fmt: skip
            futures = [pool.submit(_call, job) for job in jobs]
            try:
                for done, future in enumerate(as_completed(futures), 1):
                    future.result()  # a failed job: its error now
                    if progress is not None:
                        progress(done, len(futures))
                return [f.result() for f in futures]
            except BaseException:  # Ctrl-C, or a job's error: the others stop too
                stop.set()
                wait(futures)
                raise

    return run


def worker_context() -> multiprocessing.context.BaseContext:
    """The start method of our worker pools: ``forkserver`` (``spawn`` where there is none).
    The workers are forked from a fresh server process, not from this one: a fork of a process
    whose other threads hold locks (torch's pool, a Ray driver's gRPC threads, pytest-xdist's
    channel reader) can leave the child waiting on a lock forever, and a forked child keeps
    this process's pipes open. Python 3.14 makes the same choice by default on Linux."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def _call(job: Callable[[], Any]) -> Any:
    if stop_requested():  # queued before a Ctrl-C: not begun
        raise StoppedError(None, None, "not begun: stopped (Ctrl-C)")
    return job()
