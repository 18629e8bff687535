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
from sim2real.core.pose import invert_pose, make_pose, rpy_deg_to_matrix
from sim2real.tracking.evaluation import GONE_MAX
from sim2real.tracking.pose_errors import diameter_m
from sim2real.tracking.sequence_write import write_bop_sequence, write_visible
from sim2real.tracking.synth_motion import FPS, Layout, scene_layout, trajectory

MOTIONS = ("smooth", "fast", "occluded", "leave-view")
OCCLUDED_MAX = 0.42
OCCLUSION_PERIOD_FRAMES = 60


@dataclass
class SynthSequence:
    """A rendered sequence with its ground truth. Depth: (H, W) float32 metres, 0 = none."""

    camera: CameraIntrinsics
    depth_m: list[np.ndarray]
    T_cam_part: np.ndarray
    """(N, 4, 4) float64, metres: ground truth, also where the part is out of view."""
    visible: np.ndarray
    """(N,) visible fraction of the part (0 = out of view or hidden)."""
    returns: np.ndarray
    """(N,) share of the part's visible pixels with a depth return (NaN where none visible):
    low where the part is dark, steep, or nearer than the sensor's minimum range."""
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

    @property
    def median_returns(self) -> float | None:
        """Median over the frames that show the part of ``returns``; None if none shows it."""
        seen = self.returns[np.isfinite(self.returns)]
        return float(np.median(seen)) if seen.size else None

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
            "median_returns": self.median_returns,
            "frames_out_of_view": int(np.sum(self.visible < GONE_MAX)),
            "T_world_cam": self.T_world_cam.tolist(),
        }

    def write(self, out_dir: str | Path, *, depth_scale_mm: float = 0.1) -> list[Path]:
        """BOP-like folder (``write_bop_sequence``), plus ``visible.json`` and ``synth.json``;
        depth frames of a longer sequence written there before are removed."""
        out_dir = Path(out_dir)
        depth_dir = out_dir / "depth"
        old = set(depth_dir.glob("*.png")) if depth_dir.is_dir() else set()
        paths = write_bop_sequence(
            out_dir, self.camera, self.depth_m, list(self.T_cam_part), depth_scale_mm=depth_scale_mm
        )
        write_visible(out_dir / "visible.json", dict(enumerate(self.visible.tolist())))
        write_text_atomic(out_dir / "synth.json", json.dumps(self.info(), indent=2) + "\n")
        for stale in old - set(paths):
            stale.unlink(missing_ok=True)
        return paths


def _box(extents, T: np.ndarray, name: str) -> Mesh:
    from trimesh.creation import box

    b = box(extents=extents)
    return validate_mesh(b.vertices @ T[:3, :3].T + T[:3, 3], b.faces, "synthetic", name)


def _distractors(rng, layout: Layout, diameter: float) -> list[Mesh]:
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
        self._centre = mesh.centre_m
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
    limits = getattr(profile, "range", None)
    min_range = float(limits.min_m) if limits is not None else 0.0
    layout = scene_layout(mesh, camera, diameter, min_range)
    T_cam_world = invert_pose(layout.T_world_cam)
    poses_world = trajectory(motion, frames, rng, layout, camera)
    boxes = _distractors(rng, layout, diameter)
    table = GroundPlane(T_cam_world, size_m=max(2.0, 4 * layout.distance_m))
    part_alone = _PartAlone(mesh, layout.radius_m)
    depths, poses, visible, returns = [], [], [], []
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
        part_px = result.frame.object_id == 0
        seen = int(np.sum(part_px))
        visible.append(0.0 if alone is None or seen == 0 else min(1.0, seen / alone[0]))
        returns.append(np.sum(result.depth_m[part_px] > 0) / seen if seen else np.nan)
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
        returns=np.array(returns),
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
