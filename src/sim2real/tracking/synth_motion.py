"""The part's motion in a synthetic sequence (``tracking.synth``): where the camera stands, and
the part's trajectory for each motion kind (smooth drift, fast minimum-jerk moves, leaving the
view), at 30 Hz, world frame (table top z = 0, z up)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.errors import InputError
from sim2real.core.mesh_io import Mesh
from sim2real.core.pose import look_at, make_pose, rpy_deg_to_matrix
from sim2real.models.symmetry import axis_rotation

FPS = 30.0
ELEVATION_DEG = 50.0
SPAN_OF_WIDTH = 0.30
DISTANCE_RANGE_M = (0.4, 1.2)
RANGE_MARGIN_M = 0.03
"""The part's bounding sphere stays this far beyond the sensor's minimum range."""
FAST_SPEED_M_S = 1.0
FAST_TURN_DEG_S = 180.0
MINJERK_PEAK = 1.875  # peak of d/dtau of 10 tau^3 - 15 tau^4 + 6 tau^5


def _minjerk(tau: np.ndarray) -> np.ndarray:
    tau = np.clip(tau, 0.0, 1.0)
    return tau**3 * (10 - 15 * tau + 6 * tau**2)


@dataclass
class Layout:
    centre_part: np.ndarray  # bounding-sphere centre in the part frame
    radius_m: float
    distance_m: float
    height_m: float
    half_width_m: float  # image half-width at the part's distance (narrower side)
    half_height_m: float
    T_world_cam: np.ndarray


def scene_layout(
    mesh: Mesh, camera: CameraIntrinsics, diameter: float, min_range_m: float = 0.0
) -> Layout:
    """Where the camera stands: the part spans about ``SPAN_OF_WIDTH`` of the image, no nearer
    than the sensor returns depth (``min_range_m``: a Kinect's 0.5 m)."""
    centre = mesh.centre_m
    radius = float(np.linalg.norm(mesh.vertices - centre, axis=1).max())
    distance = diameter * camera.fx / (SPAN_OF_WIDTH * camera.width)
    distance = float(np.clip(distance, *DISTANCE_RANGE_M))
    distance = max(distance, radius + 0.3, min_range_m + radius + RANGE_MARGIN_M)
    height = radius + 0.01
    el = np.radians(ELEVATION_DEG)
    target = np.array([0.0, 0.0, height])
    eye = target + distance * np.array([0.0, -np.cos(el), np.sin(el)])
    half_w = distance * min(camera.cx + 0.5, camera.width - 0.5 - camera.cx) / camera.fx
    half_h = distance * min(camera.cy + 0.5, camera.height - 0.5 - camera.cy) / camera.fy
    return Layout(centre, radius, distance, height, half_w, half_h, look_at(eye, target))


def _smooth(t: np.ndarray, rng: np.random.Generator, scale: float) -> tuple[np.ndarray, list]:
    """(N, 3) offsets [m] of a few cm/s and (N,) rotations of about 20 deg/s."""
    ph = rng.uniform(0, 2 * np.pi, 6)
    offsets = np.stack(
        [
            scale * 0.05 * np.sin(2 * np.pi * 0.12 * t + ph[0]),
            scale * 0.03 * np.sin(2 * np.pi * 0.09 * t + ph[1]),
            scale * 0.01 * (1 + np.sin(2 * np.pi * 0.10 * t + ph[2])),
        ],
        axis=1,
    )
    yaw_rate = 15.0 * rng.choice([-1.0, 1.0])
    rotations = [
        rpy_deg_to_matrix(
            12 * np.sin(2 * np.pi * 0.13 * ti + ph[3]),
            12 * np.sin(2 * np.pi * 0.11 * ti + ph[4]),
            yaw_rate * ti,
        )
        for ti in t
    ]
    return offsets, rotations


def _fast(n: int, rng: np.random.Generator, box: np.ndarray) -> tuple[np.ndarray, list]:
    """Minimum-jerk moves between random waypoints in [-box, box] (z in [0, 2 box_z]), each
    peaking at FAST_SPEED_M_S (when long enough) and at FAST_TURN_DEG_S."""
    offsets, rotations = [np.zeros(3)], [np.eye(3)]
    while len(offsets) < n:
        start, R0 = offsets[-1], rotations[-1]
        for _ in range(20):
            goal = rng.uniform(-box, box) + np.array([0.0, 0.0, box[2]])
            if np.linalg.norm(goal - start) >= 0.8 * box[0]:
                break
        length = float(np.linalg.norm(goal - start))
        steps = max(8, int(np.ceil(MINJERK_PEAK * length / FAST_SPEED_M_S * FPS)))
        angle = np.radians(FAST_TURN_DEG_S) * (steps / FPS) / MINJERK_PEAK
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        s = _minjerk(np.arange(1, steps + 1) / steps)
        offsets += [start + si * (goal - start) for si in s]
        rotations += [axis_rotation(axis, angle * si) @ R0 for si in s]
    return np.array(offsets[:n]), rotations[:n]


def _leave_view(n: int, layout: Layout, camera: CameraIntrinsics) -> np.ndarray:
    """(N,) lateral offset [m]: in view, out to the left, ~20 frames unseen (while it is
    moved, unseen, to the right), then back in from the right to another place."""
    move = int(np.clip(round(0.25 * n), 4, 25))
    unseen = int(np.clip(round(0.2 * n), 3, 20))
    z, r, margin = layout.distance_m, layout.radius_m, 0.03  # margin: smooth drift, depth change
    phi_l = np.arctan((camera.cx + 0.5) / camera.fx)
    phi_r = np.arctan((camera.width - 0.5 - camera.cx) / camera.fx)
    gone_l = -(z * np.tan(phi_l) + r / np.cos(phi_l))  # the bounding sphere leaves the view
    gone_r = z * np.tan(phi_r) + r / np.cos(phi_r)
    x_in_l = -0.5 * max(layout.half_width_m - r, 0.0)
    x_in_r = 0.5 * max(layout.half_width_m - r, 0.0)
    s = _minjerk(np.arange(1, move + 1) / move)
    exit_ = x_in_l + s * (gone_l - margin - x_in_l)
    entry = (gone_r + margin) + s * (x_in_r - gone_r - margin)
    hold = max(1, unseen - int(np.sum(exit_ < gone_l)) - int(np.sum(entry > gone_r)) - 1)
    if n < 2 * move + hold + 2:
        raise InputError(
            None, "--frames", f"leave-view needs at least {2 * move + hold + 2} frames"
        )
    before = (n - 2 * move - hold) // 2
    x = np.concatenate(
        [
            np.full(before, x_in_l),
            exit_,
            np.full(hold // 2, gone_l - margin),
            np.full(hold - hold // 2, gone_r + margin),
            np.concatenate([[gone_r + margin], entry[:-1]]),
        ]
    )
    return np.concatenate([x, np.full(n - len(x), x_in_r)])


def trajectory(motion: str, n: int, rng, layout: Layout, camera) -> list[np.ndarray]:
    """(N,) T_world_part."""
    t = np.arange(n) / FPS
    yaw0 = rpy_deg_to_matrix(0, 0, rng.uniform(0, 360))
    if motion == "fast":
        box = np.array(
            [
                min(0.15, 0.6 * max(layout.half_width_m - layout.radius_m, 0.02)),
                min(0.08, 0.6 * max(layout.half_height_m - layout.radius_m, 0.02)),
                0.03,
            ]
        )
        offsets, rotations = _fast(n, rng, box)
    else:
        offsets, rotations = _smooth(t, rng, 0.5 if motion == "leave-view" else 1.0)
        if motion == "leave-view":
            offsets[:, 0] += _leave_view(n, layout, camera)
    poses = []
    for offset, R in zip(offsets, rotations, strict=True):
        R_world = R @ yaw0
        centre = np.array([0.0, 0.0, layout.height_m]) + offset
        poses.append(make_pose(R_world, centre - R_world @ layout.centre_part))
    return poses
