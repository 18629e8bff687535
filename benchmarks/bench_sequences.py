"""Tracking accuracy and status honesty on generated sequences, several seeds per motion.

python benchmarks/bench_sequences.py [--seeds 1 2 3] [--frames 100] [--sensor PRESET]
    [--noise-sigmas S]

The built-in bracket (144 mm) rendered by ``synthesize_sequence`` with the realsense-d435 preset
(848x480; ``--sensor``: another, e.g. realsense-l515 at 5 mm noise, where ``--noise-sigmas 0``
is the fixed-tolerance tracker it is compared with), for each motion of the tracking issue;
the tracker starts from the first frame's ground-truth pose. Targets (issue #4): smooth ADD < 10 % d (symmetry-aware; ADD-S until
2026-12-07) on >= 98 % of visible frames and
median < 2 mm; fast >= 90 %; occluded >= 90 %; leave-view `lost` within 2 frames and correct
again within 5 frames of the return; `tracking` precision >= 99 % over all sequences.
Times per frame include everything the tracker does (the global search when lost), on this
machine, while nothing else runs: compare them only within one run.
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np

from sim2real.sensors.demo_part import machined_bracket
from sim2real.sensors.presets import get_preset
from sim2real.tracking.config import TrackerConfig
from sim2real.tracking.evaluation import evaluate_track, score_auroc
from sim2real.tracking.synth import synthesize_sequence
from sim2real.tracking.tracker import Tracker

MOTIONS = ("smooth", "fast", "occluded", "leave-view")


def run_one(part, motion: str, seed: int, frames: int, sensor: str, config: TrackerConfig) -> dict:
    preset = get_preset(sensor)
    seq = synthesize_sequence(
        part, motion=motion, frames=frames, seed=seed, profile=preset.profile, camera=preset.camera
    )
    tracker = Tracker(part, seq.camera, config)
    tracker.initialize(seq.T_cam_part[0])
    records = [tracker.update(d).record(i) for i, d in enumerate(seq.depth_m)]
    gt = {i: T for i, T in enumerate(seq.T_cam_part)}
    visible = {i: float(v) for i, v in enumerate(seq.visible)}
    ev = evaluate_track(records, gt, part, visible=visible)
    ms = [r.ms for r in records]
    lost_ms = [r.ms for r in records if r.status == "lost"]
    return {
        "motion": motion,
        "seed": seed,
        "recall": ev.recall_at_10,
        "median_add_mm": ev.median_add_mm,
        "precision": ev.tracking_precision,
        "reported": ev.n_reported_tracking,
        "correct_reported": round((ev.tracking_precision or 0) * ev.n_reported_tracking),
        "lost_latency": ev.lost_latency_frames,
        "recover_latency": ev.recover_latency_frames,
        "median_ms": statistics.median(ms),
        "lost_median_ms": statistics.median(lost_ms) if lost_ms else None,
        "lost_frames": len(lost_ms),
        "scored": [(f["score"], f["correct"]) for f in ev.frames if f["score"] is not None],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--frames", type=int, default=100)
    parser.add_argument("--motions", nargs="+", default=list(MOTIONS), choices=MOTIONS)
    parser.add_argument("--sensor", default="realsense-d435")
    parser.add_argument("--noise-sigmas", type=float, default=TrackerConfig().noise_sigmas)
    args = parser.parse_args()
    config = TrackerConfig(noise_sigmas=args.noise_sigmas)
    part = machined_bracket()
    rows = []
    print("| motion | seed | ADD < 10 % d | median ADD | `tracking` precision | "
          "lost after leaving | correct after returning | median ms | lost frames: median ms |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for motion in args.motions:
        for seed in args.seeds:
            r = run_one(part, motion, seed, args.frames, args.sensor, config)
            rows.append(r)
            lost = "–" if not r["lost_latency"] else r["lost_latency"]
            back = "–" if not r["recover_latency"] else r["recover_latency"]
            precision = "–" if r["precision"] is None else f"{100 * r['precision']:.1f} %"
            lost_ms = (
                "–"
                if r["lost_median_ms"] is None
                else f"{r['lost_median_ms']:.0f} ({r['lost_frames']})"
            )
            print(
                f"| {motion} | {seed} | {100 * r['recall']:.1f} % | {r['median_add_mm']:.2f} mm | "
                f"{precision} | {lost} | {back} | {r['median_ms']:.1f} | {lost_ms} |",
                flush=True,
            )
    reported = sum(r["reported"] for r in rows)
    correct = sum(r["correct_reported"] for r in rows)
    print(f"\n`tracking` precision over all runs: {100 * correct / max(reported, 1):.2f} % "
          f"of {reported} frames")  # fmt: skip
    for motion in args.motions:
        recalls = [r["recall"] for r in rows if r["motion"] == motion]
        print(f"{motion}: recall min {100 * min(recalls):.1f} %, median "
              f"{100 * float(np.median(recalls)):.1f} %")  # fmt: skip
    # the loss score: how well it tells correct poses (ADD < 10 % d) from wrong ones, over the
    # frames of the motions where the tracker can be wrong (target AUROC >= 0.95)
    pooled = [
        sc for r in rows if r["motion"] in ("leave-view", "occluded", "fast") for sc in r["scored"]
    ]
    if pooled:
        auroc = score_auroc([s for s, _ in pooled], [c for _, c in pooled])
        wrong = sum(not c for _, c in pooled)
        text = "n/a (all right or all wrong)" if auroc is None else f"{auroc:.3f}"
        print(
            f"loss score AUROC (leave-view, occluded, fast): {text} over {len(pooled)} frames, "
            f"{wrong} with a wrong pose"
        )


if __name__ == "__main__":
    main()
