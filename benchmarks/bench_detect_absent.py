"""A detector on randomized frames with and without its part: how often "found" is said of
nothing, against how often the part is found, at several levels of the highest peak, and the
depth agreement of each side. The frames are the detector's own randomization at indices it
never trained or validated on; the frames without the part are the same frames with the part
moved out of the room (``SampleRenderer.sample(index, part_absent=True)``). Beside "found", the
tracker's verdict on the same frames: a fresh tracker started by the detector (`track run
--init detect:DET` on its first frame) reports a pose (`tracking` or `recovered`) or not; with
the part, how many of its poses are right (ADD-S under 10 % of the part's diameter).

python benchmarks/bench_detect_absent.py DET [--frames 200] [--first 60000] [--no-tracker]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from bench_detect_recoveries import tracker_pose  # the same fresh start, one frame at a time

from sim2real.core.cores import usable_cores
from sim2real.core.yaml_io import read_yaml_mapping
from sim2real.detect import decode
from sim2real.detect.detector import load_detector
from sim2real.detect.evaluate import frame_error
from sim2real.detect.frame_workers import worker_renderer
from sim2real.detect.sim_data import render_frames
from sim2real.detect.train import TrainConfig
from sim2real.detect.verify import surface_samples
from sim2real.models.part import load_part
from sim2real.tracking.pose_errors import adds_m

LEVELS = (0.2, 0.3, 0.5, 0.7)


def detect_with_peak(detector, rgb, depth, K):
    """(``detect_frame``'s detection, the heatmap's highest score) from one network pass."""
    frame = decode.prepare_frame(rgb, depth, K, detector.info.network)
    out = decode.run_network(detector, frame)
    return decode.decode_outputs(detector, out, frame), float(decode.heat_scores(out).max())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("det", type=Path)
    ap.add_argument("--frames", type=int, default=200, help="frames of each kind")
    ap.add_argument("--first", type=int, default=60000, help="the first frame index")
    ap.add_argument("--no-tracker", action="store_true", help="skip the tracker's verdict")
    args = ap.parse_args()
    cfg = TrainConfig.model_validate(read_yaml_mapping(args.det / "config.yaml"))
    detector = load_detector(args.det)
    model = detector.info.model_path
    net = cfg.network
    scene = cfg.scene.model_copy(update={"width_px": net.width_px, "height_px": net.height_px})
    key = (model, scene.model_dump_json(), int(cfg.seed))
    part = load_part(model)
    renderer = worker_renderer(*key, part=part)
    points, bar = surface_samples(part.mesh, 500)[:, :3], 0.1 * part.mesh.diameter_m
    indices = range(args.first, args.first + args.frames)
    every = {"key": key, "processes": usable_cores()}
    t0 = time.perf_counter()
    kinds = {
        "without the part": render_frames(renderer, indices, part_absent=True, **every),
        "with the part": render_frames(renderer, indices, **every),
    }
    print(f"{detector.info.model_name}: {args.frames} frames of each kind (indices "
          f"{args.first}+), rendered in {time.perf_counter() - t0:.0f} s")  # fmt: skip
    centre = detector.geometry.centre_part_m
    header = " | ".join(f"peak >= {level}" for level in LEVELS)
    tracked = "" if args.no_tracker else " tracker reports a pose (right) |"
    print(f"| frames | found | found within 5 cm | depth agreement, median (10-90 %) | {header} |"
          f"{tracked}")  # fmt: skip
    print("|" + " --- |" * (4 + len(LEVELS) + (not args.no_tracker)))
    for kind, frames in kinds.items():
        found, near, agreement, peaks, poses, right = 0, 0, [], [], 0, 0
        for i, label in enumerate(frames.labels):
            rgb, depth = frames.rgb[i], frames.depth_m[i].astype(np.float32)
            if kind == "with the part" and label.visible_px == 0:
                continue  # out of view or hidden: neither a part to find nor a clean negative
            d, peak = detect_with_peak(detector, rgb, depth, label.K)
            peaks.append(peak)
            if not args.no_tracker:
                T = tracker_pose(detector, part, rgb, depth, label.K)
                poses += T is not None
                if T is not None and kind == "with the part":
                    right += adds_m(T, label.T_cam_part, points) < bar
            if not d.found:
                continue
            found += 1
            if d.depth_agreement is not None:
                agreement.append(d.depth_agreement)
            if kind == "with the part":
                near += frame_error(i, d, label.T_cam_part, centre, label.K).error_3d_m < 0.05
        n = len(peaks)
        q = np.percentile(agreement, [50, 10, 90]) if agreement else [np.nan] * 3
        levels = " | ".join(f"{100 * np.mean(np.array(peaks) >= lv):.1f} %" for lv in LEVELS)
        within = f"{100 * near / n:.1f} %" if kind == "with the part" else "-"
        verdict = ""
        if not args.no_tracker:
            verdict = f" {100 * poses / n:.1f} %"
            verdict += f" ({100 * right / n:.1f} %) |" if kind == "with the part" else " |"
        print(f"| {kind} ({n}) | {100 * found / n:.1f} % | {within} | "
              f"{q[0]:.2f} ({q[1]:.2f}-{q[2]:.2f}) | {levels} |{verdict}")  # fmt: skip


if __name__ == "__main__":
    main()
