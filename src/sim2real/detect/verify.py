"""Detections checked against the depth image. A network trained only in simulation can give
another compact object on the table a peak as high as the part's (the real ViSP frames: the
yellow dragon beside the cube); the depth tells them apart. Each candidate's pose (PnP on its
keypoints, at its position) is refined by a short point-to-point ICP (Open3D) of the part's
camera-facing surface points onto the frame's points near it, then scored by how many of those
points the depth confirms. The candidate confirmed at the most points is kept. A candidate
whose keypoints give no pose (PnP fails often on a flat, symmetric part) is started from 12
rotations spread over the part's distinct orientations at its position instead.

The tolerances are fractions of the part's diameter, not fitted; the 30-degree tilts were
chosen after seeing the keypoints' rotation that far off on the real ViSP cube (RESULTS.md).
"""

from __future__ import annotations

import functools
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from sim2real.core.mesh_io import Mesh
from sim2real.detect.keypoints import project

SURFACE_POINTS = 256
"""Surface samples stored with a detector (enough to score a pose; a few kB of YAML)."""
AGREE_REL, AGREE_MIN_M = 0.05, 0.005
"""A point agrees with the depth within max(5 % of the diameter, 5 mm)."""
SEARCH_REL = 0.2
"""ICP pairs points at most 20 % of the diameter apart (the network's centres are off by 1-3 cm
on a 15 cm part)."""
CROP_REL = 0.75
"""The frame's points within 0.75 diameters of a candidate's centre take part in its ICP."""
ICP_ITERATIONS = 15
TILT_DEG = 30.0
"""ICP also starts from the keypoints' rotation tilted by this about the camera's x and y axes."""
MIN_POINTS = 20
START_ROTATIONS = 12
"""Rotations a candidate without a keypoint pose is started from (``start_rotations``)."""


def surface_samples(mesh: Mesh, n: int = SURFACE_POINTS, seed: int = 0) -> np.ndarray:
    """(n, 6) float64: points on ``mesh``'s surface (part frame, metres) and their unit face
    normals, area-weighted, seeded."""
    import trimesh

    tm = trimesh.Trimesh(mesh.vertices, mesh.faces, process=False)
    points, faces = trimesh.sample.sample_surface(tm, n, seed=seed)
    return np.c_[points, tm.face_normals[faces]]


@dataclass
class DepthCheck:
    """A pose refined onto the depth image and how well the depth confirms it."""

    T_cam_part: np.ndarray
    agreement: float
    """confirmed / camera-facing surface points."""
    confirmed: int
    facing: int


def _facing(surface: np.ndarray, T: np.ndarray) -> np.ndarray:
    """(M, 3) camera-frame points of ``surface`` whose normals face the camera at pose T."""
    p = surface[:, :3] @ T[:3, :3].T + T[:3, 3]
    n = surface[:, 3:] @ T[:3, :3].T
    return p[np.einsum("ij,ij->i", p, n) < 0]


def _observed(
    points: np.ndarray, depth_m: np.ndarray, K: np.ndarray, off_image: float = 0.0
) -> np.ndarray:
    """(M,) the measured depth at each camera-frame point's pixel (0: none), ``off_image``
    for a point outside the image or behind the camera."""
    h, w = depth_m.shape
    out = np.full(len(points), off_image)
    front = np.flatnonzero(points[:, 2] > 0)
    u, v = np.rint(project(points[front], K)).astype(np.intp).T
    inside = (u >= 0) & (u < w) & (v >= 0) & (v < h)
    out[front[inside]] = depth_m[v[inside], u[inside]]
    return out


def depth_agreement(
    surface: np.ndarray, T: np.ndarray, depth_m: np.ndarray, K: np.ndarray, diameter_m: float
) -> tuple[int, int]:
    """(confirmed, facing): the camera-facing surface points at pose T, and those the depth
    measures within the tolerance. Points the depth shows behind something, or does not
    measure, are not confirmed: a pose buried inside another object, or off the image, must
    not score by the few points that graze a surface."""
    p = _facing(surface, T)
    z_obs = _observed(p, depth_m, K)
    tol = max(AGREE_REL * diameter_m, AGREE_MIN_M)
    return int(np.sum((z_obs > 0) & (np.abs(z_obs - p[:, 2]) <= tol))), len(p)


def unmeasured_share(surface: np.ndarray, T: np.ndarray, depth_m: np.ndarray, K) -> float:
    """Share of the camera-facing surface points at pose T whose pixel has no depth (off the
    image counts as measured: a pose there is not over a hole)."""
    p = _facing(surface, T)
    if not len(p):
        return 0.0
    return float(np.mean(_observed(p, depth_m, K, off_image=np.inf) <= 0))


def _frame_points(depth_m: np.ndarray, K: np.ndarray, centre: np.ndarray, radius: float):
    """(N, 3) back-projected pixels within ``radius`` of ``centre`` (searched in its image box)."""
    h, w = depth_m.shape
    z = max(float(centre[2]), 1e-3)
    u0, v0 = K[0, 0] * centre[0] / z + K[0, 2], K[1, 1] * centre[1] / z + K[1, 2]
    ru, rv = K[0, 0] * radius / max(z - radius, 1e-3), K[1, 1] * radius / max(z - radius, 1e-3)
    a, b = max(int(u0 - ru), 0), min(int(u0 + ru) + 1, w)
    c, d = max(int(v0 - rv), 0), min(int(v0 + rv) + 1, h)
    if a >= b or c >= d:
        return np.zeros((0, 3))
    zz = depth_m[c:d:2, a:b:2].astype(np.float64)  # every 2nd pixel: ICP needs no more
    vv, uu = np.mgrid[c:d:2, a:b:2]
    ok = zz > 0
    pts = np.c_[
        (uu[ok] - K[0, 2]) / K[0, 0] * zz[ok], (vv[ok] - K[1, 2]) / K[1, 1] * zz[ok], zz[ok]
    ]
    return pts[np.linalg.norm(pts - centre, axis=1) < radius]


@functools.cache
def _tilts() -> np.ndarray:
    """(4, 3, 3) turns by +-TILT_DEG about the camera's x, then y axis (built once: they are
    constants, and scipy's Rotation per check cost half a millisecond a frame)."""
    from scipy.spatial.transform import Rotation

    vectors = [sign * np.radians(TILT_DEG) * axis for axis in np.eye(3)[:2] for sign in (1, -1)]
    return Rotation.from_rotvec(vectors).as_matrix()


def _tilted_starts(T0: np.ndarray, centre_cam: np.ndarray) -> list[np.ndarray]:
    """T0 and T0 turned by +-TILT_DEG about the camera's x and y axes through the part's
    centre: the keypoints' rotation can be some 30 degrees off on real frames (a symmetric
    part's corners are ambiguous), beyond the reach of ICP from T0 alone."""
    out = [T0]
    for R in _tilts():
        T = np.eye(4)
        T[:3, :3] = R
        T[:3, 3] = centre_cam - R @ centre_cam
        out.append(T @ T0)
    return out


def start_rotations(symmetries: np.ndarray, count: int = START_ROTATIONS) -> np.ndarray:
    """(count, 3, 3) part rotations spread over the part's distinct orientations: picked one by
    one, each the farthest from those already picked among 1,000 seeded random rotations (the
    identity first), where the distance between two is the smallest angle between them under
    the part's ``symmetries`` (S, 4, 4): a cube turned by a quarter is the same cube, so
    starts that differ by a symmetry would be one start."""
    from scipy.spatial.transform import Rotation

    pool = np.concatenate([np.eye(3)[None], Rotation.random(1000, random_state=0).as_matrix()])
    sym = np.asarray(symmetries, dtype=float).reshape(-1, 4, 4)[:, :3, :3]
    nearest = np.full(len(pool), -np.inf)  # cos-like: the trace of the closest pairing
    picked = [0]
    for _ in range(count - 1):
        last = pool[picked[-1]] @ sym  # (S, 3, 3): the last pick under every symmetry
        trace = np.einsum("nij,sij->ns", pool, last).max(axis=1)  # tr(P^T R S), the closest
        nearest = np.maximum(nearest, trace)
        picked.append(int(np.argmin(nearest)))
    return pool[picked]


@functools.cache
def _pool(pid: int) -> ThreadPoolExecutor:
    """The two threads the checks run on, started once per process (``pid``: a forked child
    has none of its parent's threads): starting them took 3 ms a frame."""
    return ThreadPoolExecutor(2, thread_name_prefix="depth-check")


def _icp(target, facing: np.ndarray, T: np.ndarray, reach_m: float) -> np.ndarray:
    """T refined by a point-to-point ICP (Open3D) of ``facing`` (camera-frame points at T) onto
    the ``target`` cloud, pairs at most ``reach_m`` apart."""
    import open3d as o3d

    reg = o3d.pipelines.registration
    source = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(facing))
    step = reg.registration_icp(
        source, target, reach_m, np.eye(4), reg.TransformationEstimationPointToPoint(),
        reg.ICPConvergenceCriteria(max_iteration=ICP_ITERATIONS),
    ).transformation  # fmt: skip
    return np.asarray(step) @ T


def check_pose(
    surface: np.ndarray, T0: np.ndarray, centre_part_m: np.ndarray, depth_m: np.ndarray,
    K: np.ndarray, diameter_m: float,
) -> DepthCheck | None:  # fmt: skip
    """``check_poses`` of one start."""
    return check_poses(surface, [T0], centre_part_m, depth_m, K, diameter_m)[0]


def check_poses(
    surface: np.ndarray, starts: list[np.ndarray | list[np.ndarray] | None],
    centre_part_m: np.ndarray, depth_m: np.ndarray, K: np.ndarray, diameter_m: float,
) -> list[DepthCheck | None]:  # fmt: skip
    """For each candidate, its start T0 and T0 tilted (``_tilted_starts``), or its list of
    starts as given (``core.pose.poses_at`` of ``start_rotations``), refined by ICP onto the
    frame's points near it; the one the depth confirms at the most surface points
    (``depth_agreement``) refined once more with pairs within the tolerance. None for a None
    start, one with too few frame points there, or one behind the camera.

    The ICP runs go two at a time (Open3D's ICP releases the GIL): a candidate's starts are
    queued as soon as its frame points are cut out, its fine run as soon as its starts are
    scored, while the other candidates' runs go on, so neither the threads nor the main
    thread's preparing and scoring wait on a stage boundary. Open3D runs one thread per call
    meanwhile: on a few hundred points its threads cost more than they save, the more so
    while torch's still spin after the network's forward pass (43 against 30 ms a frame,
    measured)."""
    import open3d as o3d

    coarse_m = max(SEARCH_REL * diameter_m, AGREE_MIN_M)
    fine_m = max(AGREE_REL * diameter_m, AGREE_MIN_M)
    out: list[DepthCheck | None] = [None] * len(starts)
    threads = o3d.utility.get_max_threads()
    o3d.utility.set_max_threads(1)
    try:
        pool = _pool(os.getpid())
        targets, coarse = {}, {}  # candidate -> frame cloud; candidate -> its starts' ICP runs
        for k, start in enumerate(starts):
            given = isinstance(start, list)
            T0 = (start[0] if start else None) if given else start
            if T0 is None or T0[2, 3] <= 0:
                continue
            centre = T0[:3, :3] @ centre_part_m + T0[:3, 3]
            scene = _frame_points(depth_m, K, centre, CROP_REL * diameter_m)
            if len(scene) < MIN_POINTS:
                continue
            tries = start if given else _tilted_starts(T0, centre)
            runs = [(T, _facing(surface, T)) for T in tries]
            runs = [(T, facing) for T, facing in runs if len(facing) >= MIN_POINTS]
            if runs:
                targets[k] = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(scene))
                coarse[k] = [
                    pool.submit(_icp, targets[k], facing, T, coarse_m) for T, facing in runs
                ]
        fine = {}
        for k, runs in coarse.items():
            best_score, best = -1, None  # the first of equals: as np.argmax
            for run in runs:
                T = run.result()
                score = depth_agreement(surface, T, depth_m, K, diameter_m)[0]
                if score > best_score:
                    best_score, best = score, T
            fine[k] = pool.submit(_icp, targets[k], _facing(surface, best), best, fine_m)
        refined = {k: run.result() for k, run in fine.items()}
    finally:
        o3d.utility.set_max_threads(threads)
    for k, T in refined.items():
        confirmed, facing = depth_agreement(surface, T, depth_m, K, diameter_m)
        out[k] = DepthCheck(T, confirmed / facing if facing else 0.0, confirmed, facing)
    return out
