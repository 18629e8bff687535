"""The detector trained only in simulation, judged on real frames: the shared ViSP RGB-D
sequence (the 8.5 cm cube, reference poses in scene_gt.json) and the M3T frame (the triangle,
M3T's pose; its depth camera's frame moved into the colour camera). Prints the median 3D error of the bounding-box centre, its 2D error in
the image's own pixels, the depth error and the detection rate, for the detector as shipped
(peaks checked against the depth, detect/verify.py) and for its network alone (the highest
peak: Tobin's measure); the baseline in the same run is the centre of the image at the median
reference depth (what a detector that knows only the working distance would say).

python benchmarks/bench_detect_real.py --visp DET_CUBE [--m3t DET_TRIANGLE] [--figures DIR]

Each detector is also run on the real frames its part is not in (the cube's: the M3T frame
and Open3D's TUM sample; the triangle's: the 40 ViSP frames and the TUM sample): every
"found" there is false.

No value here is fitted to these files: the detectors were trained on randomized frames only.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from sim2real.core.data import data_root
from sim2real.detect.detector import load_detector
from sim2real.detect.evaluate import frame_error, summarize
from sim2real.detect.run import detect_sequence, sequence_frames


def visp_frames(root: Path):
    from sim2real.tracking.sequence import load_sequence

    folder = root / "rgbd-visp-rbt"
    seq = load_sequence(folder, obj_id=1)
    return list(sequence_frames(seq, folder))


def m3t_frames(root: Path):
    """The M3T colour frame with its depth frame moved into the colour camera (two cameras,
    their poses in the camera files: what `detect run --frames DEPTH --camera DEPTH_CAM
    --color RGB --color-camera RGB_CAM` reads), and M3T's pose of the triangle."""
    from sim2real.core.camera_io import load_camera_pose
    from sim2real.core.pose import invert_pose, load_pose_file
    from sim2real.tracking.sequence import load_sequence

    d = root / "depth-m3t"
    T = (
        invert_pose(load_camera_pose(d / "color_camera.yaml"))
        @ load_pose_file(d / "triangle_pose_optimizer_test.txt")
        @ load_pose_file(d / "triangle.yaml")
    )
    depth = [d / "depth_camera_image_200.png"]
    seq = load_sequence(depth, d / "depth_camera.yaml", color=[d / "color_camera_image_200.png"],
                        color_camera=d / "color_camera.yaml")  # fmt: skip
    return [(frame, rgb, z, K, T) for frame, rgb, z, K, _ in sequence_frames(seq, depth)]


def tum_frames(root: Path):
    """Open3D's TUM RGB-D sample (an office desk: neither part in it), depth registered to
    colour, PrimeSense intrinsics."""
    from sim2real.tracking.sequence import load_sequence

    d = root / "depth-open3d"
    depth = [d / "TUM_depth.png"]
    seq = load_sequence(
        depth, d / "camera_primesense.json", encoding="tum", color=[d / "TUM_color.png"]
    )
    return [
        (f"TUM {frame}", rgb, z, K, None) for frame, rgb, z, K, _ in sequence_frames(seq, depth)
    ]


def without_the_part(name: str, det_dir: Path, frames) -> None:
    """Real frames in which the detector's part is not: each "found" is a false detection.
    As shipped, "found" says the highest heatmap peak reached ``min_confidence`` (the depth
    then picks among the peaks); the confidence and depth agreement of each false one are
    printed, the numbers a user can gate on."""
    detector = load_detector(det_dir)
    run = detect_sequence(detector, frames)
    found = [(f, d) for f, d in run.detections if d.found]
    print(f"{name:<6} real frames without the part: found in {len(found)} of {len(frames)}")
    for f, d in found[:5]:
        agreement = "-" if d.depth_agreement is None else f"{d.depth_agreement:.2f}"
        print(
            f"{name:<6}   false: frame {f}, confidence {d.confidence:.2f}, depth agreement {agreement}"
        )
    if len(found) > 5:
        conf = [d.confidence for _, d in found]
        agree = [d.depth_agreement for _, d in found if d.depth_agreement is not None]
        spans = f"confidence {min(conf):.2f}-{max(conf):.2f}"
        if agree:
            spans += f", depth agreement {min(agree):.2f}-{max(agree):.2f} ({len(agree)} checked)"
        print(f"{name:<6}   ... {len(found) - 5} more; all of them: {spans}")


class _Blind:
    """Baseline: the image centre at the median reference depth, always "found"."""

    def __init__(self, z_m: float):
        self.z_m = z_m

    def detect(self, K):
        from sim2real.detect.detection import Detection

        c = np.array([K[0, 2], K[1, 2]])
        return Detection(True, 1.0, np.array([0.0, 0.0, self.z_m]), c)


def _row(name: str, label: str, m) -> None:
    s = m.summary()
    e3 = "-" if s["median_3d_m"] is None else f"{100 * s['median_3d_m']:.2f} cm"
    e2 = "-" if s["median_2d_px"] is None else f"{s['median_2d_px']:.1f} px"
    ez = "-" if s["median_z_m"] is None else f"{100 * s['median_z_m']:.2f} cm"
    print(
        f"{name:<6} {label:<30} frames {s['frames']:>3}  detected {100 * s['detection_rate']:5.1f} %"
        f"  median 3D {e3:>9}  2D {e2:>8}  depth {ez:>8}  within 5 cm {100 * s['within_5cm']:5.1f} %"
    )


def judge(name: str, det_dir: Path, frames, figures: Path | None) -> None:
    """Three rows: the detector as shipped (peaks checked against the depth where it has
    surface points and the frame has depth), its network alone (the highest peak, the pose
    from the keypoints: Tobin's measure), and the image-centre baseline."""
    detector = load_detector(det_dir)
    run = detect_sequence(detector, frames)
    settings = detector.info.settings
    detector.info.settings = settings.model_copy(update={"verify": False})
    alone = detect_sequence(detector, frames)
    detector.info.settings = settings
    centre = detector.geometry.centre_part_m
    z = np.median([(T[:3, :3] @ centre + T[:3, 3])[2] for *_, T in frames])
    blind = _Blind(float(z))
    base = summarize([frame_error(f, blind.detect(K), T, centre, K) for f, _, _, K, T in frames])
    checked = sum(d.depth_agreement is not None for _, d in run.detections)
    _row(name, f"detector (depth-checked {checked})", run.metrics)
    _row(name, "network alone (highest peak)", alone.metrics)
    _row(name, "baseline (image centre)", base)
    if run.metrics.median_3d_m is not None and base.median_3d_m:
        print(
            f"{name:<6} 3D error detector / baseline: {run.metrics.median_3d_m / base.median_3d_m:.2f}"
        )
    print(
        f"{name:<6} median ms per frame (incl. resize, PnP): {np.median(run.ms_per_frame):.1f} "
        f"as shipped, {np.median(alone.ms_per_frame):.1f} network alone"
    )
    if figures is not None:
        from sim2real.detect.report import real_detections_figure

        figures.mkdir(parents=True, exist_ok=True)
        real_detections_figure(figures / f"real_{name}.png", frames, run, detector, name)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--visp", type=Path, help="detector trained for models/cube.obj")
    ap.add_argument("--m3t", type=Path, help="detector trained for depth-m3t/triangle.obj")
    ap.add_argument("--figures", type=Path, default=None, help="folder for pictures")
    args = ap.parse_args()
    root = data_root() / "real"
    if args.visp:
        judge("visp", args.visp, visp_frames(root), args.figures)
        others = [(f"M3T {f}", *rest) for f, *rest in m3t_frames(root)] + tum_frames(root)
        without_the_part("visp", args.visp, [(*f[:4], None) for f in others])
    if args.m3t:
        judge("m3t", args.m3t, m3t_frames(root), args.figures)
        others = [(f"ViSP {f}", *rest) for f, *rest in visp_frames(root)] + tum_frames(root)
        without_the_part("m3t", args.m3t, [(*f[:4], None) for f in others])


if __name__ == "__main__":
    main()
