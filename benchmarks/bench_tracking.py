"""Tracking speed and accuracy: our tracker against plain Open3D ICP, on the same frames.

python benchmarks/bench_tracking.py [--frames 60]

A 40,192-triangle part (the built-in bracket, subdivided) on a table 0.6 m from a 640x480 camera, moving
smoothly (about 5 cm/s and 20 deg/s at 30 Hz), rendered with the realsense-d435 noise.
(ours) ``Tracker.update`` per frame, with depth only and with colour too (the part painted
red on a checkerboard, registered to depth); (baseline) Open3D point-to-plane ICP of the whole
model cloud (5,000 points with normals) against the whole frame's points (normals estimated
each frame), from the previous pose. Lost frames: the part taken out of the frames after they
are tracked, the tracker searching for it (static camera). Time per frame excludes reading the
frame; medians over frames, and CPU time of the process beside wall time (the machine may be
shared). Accuracy: ADD-S (mean distance to the closest model point) per frame.
Targets (issue 16): depth only <= 3 ms, colour + depth <= 6 ms, a lost frame <= 150 ms.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.pose import invert_pose, look_at, make_pose, rpy_deg_to_matrix
from sim2real.sensors.demo_part import machined_bracket
from sim2real.sensors.presets import get_preset
from sim2real.sensors.render import DepthRenderer
from sim2real.sensors.scene import make_scene
from sim2real.tracking.tracker import Tracker


def sequence(part, camera, frames: int, seed: int = 0):
    """Poses and noisy depth frames of the part gliding and turning on its table."""
    profile = get_preset("realsense-d435").profile
    T_cam_world = invert_pose(look_at([0.2, -0.3, 0.45], [0.0, 0.0, 0.0]))
    poses, depths = [], []
    for i in range(frames):
        t = i / 30
        T_world_part = make_pose(
            rpy_deg_to_matrix(0, 0, 20 * t), [0.05 * np.sin(t), 0.03 * t, 0.03]
        )
        T = T_cam_world @ T_world_part
        scene = make_scene([part], [T], plane=True)
        depths.append(DepthRenderer(scene, camera).render(profile, seed=seed + i).depth_m)
        poses.append(T)
    return poses, depths


def painted(part, T, camera, seed: int) -> np.ndarray:
    """(H, W, 3) uint8: the part in red over a grey-and-blue checkerboard, colour noise 6."""
    frame = DepthRenderer(make_scene([part], [T]), camera).render(None).depth_m > 0
    yy, xx = np.mgrid[0 : camera.height, 0 : camera.width]
    checker = ((xx // 14 + yy // 14) % 2).astype(bool)
    img = np.where(checker[..., None], np.array([210, 210, 205]), np.array([40, 60, 110]))
    img = np.where(frame[..., None], np.array([200, 40, 30]), img).astype(np.float64)
    img += np.random.default_rng(seed).normal(0, 6, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def run_tracker(part, camera, poses, depths, colors, points, tree):
    """(wall ms, CPU ms, ADD-S mm, statuses) per frame."""
    tracker = Tracker(part, camera)
    tracker.initialize(poses[0])
    wall, cpu, err, statuses = [], [], [], []
    for i, (depth, T) in enumerate(zip(depths, poses, strict=True)):
        c0 = time.process_time()
        r = tracker.update(depth, None if colors is None else colors[i])
        cpu.append((time.process_time() - c0) * 1e3)
        wall.append(r.ms)
        err.append(adds_mm(r.T_cam_part, T, points, tree))
        statuses.append(r.status)
    return wall, cpu, err, statuses, tracker


def adds_mm(T_est, T_gt, points, tree) -> float:
    est = points @ T_est[:3, :3].T + T_est[:3, 3]
    gt_inv = invert_pose(T_gt)
    back = est @ gt_inv[:3, :3].T + gt_inv[:3, 3]  # into the part frame of the truth
    return 1e3 * float(tree.query(back)[0].mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=60)
    args = parser.parse_args()
    import open3d as o3d
    from scipy.spatial import cKDTree

    part = machined_bracket(subdivisions=3)
    camera = CameraIntrinsics.from_hfov(640, 480, 70.0)
    poses, depths = sequence(part, camera, args.frames)
    legacy = o3d.geometry.TriangleMesh(
        o3d.utility.Vector3dVector(part.vertices), o3d.utility.Vector3iVector(part.faces)
    )
    legacy.compute_triangle_normals()
    model = legacy.sample_points_uniformly(5000, use_triangle_normal=True)
    points = np.asarray(model.points)
    tree = cKDTree(points)

    colors = [painted(part, T, camera, i) for i, T in enumerate(poses)]
    ours_ms, ours_cpu, ours_err, statuses, tracker = run_tracker(
        part, camera, poses, depths, None, points, tree
    )
    rgb_ms, rgb_cpu, rgb_err, rgb_statuses, _ = run_tracker(
        part, camera, poses, depths, colors, points, tree
    )
    # the part taken away: each frame now a lost frame, searched (static camera)
    lost_ms, lost_cpu = [], []
    table_only = DepthRenderer(
        make_scene([part], [poses[-1] @ make_pose(np.eye(3), [0, 0, -100.0])], plane=True), camera
    )
    for i in range(12):
        frame = table_only.render(get_preset("realsense-d435").profile, seed=500 + i).depth_m
        c0 = time.process_time()
        r = tracker.update(frame)
        lost_cpu.append((time.process_time() - c0) * 1e3)
        lost_ms.append(r.ms)

    reg = o3d.pipelines.registration
    T_prev = poses[0]
    base_ms, base_err = [], []
    for depth, T in zip(depths, poses, strict=True):
        t0 = time.perf_counter()
        cloud = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(camera.backproject(depth)))
        cloud.estimate_normals(o3d.geometry.KDTreeSearchParamHybrid(radius=0.01, max_nn=20))
        result = reg.registration_icp(
            model,
            cloud,
            0.02,
            T_prev,
            reg.TransformationEstimationPointToPlane(),
            reg.ICPConvergenceCriteria(max_iteration=30),
        )
        base_ms.append((time.perf_counter() - t0) * 1e3)
        T_prev = np.asarray(result.transformation)
        base_err.append(adds_mm(T_prev, T, points, tree))

    diameter = 1e3 * part.diameter_m
    print(
        f"{args.frames} frames 640x480, part {len(part.faces)} triangles, diameter {diameter:.0f} mm (bounding box)"
    )
    rows = (
        ("ours, depth", ours_ms, ours_cpu, ours_err),
        ("ours, colour + depth", rgb_ms, rgb_cpu, rgb_err),
        ("Open3D ICP", base_ms, None, base_err),
    )
    for name, ms, cpu, err in rows:
        within = np.mean(np.array(err) < 0.1 * diameter) * 100
        cpu_text = "" if cpu is None else f" (CPU {statistics.median(cpu):.1f})"
        print(
            f"{name:21s} median {statistics.median(ms):6.1f} ms/frame{cpu_text} | ADD-S median "
            f"{statistics.median(err):.2f} mm, max {max(err):.2f} mm, < 10 % diameter on "
            f"{within:.0f} % of frames"
        )
    print(
        f"ratio (ours, depth / Open3D ICP time): {statistics.median(ours_ms) / statistics.median(base_ms):.3f}; statuses: "
        + ", ".join(f"{s} {statuses.count(s)}" for s in ("tracking", "recovered", "lost"))
        + "; with colour: "
        + ", ".join(f"{s} {rgb_statuses.count(s)}" for s in ("tracking", "recovered", "lost"))
    )
    print(
        f"lost frames (part taken away, searched): median {statistics.median(lost_ms):.0f} ms "
        f"(CPU {statistics.median(lost_cpu):.0f}) over {len(lost_ms)} frames"
    )


if __name__ == "__main__":
    main()
