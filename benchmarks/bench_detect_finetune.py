"""Fine-tuning on k real frames without forgetting: for k = 5, 10, 20 labelled frames of the
shared ViSP sequence (the first k; the other 40 - k held out), replay (simulated frames mixed
in + L2-SP towards the simulated weights) against naive fine-tuning on the real frames alone.
Prints the held-out real error and the simulated validation error before and after.

python benchmarks/bench_detect_finetune.py DET [--ks 5 10 20] [--steps 100]

The held-out frames are later frames of the same recording (same cube, scene and camera): a
kinder test than another recording would be. Every cell has the same number of optimizer steps.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path


def main() -> None:
    from sim2real.core.data import data_root
    from sim2real.core.strict import validate
    from sim2real.core.yaml_io import read_yaml_mapping
    from sim2real.detect.detector import load_detector
    from sim2real.detect.finetune import FinetuneConfig, finetune_detector, sim_frames
    from sim2real.detect.run import sequence_frames
    from sim2real.detect.train import TrainConfig
    from sim2real.tracking.sequence import load_sequence

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("det", type=Path)
    ap.add_argument("--ks", type=int, nargs="*", default=[5, 10, 20])
    ap.add_argument("--steps", type=int, default=100)
    args = ap.parse_args()
    det = load_detector(args.det)
    train_cfg = validate(
        TrainConfig, read_yaml_mapping(args.det / "config.yaml"), args.det / "config.yaml"
    )
    root = data_root() / "real" / "rgbd-visp-rbt"
    real = list(sequence_frames(load_sequence(root, obj_id=1), root))
    base = FinetuneConfig()
    base = base.model_copy(
        update={
            "optim": base.optim.model_copy(update={"max_steps": args.steps, "max_minutes": 60.0})
        }
    )
    sim = sim_frames(det, train_cfg, base)  # the same simulated frames for every cell
    print(f"load {os.getloadavg()[:2]}; {args.steps} steps per cell")
    rows = []
    for k in args.ks:
        for mode in ("replay", "naive"):
            cfg = base.model_copy(update={"k": k, "mode": mode})
            res = finetune_detector(det, train_cfg, real, cfg, sim)
            rows.append(res.summary())
            print(json.dumps(rows[-1]), flush=True)

    def cell(m):
        e = "-" if m["median_3d_m"] is None else f"{100 * m['median_3d_m']:.1f} cm"
        return f"{e} ({100 * m['detection_rate']:.0f} %)"

    print()
    print("| k | mode | steps | real held-out before | after | sim val before | after |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(
            f"| {r['k']} | {r['mode']} | {r['steps']} | {cell(r['real_held_out_before'])} | "
            f"{cell(r['real_held_out_after'])} | {cell(r['sim_val_before'])} | "
            f"{cell(r['sim_val_after'])} |"
        )
    print("cells: median 3D error of the centre (detection rate)")
    print(f"load {os.getloadavg()[:2]}")


if __name__ == "__main__":
    main()
