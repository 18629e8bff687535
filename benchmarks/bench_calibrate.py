"""Calibration speed: one real 640x480 frame, against Open3D's bare plane RANSAC in the same run.

python benchmarks/bench_calibrate.py [--repeat 3]

Frame: the PCL grabber frame_0 (PrimeSense, 640x480) from the shared real data. Timed:
(a) baseline: one Open3D ``segment_plane`` (1000 RANSAC iterations) on the frame's points;
(b) loading the frame and building its reference geometry (planes);
(c) ``calibrate_profile`` (estimators, simulation matching, bootstrap);
(b + c) is the whole calibration. Target: <= 10 s on the 2-core machine. Medians.
"""

from __future__ import annotations

import argparse
import statistics
import time

from sim2real.core.camera_io import load_camera
from sim2real.core.data import real_data
from sim2real.sensors.calibrate import calibrate_profile
from sim2real.sensors.presets import get_preset
from sim2real.sensors.reference import build_reference, load_real_frame


def timed(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import open3d as o3d

    grabber = real_data("depth-pcl", "grabber")
    camera = load_camera(grabber / "frame_0_camera.xml")
    depth, _ = load_real_frame(grabber / "frame_0_depth.tiff", camera)
    cloud = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(camera.backproject(depth)))
    ransac, _ = timed(lambda: cloud.segment_plane(0.01, 3, 1000), args.repeat)

    def reference():
        d, cam = load_real_frame(grabber / "frame_0_depth.tiff", camera)
        return build_reference(d, cam, source="frame_0")

    ref_s, ref = timed(reference, args.repeat)
    base = get_preset("kinect-v1").profile
    cal_s, result = timed(lambda: calibrate_profile([ref], base), args.repeat)
    total = ref_s + cal_s
    stages = ", ".join(f"{k} {v / 1e3:.2f}" for k, v in result.timings_ms.items() if k != "total")
    print(f"frame 640x480, {int((depth > 0).sum())} returns; median of {args.repeat}")
    print(f"(a) Open3D segment_plane, 1000 iterations: {ransac:.2f} s")
    print(f"(b) load + reference geometry: {ref_s:.2f} s ({ref_s / ransac:.1f} x a)")
    print(f"(c) calibrate_profile: {cal_s:.2f} s ({cal_s / ransac:.1f} x a) [s: {stages}]")
    print(
        f"(b + c) whole calibration: {total:.2f} s, target <= 10 s: {'met' if total <= 10 else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
