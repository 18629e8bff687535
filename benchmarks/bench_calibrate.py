"""Calibration speed: a 5-frame set of real 640x480 frames, against Open3D's bare plane RANSAC
in the same run.

python benchmarks/bench_calibrate.py [--repeat 3]

Set: five real frames of PrimeSense / Kinect v1 class sensors from the shared data, each in
its own encoding (PCL grabber frame_0 and frame_1, the Open3D depth.png, TUM_depth.png and
the PCL milk-scene organised cloud). Timed, as ``sim2real depth calibrate`` does it by
default (base chosen by evidence, every 3rd frame held out and judged):
(a) baseline: one Open3D ``segment_plane`` (1000 RANSAC iterations) on frame_0's points;
(b) loading the five frames and building their reference geometry (planes);
(c) ``calibrate_references``: base choice, calibration on four frames (estimators,
    simulation matching, 20 bootstrap rounds) and the gap on the held-out frame;
(b + c) is the whole calibration. Target (issue 14): <= 10 s. Medians; also one frame alone.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings

from sim2real.core.camera_io import load_camera
from sim2real.core.data import real_data
from sim2real.sensors.calibration_run import calibrate_references
from sim2real.sensors.reference import build_reference, load_real_frame

FRAMES = [  # (file, camera, encoding)
    ("depth-pcl/grabber/frame_0_depth.tiff", "depth-pcl/grabber/frame_0_camera.xml", "auto"),
    ("depth-pcl/grabber/frame_1_depth.tiff", "depth-pcl/grabber/frame_0_camera.xml", "auto"),
    ("depth-open3d/depth.png", "depth-open3d/camera_primesense.json", "auto"),
    ("depth-open3d/TUM_depth.png", "depth-open3d/camera_primesense.json", "tum"),
    ("depth-pcl/milk_cartoon_all_small_clorox.pcd", None, "auto"),
]


CPU = {}
"""Median process CPU seconds of the last ``timed`` call per label (a busy machine inflates
wall time, much less CPU time)."""


def timed(fn, repeat: int, label: str = "") -> tuple[float, object]:
    times, cpu, out = [], [], None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    CPU[label] = statistics.median(cpu)
    return statistics.median(times), out


def references(frames):
    root = real_data()
    refs = []
    for file, camera, encoding in frames:
        cam = load_camera(root / camera) if camera else None
        depth, frame_camera = load_real_frame(root / file, cam, encoding=encoding)
        refs.append(build_reference(depth, frame_camera, source=file))
    return refs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    import open3d as o3d

    root = real_data()
    camera = load_camera(root / FRAMES[0][1])
    depth, _ = load_real_frame(root / FRAMES[0][0], camera)
    cloud = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(camera.backproject(depth)))
    ransac, _ = timed(lambda: cloud.segment_plane(0.01, 3, 1000), args.repeat)
    print(f"load average {os.getloadavg()[0]:.2f}; median of {args.repeat}")
    print(f"(a) Open3D segment_plane, 1000 iterations: {ransac:.3f} s")
    for label, frames in (("5-frame set", FRAMES), ("1 frame (PCL frame_0)", FRAMES[:1])):
        ref_s, refs = timed(lambda f=frames: references(f), args.repeat, "ref")
        cal_s, run = timed(lambda r=refs: calibrate_references(r), args.repeat, "cal")
        stages = ", ".join(
            f"{k} {v / 1e3:.2f}" for k, v in run.calibration.timings_ms.items() if k != "total"
        )
        total = ref_s + cal_s
        print(f"{label}: base {run.base.name}; {run.split.description}")
        print(f"  (b) load + reference geometry: {ref_s:.2f} s ({ref_s / ransac:.0f} x a)")
        print(
            f"  (c) base choice + calibration + held-out gap: {cal_s:.2f} s [calibration s: {stages}]"
        )
        verdict = "met" if total <= 10 else "MISSED"
        print(f"  (b + c) whole calibration: {total:.2f} s, target <= 10 s: {verdict}")
        print(f"  CPU time of this process: (b) {CPU['ref']:.2f} s, (c) {CPU['cal']:.2f} s")


if __name__ == "__main__":
    main()
