"""Model preparation speed: ``prepare_model`` on a 1M-triangle mesh, and the viewpoint model's
build time, each beside a baseline measured in the same run.

python benchmarks/bench_model.py [--repeat 3] [--faces 1000000]

Input: the built-in torus (80/30 mm radii) at ``--faces`` triangles, written as binary PLY.
(ours, prepare) ``prepare_model`` with the default config: import, cleaning, quadric
decimation to 100k faces with its deviation and silhouette checks, internal-geometry removal,
symmetry detection, 2000-view viewpoint model. (baseline) plain trimesh: ``trimesh.load`` with
``process=True`` (merges vertices) and ``fix_normals`` -- what "load and clean" costs without
any of the rest.
(ours, views) ``build_viewpoints`` (2000 views, 96 x 96 rays each) on the prepared 100k mesh
and on the raw 1M mesh; (baseline) what the viewpoint model saves per frame: rendering one
640 x 480 depth frame of the part (``DepthRenderer.render_ideal``) against looking a view up
(``ViewpointModel.nearest``). Medians over ``--repeat`` runs (render / lookup: over 50).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np


def median_s(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main() -> None:
    import trimesh

    from sim2real.core.camera import CameraIntrinsics
    from sim2real.core.pose import invert_pose, look_at
    from sim2real.models.prepare import PrepareConfig, prepare_model
    from sim2real.models.viewpoints import build_viewpoints
    from sim2real.sensors.demo_part import torus_mesh
    from sim2real.sensors.render import DepthRenderer
    from sim2real.sensors.scene import make_scene

    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--faces", type=int, default=1_000_000)
    args = parser.parse_args()

    part = torus_mesh(args.faces)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "torus.ply"
        trimesh.Trimesh(part.vertices, part.faces, process=False).export(path)
        print(f"input: {len(part.faces)} triangles, {path.stat().st_size / 1e6:.0f} MB PLY")

        def baseline():
            m = trimesh.load(path, process=True)
            trimesh.repair.fix_normals(m)
            return m

        base_s, _ = median_s(baseline, args.repeat)
        ours_s, result = median_s(lambda: prepare_model(path, PrepareConfig()), args.repeat)
    steps = ", ".join(f"{k} {v:.1f}" for k, v in result.timings_s.items())
    print(
        f"prepare: ours {ours_s:.1f} s (last run: {steps} s; target <= 30 s), "
        f"trimesh load+process+fix_normals {base_s:.1f} s, ratio {ours_s / base_s:.1f}"
    )
    c = result.cleaning
    print(
        f"  {c.faces_in} -> {c.faces_out} faces, deviation {c.decimation_max_deviation_mm} mm, "
        f"silhouette IoU >= {c.silhouette_iou_min}, symmetry: {result.symmetry.symmetry.describe()}"
    )

    prepared = result.mesh
    small_s, views = median_s(lambda: build_viewpoints(prepared), args.repeat)
    big_s, _ = median_s(lambda: build_viewpoints(part), args.repeat)
    print(
        f"viewpoint model (2000 views): {small_s:.2f} s on the prepared {len(prepared.faces)} "
        f"faces, {big_s:.2f} s on the raw {len(part.faces)} faces (target <= 10 s)"
    )

    camera = CameraIntrinsics.from_hfov(640, 480, 60.0)
    T = invert_pose(look_at([0.25, -0.3, 0.35], [0.0, 0.0, 0.0]))
    renderer = DepthRenderer(make_scene([prepared], [T]), camera)
    renderer.render_ideal()  # the BVH is built on the first cast
    render_s, _ = median_s(renderer.render_ideal, 50)
    lookup_s, _ = median_s(lambda: views.nearest(T), 50)
    print(
        f"per frame: render 640x480 {1000 * render_s:.2f} ms, viewpoint lookup "
        f"{1e6 * lookup_s:.1f} us (ratio {render_s / lookup_s:.0f}); the build pays for itself "
        f"after {small_s / render_s:.0f} frames"
    )


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    main()
