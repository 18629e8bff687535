"""A tracker started by the detector (issue 19): from each start frame of a real sequence with
reference poses, a fresh tracker with no pose and the detector as its proposer; a start
succeeds when the tracker reports `tracking` (or `recovered`) within 3 frames at a pose within
10 % of the part's diameter (ADD-S) of the reference. Against the tracker's own global search
(no detector) from the same starts, in the same run.

python benchmarks/bench_detect_track.py DET [--frames SEQ] [--mesh MESH] [--step 2] [--first K]

Default SEQ and MESH: the shared real sequence (rgbd-visp-rbt) and its cube. DET: a folder of
`sim2real detect train` for that mesh.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from sim2real.core.data import data_root
from sim2real.core.pose import invert_pose
from sim2real.models.part import load_part
from sim2real.tracking.pose_errors import adds_m, diameter_m, model_points
from sim2real.tracking.proposals import detector_proposer
from sim2real.tracking.sequence import load_sequence
from sim2real.tracking.tracker import Tracker

WITHIN_FRAMES = 3


def start_from(part, sequence, k: int, proposer, points, diameter) -> tuple[bool, bool, float]:
    """(success, reported at a wrong pose, ms of the first frame) from start frame index ``k``:
    the first frame reported `tracking` / `recovered` decides."""
    camera = sequence.color_camera
    T_cd = None if sequence.T_depth_color is None else invert_pose(sequence.T_depth_color)
    tracker = Tracker(part, sequence.camera, None, camera, T_cd)
    tracker.initialize(None)
    tracker.proposer = proposer
    first_ms = None
    for i in range(k, min(k + WITHIN_FRAMES, len(sequence))):
        t0 = time.perf_counter()
        r = tracker.update(sequence.read(i), sequence.read_color(i))
        first_ms = first_ms if first_ms is not None else (time.perf_counter() - t0) * 1e3
        gt = sequence.gt.get(sequence.frame_ids[i]) if sequence.gt else None
        if r.status in ("tracking", "recovered") and gt is not None:
            right = adds_m(r.T_cam_part, gt, points) < 0.1 * diameter
            return right, not right, first_ms
    return False, False, first_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("detector", type=Path)
    parser.add_argument("--frames", type=Path)
    parser.add_argument("--mesh", type=Path)
    parser.add_argument("--step", type=int, default=2, help="every n-th frame is a start")
    parser.add_argument(
        "--first", type=int, default=0, help="the first start (skip frames a detector was tuned on)"
    )
    args = parser.parse_args()
    root = data_root() / "real" / "rgbd-visp-rbt"
    frames, mesh = args.frames or root, args.mesh or root / "models" / "cube.obj"
    part = load_part(mesh)
    sequence = load_sequence(frames)
    points = model_points(part.mesh)
    diameter = diameter_m(points)
    camera = sequence.color_camera or sequence.camera
    proposer = detector_proposer(args.detector, part.mesh, camera, sequence.T_depth_color)
    starts = list(range(args.first, len(sequence), args.step))
    print(f"{frames}: {len(starts)} starts, success = `tracking` within {WITHIN_FRAMES} frames "
          f"at ADD-S < 10 % of {1e3 * diameter:.0f} mm")  # fmt: skip
    for name, prop in (("detector", proposer), ("global search (no detector)", None)):
        results = [start_from(part, sequence, k, prop, points, diameter) for k in starts]
        ok, wrong = [r[0] for r in results], [r[1] for r in results]
        ms = statistics.median(r[2] for r in results)
        print(f"| {name} | {100 * np.mean(ok):.0f} % of {len(ok)} | reported at a wrong pose: "
              f"{sum(wrong)} | first frame median {ms:.0f} ms |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
