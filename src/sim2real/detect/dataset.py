"""``sim2real detect dataset``: a randomized RGB-D dataset of a part in BOP layout
(bop_writer), resumable and shardable.

Frame i depends on (seed, i) alone, so an interrupted run continues where it stopped (frames
whose files are all there are kept) and a run spread over local worker processes or Ray
workers (each rendering its own frames into the same folder, frame_workers) writes the same
bytes as a run in one process. ``config.yaml`` holds the resolved config, the seed, the frame
count and the part's identity; a folder holding a dataset of another config is refused, not
mixed. Labels (scene_gt.json, scene_camera.json) are rewritten whole at the end: the frames
rendered now from their samples, those already there from their draws (no rendering)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import yaml

from sim2real.core.atomic import check_writable, write_text_atomic
from sim2real.core.errors import InputError
from sim2real.core.yaml_io import read_yaml_mapping
from sim2real.detect.bop_writer import frame_done, write_labels
from sim2real.detect.scene_config import SceneConfig, load_scene_config

CONFIG_FILE = "config.yaml"
CHUNKS_PER_WORKER = 4  # frame ranges per Ray worker (a slow range does not hold up the rest)


@dataclass
class DatasetResult:
    out: Path
    frames: int
    rendered: int
    """Frames rendered by this run (the others were already there)."""
    seconds: float

    @property
    def frames_per_s(self) -> float:
        return self.rendered / self.seconds if self.seconds > 0 else 0.0

    def summary(self) -> str:
        kept = self.frames - self.rendered
        resumed = f", {kept} already there" if kept else ""
        return (
            f"wrote {self.rendered} frames to {self.out} ({self.frames} in all{resumed}) in "
            f"{self.seconds:.1f} s, {self.frames_per_s:.1f} frames/s"
        )


def _resolved(model: Path, mesh, frames: int, seed: int, cfg: SceneConfig) -> dict:
    from sim2real.detect.detector import mesh_hash

    return {
        "model": str(model),
        "model_sha256": mesh_hash(mesh),
        "seed": seed,
        "frames": frames,
        "scene": cfg.model_dump(mode="json"),
    }


def _check_same_dataset(out: Path, resolved: dict) -> None:
    """A folder that is not empty must hold a dataset of the same config (frames may differ)."""
    if not out.exists() or not any(out.iterdir()):
        return
    path = out / CONFIG_FILE
    if not path.is_file():
        raise InputError(
            out, "--out", "exists and holds no dataset (no config.yaml): choose another"
        )
    old = read_yaml_mapping(path, "dataset config")
    for key in ("model_sha256", "seed", "scene"):
        if old.get(key) != resolved[key]:
            what = {"model_sha256": "another part", "seed": "another seed"}.get(
                key, "another config"
            )
            raise InputError(path, key, f"holds a dataset of {what}: choose another --out")
    before, now = int(old.get("frames", 0)), int(resolved["frames"])
    if now < before:  # its labels would be rewritten for fewer frames than its images
        why = f"holds {before} frames: --frames {now} would leave images without labels"
        raise InputError(path, "frames", why + f" (give --frames >= {before}, or another --out)")


def generate_dataset(
    model: str | Path,
    out: str | Path,
    frames: int,
    *,
    seed: int = 0,
    config: SceneConfig | str | Path | None = None,
    processes: int | None = None,
    workers: int = 0,
    address: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> DatasetResult:
    """Render ``frames`` randomized frames of ``model`` (a mesh file or MODEL_DIR) into ``out``.
    ``config``: a SceneConfig or its YAML (None: defaults). ``processes``: worker processes on
    this machine (None: one per usable core; 1: in this process). ``workers`` >= 1 or
    ``address``: frame ranges as Ray tasks instead (a local Ray of ``workers`` CPUs, or the
    cluster at ``address``, whose nodes must see ``out`` at the same path).
    ``progress(done, total)`` as locally rendered frames are written. Bad input (a mesh without
    faces, an unwritable ``out``, a frame count < 1, a config field) is an InputError before
    anything is written."""
    from sim2real.core.cores import usable_cores
    from sim2real.detect.frame_workers import worker_renderer, write_sample
    from sim2real.detect.render_rgbd import load_part_model

    if isinstance(frames, bool) or int(frames) != frames or frames < 1:
        raise InputError("--frames", None, f"{frames}: give a number of frames >= 1")
    if workers < 0:
        raise InputError("--workers", None, f"{workers}: give 0 (no Ray) or a number >= 1")
    if processes is not None and processes < 1:
        raise InputError("--processes", None, f"{processes}: give a number >= 1")
    processes = usable_cores() if processes is None else int(processes)
    model, out = Path(model), Path(out)
    cfg = load_scene_config(config) if isinstance(config, str | Path) else config or SceneConfig()
    part = load_part_model(model)
    check_writable(out, "--out", folder=True)
    resolved = _resolved(model.resolve(), part.mesh, int(frames), int(seed), cfg)
    _check_same_dataset(out, resolved)
    key = (str(model.resolve()), cfg.model_dump_json(), int(seed))
    try:  # the texture bank, the sensor profile; forked workers start with this one
        renderer = worker_renderer(*key, part=part)
    except ValueError as exc:  # a camera that does not scale to the image size
        raise InputError(
            config if isinstance(config, str | Path) else None, None, str(exc)
        ) from None
    if workers or address:
        from sim2real.core.ray_cluster import check_workers, require_ray

        check_workers(max(workers, 1))
        require_ray("--address" if address else "--workers")
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / CONFIG_FILE, yaml.safe_dump(resolved, sort_keys=False))
    todo = [i for i in range(int(frames)) if not frame_done(out, i)]
    t0 = time.perf_counter()
    labels: dict[int, tuple] = {}
    try:
        if todo and (workers or address):
            labels = _render_on_ray(key, out, todo, workers, address)
        elif processes > 1 and len(todo) > 1:
            from sim2real.detect.frame_workers import render_in_processes

            task = partial(write_sample, out)
            render_in_processes(key, todo, min(processes, len(todo)), task, labels, progress)
        else:
            for i in todo:
                labels[i] = write_sample(out, renderer, i)
                if progress is not None:
                    progress(len(labels), len(todo))
    except KeyboardInterrupt:
        done = sum(frame_done(out, i) for i in todo)
        raise InputError(
            out, None, f"interrupted after {done} of {len(todo)} frames: the same command resumes"
        ) from None
    seconds = time.perf_counter() - t0
    for i in range(int(frames)):  # frames already there: their draws alone (no rendering)
        if i not in labels:
            labels[i] = renderer.labels(i)
    write_labels(out, labels)
    return DatasetResult(out, int(frames), len(todo), seconds)


def _render_on_ray(key: tuple[str, str, int], out: Path, todo, workers, address) -> dict:
    from sim2real.core.ray_jobs import run_on_ray
    from sim2real.detect.frame_workers import chunks, render_range

    n = max(workers, 1)
    jobs = [partial(render_range, *key, str(out.resolve()), chunk)
            for chunk in chunks(todo, n * CHUNKS_PER_WORKER)]  # fmt: skip
    return {i: label for part in run_on_ray(jobs, address=address, workers=n)
            for i, label in part.items()}  # fmt: skip
