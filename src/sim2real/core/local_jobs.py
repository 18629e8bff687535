"""Independent jobs (the seeds of a sweep, the cells of an evaluation grid) in local worker
processes: zero-argument picklable callables in, their results out in the same order (the
same contract as :func:`sim2real.core.ray_jobs.run_on_ray`). A job may say how far it is
(:func:`report_share`): the runner's progress then moves while the jobs run, not only as each
ends."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any

from sim2real.core.stop_request import StoppedError, follow_parent_stop, stop_requested

JobRunner = Callable[[Sequence[Callable[[], Any]]], list[Any]]
"""Runs zero-argument jobs, returns their results in order (locally, or as Ray tasks)."""

POLL_S = 0.5
"""How often the parent reads the running jobs' shares."""

_job_shares = None  # in a pool's worker: the pool's shared array of each job's share done
_job_index = -1  # in a pool's worker: the index of the job it runs


def report_share(share: float) -> None:
    """In a pool's worker: the share (0 to 1) of its job done so far, which the parent's
    progress adds while the job runs; elsewhere nothing (a job run in its caller's process
    reports through its own progress)."""
    if _job_shares is not None and _job_index >= 0:
        _job_shares[_job_index] = min(max(float(share), 0.0), 1.0)


def local_runner(workers: int, progress: Callable[[float, int], None] | None = None) -> JobRunner:
    """Jobs in ``workers`` processes (1: in this process, in order); ``progress(done, total)``:
    the jobs ended, plus the shares the running ones report (:func:`report_share`), read every
    ``POLL_S`` and as each ends. On Ctrl-C, or when a job fails, the workers' trainings stop at
    the end of their iteration, saved (``core.stop_request``), the jobs not begun are not
    begun, and the KeyboardInterrupt or the job's error is raised once all have stopped."""

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
        shares = context.Array("d", len(jobs), lock=False)  # one writer a slot: its job
        with ProcessPoolExecutor(min(workers, len(jobs)), mp_context=context,
                                 initializer=_start_worker, initargs=(stop, shares)) as pool:  # fmt: skip
            futures = [pool.submit(_call, job, k) for k, job in enumerate(jobs)]
            try:
                pending = set(futures)
                while pending:
                    ended, pending = wait(pending, POLL_S, return_when=FIRST_COMPLETED)
                    for future in ended:
                        future.result()  # a failed job: its error now
                    if progress is not None:
                        progress(_done(futures, pending, shares), len(futures))
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


def _done(futures: list, pending: set, shares) -> float:
    """The jobs ended, and the reported shares of the others."""
    return float(sum(1.0 if f not in pending else shares[k] for k, f in enumerate(futures)))


def _start_worker(stop, shares) -> None:
    global _job_shares
    follow_parent_stop(stop)
    _job_shares = shares


def _call(job: Callable[[], Any], index: int) -> Any:
    global _job_index
    if stop_requested():  # queued before a Ctrl-C: not begun
        raise StoppedError(None, None, "not begun: stopped (Ctrl-C)")
    _job_index = index
    return job()
