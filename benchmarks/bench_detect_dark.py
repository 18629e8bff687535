"""A detector on randomized frames as rendered and with the part's own depth removed: what a
dark, IR-absorbing (or mirror-like) part shows a depth camera while the rest of the scene is
measured as usual. The frames are the first detector's randomization (its ``config.yaml``) at
indices it never trained or validated on, those with at least 50 visible part pixels, and
every detector is judged on the same frames; "removed" zeroes the depth on the part's visible
pixels (``Sample.mask``).

python benchmarks/bench_detect_dark.py DET [DET ...] [--frames 150] [--first 300000]
    [--no-return-share S]

``--no-return-share S`` sets that detector setting (a highest peak over a depth hole kept
unchecked) on every detector; "none" turns it off.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from sim2real.core.yaml_io import read_yaml_mapping
from sim2real.detect.detector import detect_frame, load_detector
from sim2real.detect.render_rgbd import SampleRenderer
from sim2real.detect.train import TrainConfig
from sim2real.models.part import load_part

MIN_PART_PX = 50


def frames_of(det_dir: Path, first: int, count: int) -> list:
    """The randomized samples of the detector's own scene with the part in view."""
    cfg = TrainConfig.model_validate(read_yaml_mapping(det_dir / "config.yaml"))
    net = cfg.network
    scene = cfg.scene.model_copy(update={"width_px": net.width_px, "height_px": net.height_px})
    part = load_part(load_detector(det_dir).info.model_path)
    renderer = SampleRenderer(part, scene, seed=int(cfg.seed))
    samples = (renderer.sample(i) for i in range(first, first + count))
    return [s for s in samples if s.mask.sum() >= MIN_PART_PX]


def score(detector, samples, remove_part_depth: bool) -> tuple[float, float, float | None]:
    """(share found, share found within 5 cm, median 3D error of those found [m])."""
    centre = detector.geometry.centre_part_m
    errors, found = [], 0
    for s in samples:
        depth = np.where(s.mask, 0.0, s.depth_m) if remove_part_depth else s.depth_m
        d = detect_frame(detector, s.rgb, depth.astype(np.float32), s.K)
        if d.found:
            found += 1
            truth = s.T_cam_part[:3, :3] @ centre + s.T_cam_part[:3, 3]
            errors.append(float(np.linalg.norm(np.asarray(d.position_m) - truth)))
    errors_m = np.array(errors)
    n = max(len(samples), 1)
    median = float(np.median(errors_m)) if len(errors_m) else None
    return found / n, float(np.sum(errors_m < 0.05)) / n, median


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("det", type=Path, nargs="+")
    ap.add_argument("--frames", type=int, default=150, help="frames rendered per detector")
    ap.add_argument("--first", type=int, default=300000, help="the first frame index")
    ap.add_argument("--no-return-share", default=None, help="a share, or 'none': off")
    args = ap.parse_args()
    print("| detector | frames | depth on the part | found | within 5 cm | median 3D (found) |")
    print("| --- | --- | --- | --- | --- | --- |")
    samples = frames_of(args.det[0], args.first, args.frames)
    for det_dir in args.det:
        detector = load_detector(det_dir)
        if args.no_return_share is not None:
            value = None if args.no_return_share == "none" else float(args.no_return_share)
            detector.info.settings.no_return_share = value
        for removed in (False, True):
            found, near, median = score(detector, samples, removed)
            cm = "-" if median is None else f"{100 * median:.1f} cm"
            print(f"| {det_dir.name} | {len(samples)} | {'removed' if removed else 'as rendered'} "
                  f"| {100 * found:.0f} % | {100 * near:.0f} % | {cm} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
