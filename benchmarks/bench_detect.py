"""Detection speed: ``detect_frame`` on 320x240 RGB-D frames (target <= 30 ms; with ``--det``,
the median over the real ViSP sequence's 40 frames and its 90th percentile) against
baselines in the same run: the network's forward pass alone at 320x240 and at 640x480, and the
tracker's existing way to find a part without a pose (its global search: FPFH + RANSAC on the
depth, ``Tracker.initialize(None)`` then one ``update``, the whole frame searched).
Torch's threads spin while they wait: on a machine loaded by other jobs, 2 threads can be far
slower than 1 (``--threads 1``); measure on an idle machine.

python benchmarks/bench_detect.py [--det DET] [--repeat 30]

The other figures time the first frame of the shared real ViSP sequence (the cube; with the
default ``accept_agreement`` 0.5 its two highest peaks settle the depth check, at 0.6 they did
not and it was one of the slowest); without ``--det`` the
default network is built with random weights and read with ``min_confidence`` 0, so the PnP
runs on every frame as it would for a found part (speed does not depend on the weights), but
no peak is checked against the depth (no surface points): give a trained ``--det`` to time
the check (detect/verify.py), shown beside the highest peak alone.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np


def median_ms(fn, repeat: int) -> float:
    fn()  # warm up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(1e3 * (time.perf_counter() - t0))
    return statistics.median(times)


def sequence_ms(det, cfg, passes: int) -> list[float]:
    """Each frame's median ``detect_frame`` time [ms] over ``passes`` (after one warm-up pass)
    on the real ViSP sequence at the network's size."""
    from bench_detect_real import visp_frames

    from sim2real.core.data import data_root
    from sim2real.detect.decode import prepare_frame
    from sim2real.detect.detector import detect_frame

    frames = [
        prepare_frame(rgb, z, K, cfg) for _, rgb, z, K, _ in visp_frames(data_root() / "real")
    ]
    return [median_ms(lambda f=f: detect_frame(det, f.rgb, f.depth_m, f.K), passes) for f in frames]


def main() -> None:
    import torch

    from sim2real.core.data import data_root
    from sim2real.detect.decode import prepare_frame
    from sim2real.detect.detector import Detector, DetectorFile, detect_frame, load_detector
    from sim2real.detect.keypoints import bbox_corners
    from sim2real.detect.network import NetworkConfig, build_network, network_input
    from sim2real.models.part import PreparedModel, load_part
    from sim2real.tracking.sequence import load_sequence

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--det", default=None, help="a trained detector folder (optional)")
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    root = data_root() / "real" / "rgbd-visp-rbt"
    seq = load_sequence(root)
    rgb, depth, K = seq.read_color(0), seq.read(0), seq.camera.K
    part = load_part(root / "models" / "cube.obj")
    if args.det:
        det = load_detector(args.det)
    else:
        cfg = NetworkConfig()
        det = Detector(
            build_network(cfg).eval(),
            DetectorFile(
                network=cfg,
                model_name="cube",
                model_path="cube.obj",
                model_hash="-",
                centre_part_m=part.mesh.centre_m.tolist(),
                keypoints_part_m=bbox_corners(part.mesh).tolist(),
                symmetries=[np.eye(4).tolist()],
            ),
        )
        det.info.settings.min_confidence = 0.0
    cfg = det.info.network
    small = prepare_frame(rgb, depth, K, cfg)  # the frame at 320x240, intrinsics scaled
    print(f"uptime: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1, 5 min load)")
    print(f"network {cfg.input}, width {cfg.width}, input {cfg.width_px}x{cfg.height_px}")
    ours = median_ms(lambda: detect_frame(det, small.rgb, small.depth_m, small.K), args.repeat)
    full = median_ms(lambda: detect_frame(det, rgb, depth, K), args.repeat)
    checked = detect_frame(det, small.rgb, small.depth_m, small.K).depth_agreement is not None
    shipped = det.info.settings
    det.info.settings = shipped.model_copy(update={"verify": False})
    alone = median_ms(lambda: detect_frame(det, small.rgb, small.depth_m, small.K), args.repeat)
    det.info.settings = shipped

    def forward(h, w):
        x = network_input(torch.zeros((1, h, w, 3), dtype=torch.uint8), torch.ones((1, h, w)), cfg)
        with torch.no_grad():
            return median_ms(lambda: det.net(x), args.repeat)

    fwd = forward(cfg.height_px, cfg.width_px)
    fwd_vga = forward(480, 640)
    from sim2real.tracking.config import TrackerConfig
    from sim2real.tracking.tracker import Tracker

    # static_camera off: every lost frame searches the whole frame (with it on, a repeated
    # frame shows no foreground and the whole frame is searched only every 10th lost frame)
    tracker = Tracker(PreparedModel(part.mesh), seq.camera, TrackerConfig(static_camera=False))

    def search():
        tracker.initialize(None)
        tracker.update(depth, rgb)

    reps = max(3, args.repeat // 10)
    glob = median_ms(search, reps)
    if args.det:
        seq_ms = sequence_ms(det, cfg, passes=3)
        print(
            f"detect_frame, 320x240, the sequence's {len(seq_ms)} frames: median "
            f"{np.median(seq_ms):.1f} ms, 90th percentile {np.percentile(seq_ms, 90):.1f} ms "
            "(target <= 30 ms)"
        )
    print(f"detect_frame, first 320x240 frame:     {ours:7.1f} ms")
    print(f"detect_frame, 640x480 frame (resized): {full:7.1f} ms")
    print(
        f"  peaks checked against the depth: {'yes' if checked else 'no (no surface points)'}; "
        f"highest peak alone (verify off), 320x240: {alone:7.1f} ms"
    )
    print(
        f"forward pass alone, 320x240:           {fwd:7.1f} ms  (detect_frame / forward {ours / fwd:.2f})"
    )
    print(f"forward pass alone, 640x480:           {fwd_vga:7.1f} ms")
    print(
        f"tracker global search, 640x480 depth:  {glob:7.1f} ms  (median of {reps}; / detect_frame {glob / ours:.0f}x)"
    )
    print(f"uptime: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1, 5 min load)")


if __name__ == "__main__":
    main()
