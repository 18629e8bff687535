"""Randomized frames rendered away from the caller: a dataset's frame ranges as Ray tasks
(``render_range``), and any per-frame task (writing a dataset's files, keeping frames in
memory for training) over frame chunks in local worker processes (``render_in_processes``).

Each worker holds one SampleRenderer per dataset. Local workers are forked from the caller
on Linux, so they start with the caller's renderer (its texture bank takes a
second to build) instead of building their own. Frame i depends on (seed, i) alone: which
worker renders it does not change its bytes."""

from __future__ import annotations

import multiprocessing
import sys
from collections.abc import Callable
from pathlib import Path

from sim2real.core.stop_request import follow_parent_stop, stop_requested

CHUNK_FRAMES = 4
"""Frames per task of a local worker: small enough for a smooth progress bar and a quick stop,
large enough that handing out tasks costs nothing beside rendering (~15-30 ms a frame)."""

_renderers: dict[tuple[str, str, int], object] = {}
_worker: dict[str, object] = {}  # a local worker's renderer and per-frame task


def worker_renderer(model: str, cfg_json: str, seed: int, part=None):
    """The SampleRenderer of dataset (model, config JSON, seed), built once per process
    (``part``: the loaded model when the caller has it). One dataset's renderer at a time."""
    key = (model, cfg_json, int(seed))
    if key not in _renderers:
        from sim2real.detect.render_rgbd import SampleRenderer, load_part_model
        from sim2real.detect.scene_config import SceneConfig

        cfg = SceneConfig.model_validate_json(cfg_json)
        renderer = SampleRenderer(part if part is not None else load_part_model(model), cfg, seed)
        _renderers.clear()
        _renderers[key] = renderer
    return _renderers[key]


def write_sample(out: Path, renderer, index: int) -> tuple:
    """Render frame ``index`` and write its files; its labels (T_cam_part, camera) for
    scene_gt / scene_camera."""
    from sim2real.detect.bop_writer import write_frame

    sample = renderer.sample(index)
    write_frame(out, index, sample)
    return sample.T_cam_part, sample.camera


def render_range(model: str, cfg_json: str, seed: int, out: str, indices: list[int]) -> dict:
    """Render and write frames ``indices`` (a Ray task): their labels by index."""
    renderer = worker_renderer(model, cfg_json, seed)
    renderer.cast_threads = 1  # a task of one CPU
    return {i: write_sample(Path(out), renderer, i) for i in indices}


def _start_worker(key: tuple[str, str, int], task: Callable, stop, started) -> None:
    follow_parent_stop(stop)  # Ctrl-C is the caller's: it sets ``stop``
    with started.get_lock():  # more starts than workers: the pool replaced one that died
        started.value += 1
    renderer = worker_renderer(*key)
    renderer.cast_threads = 1  # the workers fill the cores: threads within each only contend
    _worker.update(renderer=renderer, task=task)


def _render_chunk(indices: list[int]) -> dict:
    """``task`` of frames ``indices`` in a local worker, stopping before the next frame once
    told: the values of those done, by index."""
    done = {}
    for i in indices:
        if stop_requested():
            break
        done[i] = _worker["task"](_worker["renderer"], i)
    return done


def chunks(indices: list[int], tasks: int, most: int | None = None) -> list[list[int]]:
    """``indices`` in order, cut into about ``tasks`` runs of equal length, each at most
    ``most`` frames long (fewer, longer runs when there are too few frames)."""
    size = max(1, -(-len(indices) // max(tasks, 1)))
    size = min(size, most) if most else size
    return [indices[k : k + size] for k in range(0, len(indices), size)]


def render_in_processes(
    key: tuple[str, str, int],
    todo: list[int],
    processes: int,
    task: Callable,
    results: dict,
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """``task(renderer, index)`` of every frame of ``todo`` in ``processes`` worker processes,
    each with the renderer of ``key`` (model, config JSON, seed; built here first, see
    ``worker_renderer``; ``task`` a module-level function or a partial of one); the values
    into ``results`` by index, ``progress(done, total)`` after each chunk. On an error or an
    interrupt here (KeyboardInterrupt, also from ``progress``) every worker finishes the frame
    it is on and stops, then the error is raised: no file is left half-written."""
    # fork on Linux (the workers start with this process's renderer); spawn elsewhere (macOS
    # system libraries do not survive a fork), each worker then building its own
    context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    stop, started = context.Event(), context.Value("i", 0)
    pool = context.Pool(processes, initializer=_start_worker, initargs=(key, task, stop, started))
    parts = chunks(todo, processes, CHUNK_FRAMES)
    frames, received = pool.imap_unordered(_render_chunk, parts), 0
    try:
        while received < len(parts):
            results.update(_next_chunk(frames, started, processes))
            received += 1
            if progress is not None:
                progress(len(results), len(todo))
    except BaseException:
        stop.set()  # the chunks left end at the frame they are on: no file is half-written
        while received < len(parts) - _lost_workers(started, processes):  # a dead worker's
            try:  # chunk never comes back
                frames.next(timeout=1.0)
                received += 1
            except multiprocessing.TimeoutError:
                continue
        pool.terminate()  # a lost chunk would keep close() + join() waiting
        pool.join()
        raise
    pool.close()
    pool.join()


def _next_chunk(frames, started, processes: int) -> dict:
    """The next chunk done; raises once a worker died (the out-of-memory killer, a crash): a
    multiprocessing.Pool replaces it but never completes its chunk. (A ProcessPoolExecutor
    raises by itself, but its hand-over thread, short of CPU beside the busy workers, cost
    about 10 % of the frames a second.)"""
    while True:
        try:
            return frames.next(timeout=1.0)
        except multiprocessing.TimeoutError:
            if _lost_workers(started, processes):
                raise WorkerLostError("a frame worker process ended mid-chunk (killed? out of "
                                      "memory?): its frames are lost") from None  # fmt: skip


def _lost_workers(started, processes: int) -> int:
    """Workers that died: the pool starts a replacement for each (its start is counted)."""
    return max(started.value - processes, 0)


class WorkerLostError(RuntimeError):
    """A local worker process ended without its results."""
