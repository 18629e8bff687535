"""Calibration quality out of sample, on every real depth sensor of the shared data.

python benchmarks/bench_calibration_gap.py [--bins] [--only NAME]

Each case runs ``run_calibration`` as ``sim2real depth calibrate`` does by default (base
chosen by evidence, hold-out by default): with two frames of a sensor it is calibrated on
one and judged on the other (both ways); with one frame, every second usable plane is held
out (a spatial hold-out: same frame, planes it was not fitted to). Printed per case: the
base preset chosen, and on the held-out data, for the calibrated profile and for its base
(the baseline in the same run): the share of 10 cm depth bins (>= 2,000 px) whose local
noise spread is within 25 % of the real one, the worst plane's valid-rate error [pp], the
overall valid-rate error [pp] and W1 of depth - reference [mm]. Targets (issue 14): share
>= 0.8 and worst plane <= 5 pp on every sensor. ``--bins`` also prints every depth bin.

Then across units of one sensor model (no hold-out needed: another recording altogether),
calibrated on all of one frame and judged on frames of other units: Kinect v1 from TUM to
NYU and SUN (each dataset's own encoding and registration), PrimeSense from the PCL grabber
frame 0 to the PCL milk-scene cloud. Not a target (other units, other processing): a check
of how far a calibration carries.
"""

from __future__ import annotations

import argparse
import time
import warnings

from sim2real.core.data import real_data
from sim2real.sensors.calibration_run import run_calibration

CASES = [
    # name, sensor, frames (relative to the real-data folder), camera, encoding
    ("pcl-0to1", "PrimeSense (PCL grabber)", ["depth-pcl/grabber/frame_0_depth.tiff",
     "depth-pcl/grabber/frame_1_depth.tiff"], "depth-pcl/grabber/frame_0_camera.xml", "auto"),
    ("pcl-1to0", "PrimeSense (PCL grabber)", ["depth-pcl/grabber/frame_1_depth.tiff",
     "depth-pcl/grabber/frame_0_depth.tiff"], "depth-pcl/grabber/frame_0_camera.xml", "auto"),
    ("open3d-primesense", "PrimeSense (Open3D depth.png)", ["depth-open3d/depth.png"],
     "depth-open3d/camera_primesense.json", "auto"),
    ("tum", "Kinect v1 (TUM)", ["depth-open3d/TUM_depth.png"],
     "depth-open3d/camera_primesense.json", "tum"),
    ("nyu", "Kinect v1 (NYU raw)", ["depth-open3d/NYU_depth.pgm"],
     "depth-open3d/camera_primesense.json", "pgm"),
    ("sun", "Kinect v1 (SUN RGB-D)", ["depth-open3d/SUN_depth.png"],
     "depth-open3d/camera_primesense.json", "sun"),
    ("m3t", "RealSense D4xx (M3T)", ["depth-m3t/depth_camera_image_200.png"],
     "depth-m3t/depth_camera.yaml", "auto"),
    ("pcl-milk", "PrimeSense cloud (PCL milk scene)", ["depth-pcl/milk_cartoon_all_small_clorox.pcd"],
     None, "auto"),
    ("pcl-stereo", "stereo cloud (PCL table scene)", ["depth-pcl/table_scene_mug_stereo_textured.pcd"],
     None, "auto"),
]  # fmt: skip


CROSS = [
    # name, calibrated on (frame, camera, encoding), judged on [(frame, camera, encoding)]
    ("kinect-v1 TUM->NYU,SUN", ("depth-open3d/TUM_depth.png", "depth-open3d/camera_primesense.json",
     "tum"), [("depth-open3d/NYU_depth.pgm", "depth-open3d/camera_primesense.json", "pgm"),
     ("depth-open3d/SUN_depth.png", "depth-open3d/camera_primesense.json", "sun")]),
    ("primesense grabber->milk", ("depth-pcl/grabber/frame_0_depth.tiff",
     "depth-pcl/grabber/frame_0_camera.xml", "auto"),
     [("depth-pcl/milk_cartoon_all_small_clorox.pcd", None, "auto")]),
]  # fmt: skip


def cross_units(root) -> None:
    from sim2real.sensors.gap_run import gap_out_of_sample
    from sim2real.sensors.reference import references_from_files

    def refs(frame, camera, encoding):
        return references_from_files(
            [root / frame], root / camera if camera else None, encoding=encoding
        )

    print(f"\n{'across units':26s} {'judged on':34s} {'profile':10s} {'bins>=2k':>8s} "
          f"{'within25%':>9s} {'worst plane pp':>14s} {'w1 mm':>6s}")  # fmt: skip
    for name, (frame, camera, encoding), judged in CROSS:
        run = run_calibration([root / frame], root / camera if camera else None,
                              encoding=encoding, holdout_every=0)  # fmt: skip
        for other in judged:
            gap = gap_out_of_sample(
                refs(*other), {"calibrated": run.profile, "base": run.base.profile}, (0, 1)
            )
            for g in gap.gaps:
                m = g.metrics
                print(
                    f"{name:26s} {other[0].rsplit('/', 1)[-1]:34s} {g.profile:10s} "
                    f"{int(m['noise_bins_counted']):8d} {m['noise_bins_within_25pct']:9.2f} "
                    f"{m['valid_rate_region_pp_max']:14.2f} {m.get('w1_mm', float('nan')):6.2f}"
                )
        print(f"{'':26s} base {run.base.name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bins", action="store_true", help="print every depth bin")
    parser.add_argument("--only", default=None, help="run one case")
    parser.add_argument("--no-cross", action="store_true", help="skip the across-units rows")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    root = real_data()
    header = (
        f"{'case':18s} {'hold-out':8s} {'base':18s} {'profile':10s} {'bins>=2k':>8s} "
        f"{'within25%':>9s} {'worst plane pp':>14s} {'valid pp':>8s} {'w1 mm':>6s} {'time s':>6s}"
    )
    print(header)
    met_all = True
    for name, sensor, frames, camera, encoding in CASES:
        if args.only and name != args.only:
            continue
        t0 = time.perf_counter()
        run = run_calibration(
            [root / f for f in frames], root / camera if camera else None, encoding=encoding
        )
        seconds = time.perf_counter() - t0
        if run.validation is None:
            print(f"{name:18s} {run.split.kind:8s} no held-out data: {run.split.description}")
            met_all = False
            continue
        for g in run.validation.gaps:
            m = g.metrics
            label = "calibrated" if g.profile == "calibrated" else "base"
            print(
                f"{name:18s} {run.split.kind:8s} {run.base.name:18s} {label:10s} "
                f"{int(m['noise_bins_counted']):8d} {m['noise_bins_within_25pct']:9.2f} "
                f"{m['valid_rate_region_pp_max']:14.2f} {m['valid_rate_pp']:8.2f} "
                f"{m.get('w1_mm', float('nan')):6.2f} {seconds if label == 'calibrated' else 0:6.1f}"
            )
            if args.bins and label == "calibrated":
                for b, v in g.by_depth.items():
                    if "noise_spread_real_mm" in v:
                        print(
                            f"    {b}: real {v['noise_spread_real_mm']:.2f} mm, sim "
                            f"{v['noise_spread_sim_mm']:.2f} mm ({100 * v['noise_spread_rel']:.0f} %),"
                            f" {v['pixels']} px"
                        )
                for r, v in g.by_region.items():
                    print(
                        f"    {r}: valid real {100 * v['valid_rate_real']:.1f} %, sim "
                        f"{100 * v['valid_rate_sim']:.1f} % ({v['pixels']} px)"
                    )
            if label == "calibrated":
                met = g.targets_met()
                met_all &= all(met.values())
        print(f"{'':18s} {sensor}; {run.split.description}")
    print(f"targets met on every case: {'yes' if met_all else 'NO'}")
    if not args.no_cross and not args.only:
        cross_units(root)


if __name__ == "__main__":
    main()
