"""Synthetic depth sequences with ground truth, for testing a tracker before owning a sensor.

The scene (world frame: table top z = 0, z up): the part floats above the table (its
bounding sphere clears it, so it may turn freely, as if held by a robot), 2-3 boxes stand on
the table behind it, and the camera looks down at 50 deg from ``distance_m`` (chosen so the
part spans about 30 % of the image width, within 0.4..1.2 m). Motions, at 30 Hz:

- ``smooth``: sinusoidal drift of a few cm/s and a turn of about 20 deg/s;
- ``fast``: back-to-back minimum-jerk moves between random waypoints, each peaking at
  1 m/s and 180 deg/s (or less for short moves);
- ``occluded``: ``smooth``, plus a bar (an arm or gripper reaching in from above) that
  slides in front of the part, hiding up to about 45 % of it (never over half), then
  away, every 2 s;
- ``leave-view``: ``smooth`` while a lateral move carries the part out of the image, where it
  stays ~20 frames (moved, unseen, to the other side), then brings it back elsewhere.

Each frame is rendered by :class:`sim2real.sensors.render.DepthRenderer` with the profile's
noise, seeded with ``seed + frame index``. ``visible`` is the fraction of the part's
unoccluded image area (even beyond the image border) that the camera sees.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sim2real.core.atomic import write_text_atomic
from sim2real.core.camera import CameraIntrinsics
from sim2real.core.errors import InputError
from sim2real.core.mesh_io import Mesh, validate_mesh
from sim2real.core.pose import invert_pose, look_at, make_pose, rpy_deg_to_matrix
from sim2real.tracking.metrics import GONE_MAX, diameter_m
from sim2real.tracking.sequence import write_bop_sequence, write_visible
from sim2real.tracking.symmetry import axis_rotation

MOTIONS = ("smooth", "fast", "occluded", "leave-view")
FPS = 30.0
ELEVATION_DEG = 50.0
SPAN_OF_WIDTH = 0.30
DISTANCE_RANGE_M = (0.4, 1.2)
FAST_SPEED_M_S = 1.0
FAST_TURN_DEG_S = 180.0
OCCLUDED_MAX = 0.42
OCCLUSION_PERIOD_FRAMES = 60
MINJERK_PEAK = 1.875  # peak of d/dtau of 10 tau^3 - 15 tau^4 + 6 tau^5


@dataclass
class SynthSequence:
    """A rendered sequence with its ground truth. Depth: (H, W) float32 metres, 0 = none."""

    camera: CameraIntrinsics
    depth_m: list[np.ndarray]
    T_cam_part: np.ndarray
    """(N, 4, 4) float64, metres: ground truth, also where the part is out of view."""
    visible: np.ndarray
    """(N,) visible fraction of the part (0 = out of view or hidden)."""
    status_gt: list[str]
    """'tracking' where >= 5 % of the part is visible, else 'lost'."""
    motion: str
    seed: int
    profile_name: str
    T_world_cam: np.ndarray
    distance_m: float
    diameter_m: float
    peak_speed_m_s: float
    peak_turn_deg_s: float
    render_ms: float
    """Mean time to make one frame (renders and visibility)."""

    def __len__(self) -> int:
        return len(self.depth_m)

    def info(self) -> dict:
        return {
            "motion": self.motion,
            "frames": len(self),
            "fps": FPS,
            "seed": self.seed,
            "profile": self.profile_name,
            "distance_m": self.distance_m,
            "diameter_m": self.diameter_m,
            "peak_speed_m_s": self.peak_speed_m_s,
            "peak_turn_deg_s": self.peak_turn_deg_s,
            "min_visible": float(self.visible.min()),
            "frames_out_of_view": int(np.sum(self.visible < GONE_MAX)),
            "T_world_cam": self.T_world_cam.tolist(),
        }

    def write(self, out_dir: str | Path, *, depth_scale_mm: float = 0.1) -> list[Path]:
        """BOP-like folder (``write_bop_sequence``), plus ``visible.json`` and ``synth.json``."""
        out_dir = Path(out_dir)
        paths = write_bop_sequence(
            out_dir, self.camera, self.depth_m, list(self.T_cam_part), depth_scale_mm=depth_scale_mm
        )
        write_visible(out_dir / "visible.json", dict(enumerate(self.visible.tolist())))
        write_text_atomic(out_dir / "synth.json", json.dumps(self.info(), indent=2) + "\n")
        return paths


def _minjerk(tau: np.ndarray) -> np.ndarray:
    tau = np.clip(tau, 0.0, 1.0)
    return tau**3 * (10 - 15 * tau + 6 * tau**2)


@dataclass
class _Layout:
    centre_part: np.ndarray  # bounding-sphere centre in the part frame
    radius_m: float
    distance_m: float
    height_m: float
    half_width_m: float  # image half-width at the part's distance (narrower side)
    half_height_m: float
    T_world_cam: np.ndarray


def _layout(mesh: Mesh, camera: CameraIntrinsics, diameter: float) -> _Layout:
    lo, hi = mesh.vertices.min(axis=0), mesh.vertices.max(axis=0)
    centre = (lo + hi) / 2
    radius = float(np.linalg.norm(mesh.vertices - centre, axis=1).max())
    distance = diameter * camera.fx / (SPAN_OF_WIDTH * camera.width)
    distance = float(np.clip(distance, *DISTANCE_RANGE_M))
    distance = max(distance, radius + 0.3)
    height = radius + 0.01
    el = np.radians(ELEVATION_DEG)
    target = np.array([0.0, 0.0, height])
    eye = target + distance * np.array([0.0, -np.cos(el), np.sin(el)])
    half_w = distance * min(camera.cx + 0.5, camera.width - 0.5 - camera.cx) / camera.fx
    half_h = distance * min(camera.cy + 0.5, camera.height - 0.5 - camera.cy) / camera.fy
    return _Layout(centre, radius, distance, height, half_w, half_h, look_at(eye, target))


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


def _leave_view(n: int, layout: _Layout, camera: CameraIntrinsics) -> np.ndarray:
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


def _trajectory(motion: str, n: int, rng, layout: _Layout, camera) -> list[np.ndarray]:
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


def _box(extents, T: np.ndarray, name: str) -> Mesh:
    from trimesh.creation import box

    b = box(extents=extents)
    return validate_mesh(b.vertices @ T[:3, :3].T + T[:3, 3], b.faces, "synthetic", name)


def _distractors(rng, layout: _Layout, diameter: float) -> list[Mesh]:
    """2-3 boxes on the table behind the part's region of motion (they never hide it)."""
    count = int(rng.integers(2, 4))
    meshes = []
    for k in range(count):
        w, l_ = rng.uniform(0.4, 0.8, 2) * diameter
        h = float(min(rng.uniform(0.3, 0.6) * diameter, layout.radius_m))
        y = 0.08 + layout.radius_m + 0.5 * max(w, l_) + 0.03 + rng.uniform(0, 0.05)
        spread = max(layout.half_width_m - 0.5 * max(w, l_), 0.0)
        x = (-0.6 + 1.2 * k / (count - 1)) * spread + rng.uniform(-0.02, 0.02)
        T = make_pose(rpy_deg_to_matrix(0, 0, rng.uniform(0, 90)), [x, y, h / 2])
        meshes.append(_box((w, l_, h), T, f"box{k}"))
    return meshes


class _PartAlone:
    """The part alone, in its own frame, for visibility: rays are cast from the camera into
    the part frame over the window its bounding sphere covers (beyond the image too), so the
    part's whole unoccluded image area is counted without rebuilding a scene per frame."""

    def __init__(self, mesh: Mesh, radius_m: float):
        import open3d as o3d

        self._o3d = o3d
        self._scene = o3d.t.geometry.RaycastingScene()
        self._scene.add_triangles(
            o3d.core.Tensor(np.ascontiguousarray(mesh.vertices, dtype=np.float32)),
            o3d.core.Tensor(np.ascontiguousarray(mesh.faces, dtype=np.uint32)),
        )
        self._centre = (mesh.vertices.min(axis=0) + mesh.vertices.max(axis=0)) / 2
        self._radius = radius_m

    def pixels(self, T_cam_part: np.ndarray, camera: CameraIntrinsics):
        """(count, (P, 2) normalised image coordinates, nearest depth [m]) of the part's
        pixels, or None when no pixel of it is in the image."""
        R, t = T_cam_part[:3, :3], T_cam_part[:3, 3]
        centre = R @ self._centre + t
        if centre[2] <= self._radius:
            raise InputError(None, "camera", "the part comes within its own size of the camera")
        r_px = max(camera.fx, camera.fy) * self._radius / (centre[2] - self._radius) + 2
        u_c = camera.fx * centre[0] / centre[2] + camera.cx
        v_c = camera.fy * centre[1] / centre[2] + camera.cy
        if (
            u_c + r_px < 0
            or u_c - r_px > camera.width
            or v_c + r_px < 0
            or v_c - r_px > camera.height
        ):
            return None
        u = np.arange(np.floor(u_c - r_px), np.ceil(u_c + r_px) + 1)
        v = np.arange(np.floor(v_c - r_px), np.ceil(v_c + r_px) + 1)
        a, b = (u - camera.cx) / camera.fx, (v - camera.cy) / camera.fy
        rays = np.empty((len(v), len(u), 6), dtype=np.float32)
        rays[..., :3] = -R.T @ t  # the camera centre in the part frame
        rays[..., 3:] = np.stack(np.broadcast_arrays(a[None, :], b[:, None], 1.0), axis=-1) @ R
        depth = self._scene.cast_rays(self._o3d.core.Tensor(rays))["t_hit"].numpy()
        hit = np.isfinite(depth)
        inside = np.zeros_like(hit)
        inside[np.ix_((v >= 0) & (v < camera.height), (u >= 0) & (u < camera.width))] = True
        if not np.any(hit & inside):
            return None
        rows, cols = np.nonzero(hit)
        return rows.size, np.stack([a[cols], b[rows]], axis=1), float(depth[hit].min())


def _occluder(
    coords: np.ndarray, near_m: float, camera, coverage: float, min_range_m: float = 0.0
) -> Mesh:
    """A bar reaching down from above the image, in front of the part (within the sensor's
    range when there is room), its right edge where it hides ``coverage`` of the part's
    pixels (those furthest left)."""
    a, b = coords[:, 0], coords[:, 1]
    edge = float(np.quantile(a, coverage)) if coverage > 0 else float(a.min())
    width = float(a.max() - a.min()) + 0.1
    z = near_m - float(np.clip(0.3 * near_m, 0.03, 0.12))
    z = min(max(z, min_range_m + 0.01), near_m - 0.02)
    top = -(camera.cy + 0.5) / camera.fy - 0.2
    bottom = float(b.max()) + 0.02
    lo = np.array([(edge - width) * z, top * z, z])
    hi = np.array([edge * z, bottom * z, z + 0.005])
    return _box(hi - lo, make_pose(np.eye(3), (lo + hi) / 2), "occluder")


def synthesize_sequence(
    mesh: Mesh,
    *,
    motion: str,
    frames: int,
    seed: int,
    profile,
    camera: CameraIntrinsics,
) -> SynthSequence:
    """Render ``frames`` depth frames of ``mesh`` moving by ``motion`` (see the module doc)
    with the NoiseProfile ``profile`` (None = ideal), as ``camera`` sees it."""
    from sim2real.sensors.render import DepthRenderer
    from sim2real.sensors.scene import GroundPlane, Scene, SceneObject

    if motion not in MOTIONS:
        raise InputError(None, "--motion", f"unknown motion {motion!r}; choose one of {MOTIONS}")
    if frames < 1:
        raise InputError(None, "--frames", f"need at least 1 frame, got {frames}")
    rng = np.random.default_rng(seed)
    diameter = diameter_m(mesh.vertices)
    layout = _layout(mesh, camera, diameter)
    T_cam_world = invert_pose(layout.T_world_cam)
    poses_world = _trajectory(motion, frames, rng, layout, camera)
    boxes = _distractors(rng, layout, diameter)
    table = GroundPlane(T_cam_world, size_m=max(2.0, 4 * layout.distance_m))
    part_alone = _PartAlone(mesh, layout.radius_m)
    limits = getattr(profile, "range", None)
    min_range = float(limits.min_m) if limits is not None else 0.0
    depths, poses, visible = [], [], []
    started = time.perf_counter()
    for i, T_world_part in enumerate(poses_world):
        T_cam_part = T_cam_world @ T_world_part
        alone = part_alone.pixels(T_cam_part, camera)
        objects = [SceneObject(mesh, T_cam_part)]
        objects += [SceneObject(b, T_cam_world) for b in boxes]
        if motion == "occluded" and alone is not None:
            coverage = OCCLUDED_MAX * np.sin(np.pi * i / min(OCCLUSION_PERIOD_FRAMES, frames)) ** 2
            bar = _occluder(alone[1], alone[2], camera, coverage, min_range)
            objects.append(SceneObject(bar, np.eye(4)))
        scene = Scene(objects, plane=table, names=[o.mesh.name for o in objects])
        result = DepthRenderer(scene, camera).render(profile, seed=seed + i)
        seen = int(np.sum(result.frame.object_id == 0))
        visible.append(0.0 if alone is None or seen == 0 else min(1.0, seen / alone[0]))
        depths.append(result.depth_m)
        poses.append(T_cam_part)
    render_ms = (time.perf_counter() - started) * 1e3 / frames
    poses_arr = np.array(poses)
    vis = np.array(visible)
    speed, turn = _peaks(np.array(poses_world), layout.centre_part, vis)
    return SynthSequence(
        camera=camera,
        depth_m=depths,
        T_cam_part=poses_arr,
        visible=vis,
        status_gt=["tracking" if v >= GONE_MAX else "lost" for v in vis],
        motion=motion,
        seed=seed,
        profile_name=getattr(profile, "name", "ideal") if profile is not None else "ideal",
        T_world_cam=layout.T_world_cam,
        distance_m=layout.distance_m,
        diameter_m=diameter,
        peak_speed_m_s=speed,
        peak_turn_deg_s=turn,
        render_ms=render_ms,
    )


def _peaks(poses: np.ndarray, centre_part: np.ndarray, visible: np.ndarray) -> tuple[float, float]:
    """Largest frame-to-frame speed of the part's centre [m/s] and turn rate [deg/s], over
    steps where the part is seen in one of the two frames (leave-view moves it unseen)."""
    if len(poses) < 2:
        return 0.0, 0.0
    centres = poses[:, :3, :3] @ centre_part + poses[:, :3, 3]
    speeds = np.linalg.norm(np.diff(centres, axis=0), axis=1) * FPS
    rel = np.einsum("nji,njk->nik", poses[:-1, :3, :3], poses[1:, :3, :3])
    cos = np.clip((np.trace(rel, axis1=1, axis2=2) - 1) / 2, -1, 1)
    turns = np.degrees(np.arccos(cos)) * FPS
    keep = np.maximum(visible[:-1], visible[1:]) >= GONE_MAX
    return float(speeds[keep].max(initial=0)), float(turns[keep].max(initial=0))
