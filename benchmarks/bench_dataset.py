"""Randomized RGB-D dataset speed: labelled 320x240 frames/s against the project's depth-only
render of the same scenes, in one run.

python benchmarks/bench_dataset.py [--frames 60] [--dataset-frames 400] [--workers 2] [--part MESH]

The part: the shared cube (rgbd-visp-rbt) when the real data is there, else the built-in
bracket. Full randomization on (SceneConfig's defaults: 1000 textures, 0-10 distractors,
1-4 lights with cast shadows, camera jitter, colour effects, the realsense-d435 depth profile
with its emitter shadow). Per frame, medians over the frames after a warm-up:
(a) baseline: the project's depth render (sensors.render.DepthRenderer: scene build, cast,
    emitter shadow, D435 noise) of the same frame's scene;
(b) a sample in memory (SampleRenderer.sample: depth as (a) plus colour, masks, labels);
(c) variants of (b) without the emitter shadow / without light shadows (what each costs);
(d) the dataset writer end to end (generate_dataset: sample + four PNGs + labels) on
    --dataset-frames frames, frames/s over the whole call (the part's load, the texture bank,
    the workers' start-up included): in one process, in worker processes (one per core, the
    default) and with --workers Ray workers (Ray's start-up included);
and the writer's PNG encoder against Pillow's on the same colour and depth images.
Target: >= 50 labelled frames/s. Prints `uptime` beside the figures (the machine is shared).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from sim2real.core.cores import usable_cores
from sim2real.core.data import data_root
from sim2real.detect.dataset import generate_dataset
from sim2real.detect.render_rgbd import SampleRenderer, load_part_model
from sim2real.detect.scene_config import SceneConfig


def _part_path(given: str | None, folder: Path) -> Path:
    if given:
        return Path(given)
    root = data_root()
    cube = root / "real" / "rgbd-visp-rbt" / "models" / "cube.obj" if root else None
    if cube is not None and cube.is_file():
        return cube
    import trimesh

    from sim2real.sensors.demo_part import machined_bracket

    mesh = machined_bracket()
    path = folder / "bracket.stl"
    trimesh.Trimesh(mesh.vertices, mesh.faces).export(path)
    return path


def _per_frame_ms(fn, frames: int) -> tuple[list[float], float]:
    """(wall ms per frame, median CPU ms of this process per frame)."""
    fn(frames)  # warm-up: index `frames` (not measured)
    times, cpu = [], []
    for i in range(frames):
        t0, c0 = time.perf_counter(), time.process_time()
        fn(i)
        times.append((time.perf_counter() - t0) * 1e3)
        cpu.append((time.process_time() - c0) * 1e3)
    return times, statistics.median(cpu)


def _save_grid(renderer: SampleRenderer, path: Path, count: int = 8) -> None:
    """Samples 0..count-1 side by side: RGB above, depth (grey, near = bright) below, the
    visible mask's outline in red."""
    import numpy as np
    from PIL import Image

    columns = []
    for i in range(count):
        s = renderer.sample(i)
        rgb = s.rgb.copy()
        edge = s.mask & ~(np.roll(s.mask, 1, 0) & np.roll(s.mask, -1, 0) & np.roll(s.mask, 1, 1)
                          & np.roll(s.mask, -1, 1))  # fmt: skip
        rgb[edge] = (255, 0, 0)
        d = s.depth_m
        grey = np.where(d > 0, 255 * (1 - np.clip(d / max(float(d.max()), 1e-6), 0, 1)), 0)
        columns.append(np.concatenate([rgb, np.repeat(grey[..., None], 3, 2).astype(np.uint8)]))
    Image.fromarray(np.concatenate(columns, axis=1)).save(path)
    print(f"samples: {path}")


def _png_encoders(renderer: SampleRenderer, count: int) -> None:
    """The writer's PNG encoder (core.png_encode) against Pillow's at the same zlib level, on
    the same frames' colour and depth images: ms a frame and file sizes (medians)."""
    import io

    from PIL import Image

    from sim2real.core.png_encode import encode_png
    from sim2real.detect.bop_writer import PNG_COMPRESS_LEVEL, depth_units

    def pillow(a):
        buf = io.BytesIO()
        Image.fromarray(a).save(buf, format="PNG", compress_level=PNG_COMPRESS_LEVEL)
        return buf.getvalue()

    images = []
    for i in range(count):
        s = renderer.sample(i)
        images.append({"colour": s.rgb, "depth": depth_units(s.depth_m)})
    print(f"\n{'PNG encoding, median of ' + str(count):<46} {'ms':>7} {'KB':>7} {'ms/ours':>8}")
    for kind in ("colour", "depth"):
        rows = {}
        for name, encode in (("ours (core.png_encode)", encode_png), ("Pillow", pillow)):
            times, sizes = [], []
            for im in images:
                t0 = time.perf_counter()
                data = encode(im[kind])
                times.append((time.perf_counter() - t0) * 1e3)
                sizes.append(len(data) / 1e3)
            rows[name] = (statistics.median(times), statistics.median(sizes))
        ours = rows["ours (core.png_encode)"][0]
        for name, (ms, kb) in rows.items():
            print(f"{kind + ', ' + name:<46} {ms:7.1f} {kb:7.0f} {ms / ours:8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=60)
    parser.add_argument("--dataset-frames", type=int, default=400, help="frames of (d)")
    parser.add_argument("--workers", type=int, default=2, help="Ray workers for (d); 0: skip")
    parser.add_argument("--part", default=None, help="mesh or MODEL_DIR (default: the cube)")
    parser.add_argument("--grid", default=None, help="also save 8 samples (RGB over depth) here")
    args = parser.parse_args()
    n = args.frames
    tmp = Path(tempfile.mkdtemp(prefix="bench_dataset."))
    part_path = _part_path(args.part, tmp)
    part = load_part_model(part_path)
    cfg = SceneConfig()
    renderer = SampleRenderer(part, cfg, seed=0)
    print(f"part {part_path} ({len(part.mesh.faces)} triangles), {cfg.width_px}x{cfg.height_px}")
    print(
        f"uptime before: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}"
    )

    profile = renderer.profile

    def baseline(i: int) -> None:
        frame, depth_rng, _ = renderer.draw(i)
        renderer.depth_renderer(frame)[0].render(profile, depth_rng)

    stages: dict[str, list[float]] = {}

    def ours(i: int) -> None:
        s = renderer.sample(i)
        for k, v in s.timings_ms.items():
            stages.setdefault(k, []).append(v)

    rows = [("(a) depth only (DepthRenderer.render, d435)", _per_frame_ms(baseline, n))]
    rows.append(("(b) randomized RGB-D sample, in memory", _per_frame_ms(ours, n)))
    variants = {
        "(c) (b) without the emitter shadow": cfg.model_copy(
            update={"depth": cfg.depth.model_copy(update={"emitter_shadow": False})}
        ),
        "(c) (b) without light shadows": cfg.model_copy(
            update={"lights": cfg.lights.model_copy(update={"shadows": False})}
        ),
    }
    for name, variant in variants.items():
        other = SampleRenderer(part, variant, seed=0)
        rows.append((name, _per_frame_ms(other.sample, n)))
    base = statistics.median(rows[0][1][0])
    head = f"per frame (median over {n})"
    print(f"\n{head:<46} {'ms':>7} {'frames/s':>9} {'/ (a)':>6} {'CPU ms':>7}")
    for name, (times, cpu) in rows:
        ms = statistics.median(times)
        print(f"{name:<46} {ms:7.1f} {1e3 / ms:9.1f} {ms / base:6.2f} {cpu:7.1f}")
    print("\n(b) by stage, median ms: " + ", ".join(
        f"{k} {statistics.median(v):.1f}" for k, v in stages.items()))  # fmt: skip

    _png_encoders(renderer, min(n, 20))

    print(f"\n{'dataset writer end to end':<46} {'frames':>7} {'s':>7} {'frames/s':>9}")
    m = args.dataset_frames
    runs = [("(d) generate_dataset, one process", {"processes": 1}),
            (f"(d) generate_dataset, {usable_cores()} processes (default)", {})]  # fmt: skip
    if args.workers:
        runs.append(
            (f"(d) generate_dataset, {args.workers} Ray workers", {"workers": args.workers})
        )
    for k, (name, kw) in enumerate(runs):
        out = tmp / f"ds{k}"
        t0 = time.perf_counter()
        try:
            generate_dataset(part_path, out, m, seed=0, config=cfg, **kw)
        except Exception as exc:  # Ray missing or not starting: say so, keep the table
            print(f"{name:<46} failed: {exc}")
            continue
        wall = time.perf_counter() - t0
        print(f"{name:<46} {m:7d} {wall:7.1f} {m / wall:9.1f}")
    if args.grid:
        _save_grid(renderer, Path(args.grid))
    print(
        f"\nuptime after: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}"
    )


if __name__ == "__main__":
    main()
