"""Several parts in one scene: one ``Tracker`` per body, each with its own status, in one call
per frame. Bodies are tracked nearest first; where a tracked body stands in front, the frame
is marked as an occluder for the bodies behind it, so a part touching another (a part in a
gripper, parts in a bin) is neither pulled onto its neighbour nor contradicted by it."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.errors import InputError
from sim2real.core.mesh_io import Mesh
from sim2real.core.raycast import raycasting_scene
from sim2real.models.part import PreparedModel
from sim2real.tracking.config import TrackerConfig
from sim2real.tracking.tracker import Tracker, TrackResult

FOOTPRINT_STRIDE = 4
"""A body's footprint is cast on every 4th pixel (and spread over the 4 x 4 block)."""
OCCLUDER_DEPTH_M = 1e-3
"""What the bodies behind see where a tracked body stands: a return 1 mm from the camera, in
front of everything (an occluder), not a contradiction."""


class MultiTracker:
    """``MultiTracker({"name": part, ...}, camera).update(depth, color) -> {name: TrackResult}``."""

    def __init__(
        self,
        parts: Mapping[str, PreparedModel | Mesh],
        camera: CameraIntrinsics,
        config: TrackerConfig | None = None,
        color_camera: CameraIntrinsics | None = None,
        T_color_depth: np.ndarray | None = None,
    ):
        if not parts:
            raise InputError(None, "parts", "no part to track")
        self.camera = camera
        self.trackers = {
            name: Tracker(part, camera, config, color_camera, T_color_depth)
            for name, part in parts.items()
        }
        self._scenes = {
            n: raycasting_scene(t.mesh.vertices, t.mesh.faces) for n, t in self.trackers.items()
        }
        s = FOOTPRINT_STRIDE
        rays = camera.pixel_rays()[s // 2 :: s, s // 2 :: s]
        self._rays = rays.reshape(-1, 3).astype(np.float32)
        self._grid = rays.shape[:2]

    def initialize(self, poses: Mapping[str, np.ndarray | None]) -> None:
        """Start each named body from its pose (T_cam_part), or None to search for it."""
        unknown = set(poses) - set(self.trackers)
        if unknown:
            raise InputError(None, "poses", f"no part named {sorted(unknown)[0]!r}")
        for name, tracker in self.trackers.items():
            tracker.initialize(poses.get(name))

    def footprint(self, name: str, T: np.ndarray) -> np.ndarray:
        """(H, W) float32 depth of body ``name`` at pose ``T`` (0 where it is not), cast on a
        coarse grid and spread over its blocks."""
        import open3d as o3d

        R, t = T[:3, :3], T[:3, 3]
        origins = np.broadcast_to((-R.T @ t).astype(np.float32), self._rays.shape)
        rays = np.concatenate([origins, self._rays @ R.astype(np.float32)], axis=1)
        hit = self._scenes[name].cast_rays(o3d.core.Tensor(np.ascontiguousarray(rays)))
        z = hit["t_hit"].numpy().reshape(self._grid)  # direction z = 1 in the camera: depth
        z = np.where(np.isfinite(z), z, 0.0).astype(np.float32)
        s = FOOTPRINT_STRIDE
        full = np.repeat(np.repeat(z, s, axis=0), s, axis=1)
        out = np.zeros((self.camera.height, self.camera.width), np.float32)
        h, w = min(full.shape[0], out.shape[0]), min(full.shape[1], out.shape[1])
        out[:h, :w] = full[:h, :w]
        return out

    def update(
        self, depth_m: np.ndarray, color: np.ndarray | None = None
    ) -> dict[str, TrackResult]:
        """Track every body in one frame; the results in the order the parts were given."""
        depth = np.asarray(depth_m, dtype=np.float32)
        order = sorted(
            self.trackers,
            key=lambda n: self.trackers[n].T[2, 3] if self.trackers[n].T is not None else np.inf,
        )
        seen = depth.copy()
        results: dict[str, TrackResult] = {}
        for name in order:
            tracker = self.trackers[name]
            results[name] = tracker.update(seen, color)
            if results[name].status != "lost" and tracker.T is not None:
                body = self.footprint(name, tracker.T)
                # in front of everything behind it: its pixels are occluders for those bodies
                seen = np.where(body > 0, np.float32(OCCLUDER_DEPTH_M), seen)
        return {name: results[name] for name in self.trackers}
