"""The tracker started by the detector on randomized RGB-D frames with ground truth: each frame
a fresh tracker whose only proposer is the detector (`track run --init detect:DET` on its first
frame), counted as a re-found pose reported right or wrong (ADD-S under or over 10 % of the
part's bounding-box diagonal), or none. A wrong one is what `adapt` would act on. The
randomized distractors are primitives (boxes among them), so for a box-like part a "wrong" pose
can sit on a look-alike.

python benchmarks/bench_detect_recoveries.py DET [--frames 60] [--seed 3]

The frames are `detect dataset`'s (the detector's part, the shipped randomization, its own
seed: not frames the detector trained on), each with its own intrinsics.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.depth_io import read_depth
from sim2real.core.image_io import read_rgb
from sim2real.detect.bop_writer import frame_files, read_labels
from sim2real.detect.dataset import generate_dataset
from sim2real.detect.detector import load_detector
from sim2real.detect.verify import surface_samples
from sim2real.models.part import load_part
from sim2real.tracking.pose_errors import adds_m
from sim2real.tracking.proposals import detector_proposer
from sim2real.tracking.tracker import Tracker


def dataset_frames(root: Path):
    """(frame, rgb, depth_m, K, T_cam_part) of a `detect dataset` folder, each frame with its own
    intrinsics."""
    for index, (T, K, depth_scale_mm) in sorted(read_labels(root).items()):
        files = frame_files(root, index)
        depth = read_depth(files["depth"], depth_scale=depth_scale_mm / 1000.0)
        yield index, read_rgb(files["rgb"]), depth, K, T


def tracker_pose(detector, part, rgb, depth, K) -> np.ndarray | None:
    """The pose a fresh tracker whose only proposer is the detector reports on this frame
    (`tracking` or `recovered`), or None; the camera is K's at the depth image's size."""
    h, w = depth.shape
    camera = CameraIntrinsics(fx=K[0, 0], fy=K[1, 1], cx=K[0, 2], cy=K[1, 2], width=w, height=h)
    tracker = Tracker(part, camera, None, camera, None)
    tracker.initialize(None)
    tracker.proposer = detector_proposer(detector, part.mesh, camera, None, camera)
    result = tracker.update(depth, rgb)
    return result.T_cam_part if result.status in ("tracking", "recovered") else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("det", type=Path)
    ap.add_argument("--frames", type=int, default=60)
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()
    detector = load_detector(args.det)
    part = load_part(detector.info.model_path)
    points = surface_samples(part.mesh, 500)[:, :3]
    bar = 0.1 * part.mesh.diameter_m
    counts = {"right": 0, "wrong": 0, "none": 0}
    wrong_mm = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ds"
        generate_dataset(detector.info.model_path, root, args.frames, seed=args.seed)
        for _, rgb, depth, K, T_ref in dataset_frames(root):
            T = tracker_pose(detector, part, rgb, depth, K)
            if T is None:
                counts["none"] += 1
                continue
            error = adds_m(T, T_ref, points)
            counts["right" if error < bar else "wrong"] += 1
            if error >= bar:
                wrong_mm.append(round(1e3 * error))
    reported = counts["right"] + counts["wrong"]
    print(f"{detector.info.model_name}: {args.frames} randomized frames (seed {args.seed}), a fresh "
          f"tracker each, started by the detector")  # fmt: skip
    print(
        f"  reported a pose in {reported}: right {counts['right']}, wrong {counts['wrong']} "
        f"(ADD-S >= {1e3 * bar:.1f} mm: {sorted(wrong_mm)} mm); none in {counts['none']}"
    )
    if reported:
        print(f"  precision of the reported poses {100 * counts['right'] / reported:.1f} %")


if __name__ == "__main__":
    main()
