"""A dataset's frames rendered away from the caller: frame ranges as Ray tasks
(``render_range``) and frame chunks in local worker processes (``render_in_processes``).

Each worker holds one SampleRenderer per dataset. Local workers are forked from the caller
on Linux, so they start with the caller's renderer (its texture bank takes a
second to build) instead of building their own. Frame i depends on (seed, i) alone: which
worker renders it does not change its bytes."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

CHUNK_FRAMES = 4
"""Frames per task of a local worker: small enough for a smooth progress bar and a quick stop,
large enough that handing out tasks costs nothing beside rendering (~15-30 ms a frame)."""

_renderers: dict[tuple[str, str, int], object] = {}
_worker: dict[str, object] = {}  # a local worker's renderer, output folder and stop event


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity where the platform tells)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


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


Labels = dict[int, tuple]
"""Frame index -> (T_cam_part, camera) of the frames a task wrote (scene_gt / scene_camera)."""


def write_sample(out: Path, renderer, index: int, labels: Labels) -> None:
    """Render frame ``index``, write its files, keep its labels."""
    from sim2real.detect.bop_writer import write_frame

    sample = renderer.sample(index)
    write_frame(out, index, sample)
    labels[index] = (sample.T_cam_part, sample.camera)


def render_range(model: str, cfg_json: str, seed: int, out: str, indices: list[int]) -> Labels:
    """Render and write frames ``indices`` (a Ray task): their labels."""
    renderer, labels = worker_renderer(model, cfg_json, seed), {}
    renderer.cast_threads = 1  # a task of one CPU
    for i in indices:
        write_sample(Path(out), renderer, i, labels)
    return labels


def _start_worker(key: tuple[str, str, int], out: str, stop) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the caller's: it sets ``stop``
    renderer = worker_renderer(*key)
    renderer.cast_threads = 1  # the workers fill the cores: threads within each only contend
    _worker.update(renderer=renderer, out=Path(out), stop=stop)


def _render_chunk(indices: list[int]) -> Labels:
    """Frames ``indices`` in a local worker, stopping before the next frame once told: the
    labels of those written."""
    labels: Labels = {}
    for i in indices:
        if _worker["stop"].is_set():
            break
        write_sample(_worker["out"], _worker["renderer"], i, labels)
    return labels


def chunks(indices: list[int], processes: int) -> list[list[int]]:
    """``indices`` in order, cut into tasks of at most CHUNK_FRAMES frames (fewer when there
    are too few frames to give every process some)."""
    size = max(1, min(CHUNK_FRAMES, -(-len(indices) // max(processes, 1))))
    return [indices[k : k + size] for k in range(0, len(indices), size)]


def render_in_processes(
    key: tuple[str, str, int],
    out: Path,
    todo: list[int],
    processes: int,
    labels: Labels,
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """Frames ``todo`` of dataset ``key`` (model, config JSON, seed; its renderer already
    built here, see ``worker_renderer``) written into ``out`` by ``processes`` worker
    processes, their labels into ``labels``; ``progress(done, total)`` after each task. On
    an error or an interrupt here (KeyboardInterrupt, also from ``progress``) every worker
    finishes the frame it is on and stops, then the error is raised: no file is left
    half-written."""
    # fork on Linux (the workers start with this process's renderer); spawn elsewhere (macOS
    # system libraries do not survive a fork), each worker then building its own
    context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    stop = context.Event()
    pool = context.Pool(processes, initializer=_start_worker, initargs=(key, str(out), stop))
    try:
        for written in pool.imap_unordered(_render_chunk, chunks(todo, processes)):
            labels.update(written)
            if progress is not None:
                progress(len(labels), len(todo))
    except BaseException:
        stop.set()
        pool.close()
        pool.join()  # the tasks left end at once: nothing is killed half-way through a file
        raise
    pool.close()
    pool.join()
