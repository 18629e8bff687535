"""Independent jobs (the seeds of a sweep, the cells of an evaluation grid) as Ray tasks:
zero-argument picklable callables in, their results out in the same order (the local runner
is :func:`sim2real.core.local_jobs.local_runner`). Generic: learn (seed sweeps, evaluation
grids) and detect (dataset frame ranges) use it.

On a multi-node cluster a job runs on whichever node has a free CPU: what it reads and writes
(a run folder) must be on a filesystem every node sees at the same path."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sim2real.core.ray_cluster import (
    check_workers,
    connect,
    require_ray,
    unwrap_remote_error,
)

Job = Callable[[], Any]


def _call(job: Job) -> Any:
    return job()


Progress = Callable[[int, int], None]


def run_on_ray(
    jobs: Sequence[Job],
    *,
    address: str | None = None,
    workers: int = 1,
    cpus_per_job: float = 1,
    progress: Progress | None = None,
) -> list[Any]:
    """Every job as a Ray task of ``cpus_per_job`` CPUs (Ray runs as many side by side as the
    cluster's CPUs allow; a local instance gets ``workers`` CPUs at least); results in order.
    A job's own error is raised as itself (an InputError stays one line), as soon as it ends.
    ``progress(done, total)`` as jobs end (what a job says itself stays in its worker's log)."""
    check_workers(workers)
    session = connect(address, workers=workers)
    try:
        import ray

        task = ray.remote(num_cpus=cpus_per_job, max_retries=0)(_call)
        refs = [task.remote(job) for job in jobs]
        try:
            pending = list(refs)
            while pending:
                ended, pending = ray.wait(pending, num_returns=1)
                ray.get(ended)  # a failed job: its error now, not after the others
                if progress is not None:
                    progress(len(refs) - len(pending), len(refs))
            return ray.get(refs)
        except ray.exceptions.RayTaskError as err:
            raise unwrap_remote_error(err) from None
    finally:
        session.shutdown()


def ray_runner(
    address: str | None = None,
    *,
    workers: int = 1,
    cpus_per_job: float = 1,
    progress: Progress | None = None,
) -> Callable[[Sequence[Job]], list[Any]]:
    """A job runner (e.g. ``sim2real.learn.seeds.train_seeds``'s ``run_jobs=``) running each
    job as a Ray task; ``progress(done, total)`` as they end."""
    check_workers(workers)
    require_ray("--address" if address else "--workers")  # before any work

    def run(jobs: Sequence[Job]) -> list[Any]:
        return run_on_ray(
            jobs, address=address, workers=workers, cpus_per_job=cpus_per_job, progress=progress
        )

    return run
