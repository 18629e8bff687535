"""Depth rendering speed: our full render vs Open3D's bare ray cast, in one run.

python benchmarks/bench_depth.py [--frames 50]

A 40k-triangle part (torus) on a table, 0.5 m from the camera, at 640x480 and 848x480.
(a) bare: ``RaycastingScene.cast_rays`` on precomputed rays (the floor we build on);
(b) ours: ``DepthRenderer.render`` with normals, incidence, edges, the emitter-shadow pass and
the realsense-d435 noise profile. Targets: (b) <= 2 x (a), and (b) >= 40 frames/s at 640x480.
Medians over the frames, after a warm-up.
"""

from __future__ import annotations

import argparse
import statistics
import time

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.pose import invert_pose, look_at
from sim2real.sensors.demo_part import torus_mesh
from sim2real.sensors.presets import get_preset
from sim2real.sensors.render import DepthRenderer
from sim2real.sensors.scene import make_scene


def median_ms(fn, repeat: int) -> float:
    fn()  # warm-up (builds the BVH on the first cast)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=50)
    args = parser.parse_args()
    part = torus_mesh(40_000)
    T_cam_part = invert_pose(look_at(eye=[0.2, -0.25, 0.4], target=[0.0, 0.0, 0.0]))
    scene = make_scene([part], [T_cam_part], plane=True)
    d435 = get_preset("realsense-d435").profile
    print(
        f"part: {len(part.faces)} triangles + table; profile: {d435.name}; median of {args.frames} frames"
    )
    for width, height in ((640, 480), (848, 480)):
        camera = CameraIntrinsics.from_hfov(width, height, 87.0 if width == 848 else 70.0)
        print(measure(DepthRenderer(scene, camera), d435, args.frames))


def measure(renderer: DepthRenderer, profile, frames: int) -> str:
    """One line: bare cast vs full render, frames/s, ratio, and the render's stages."""
    raycaster, rays = renderer._raycaster, renderer.rays
    bare = median_ms(lambda: raycaster.cast_rays(rays)["t_hit"].numpy(), frames)
    seeds = iter(range(10**6))
    ours = median_ms(lambda: renderer.render(profile, seed=next(seeds)), frames)
    stages: dict[str, list[float]] = {}
    for seed in range(10):
        for k, v in renderer.render(profile, seed=seed).timings_ms.items():
            stages.setdefault(k, []).append(v)
    breakdown = ", ".join(f"{k} {statistics.median(v):.1f}" for k, v in stages.items())
    valid = (renderer.render(profile, seed=0).depth_m > 0).mean()
    cam = renderer.camera
    return (
        f"{cam.width}x{cam.height}: bare cast_rays {bare:.1f} ms | full render {ours:.1f} ms "
        f"({1e3 / ours:.0f} frames/s) | ratio {ours / bare:.2f} | valid {100 * valid:.1f} % | "
        f"stages [ms]: {breakdown}"
    )


if __name__ == "__main__":
    main()
