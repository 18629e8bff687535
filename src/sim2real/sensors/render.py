"""Depth rendering with Open3D's RaycastingScene: ideal depth, normals, incidence, object ids,
depth edges and the emitter shadow of active stereo and structured-light sensors."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from sim2real.core.camera import CameraIntrinsics
from sim2real.sensors.frame import NO_OBJECT, RenderedFrame
from sim2real.sensors.scene import Scene

EDGE_RELATIVE_JUMP = 0.03
"""A depth jump between neighbouring pixels larger than 3 % of the nearer depth is an edge.
(A continuous surface at 80 deg incidence changes by about 1 % per pixel at f = 500 px.)"""
SHADOW_MARGIN_PX = 2.0
"""The image-space shadow pre-filter is widened by this much along the row, for occluder edges
that fall between the pixel centres it samples; the exact query then decides."""
SELF_HIT_SKIP_M = 1e-4
"""The occlusion ray toward the emitter ignores its first 0.1 mm (the surface it starts on)."""


@dataclass
class RenderResult:
    """A render: the ideal frame, the sensor-like depth and where the time went."""

    frame: RenderedFrame
    depth_m: np.ndarray
    """(H, W) float32 metres, 0 = no return: the ideal depth with the profile's noise."""
    timings_ms: dict[str, float]

    def summary(self) -> dict[str, float | int]:
        valid = self.depth_m > 0
        z = self.depth_m[valid]
        return {
            "valid_pixels": int(valid.sum()),
            "valid_fraction": float(valid.mean()),
            "shadow_pixels": int(self.frame.shadow.sum()),
            "depth_min_m": float(z.min()) if z.size else 0.0,
            "depth_max_m": float(z.max()) if z.size else 0.0,
            "time_ms": float(sum(self.timings_ms.values())),
        }


def depth_edges(depth_m: np.ndarray, relative_jump: float = EDGE_RELATIVE_JUMP) -> np.ndarray:
    """(H, W) bool: pixels on either side of a depth jump larger than ``relative_jump`` times
    the nearer depth, or beside a pixel with no return. ``depth_m``: (H, W) metres, 0 = none."""
    edge = np.zeros(depth_m.shape, dtype=bool)
    for axis in (0, 1):
        a = depth_m[:-1, :] if axis == 0 else depth_m[:, :-1]
        b = depth_m[1:, :] if axis == 0 else depth_m[:, 1:]
        # a pixel with no return (0) beside one with a return is a jump too: |a - b| > 0 = min
        jump = np.abs(a - b) > np.float32(relative_jump) * np.minimum(a, b)
        if axis == 0:
            edge[:-1, :] |= jump
            edge[1:, :] |= jump
        else:
            edge[:, :-1] |= jump
            edge[:, 1:] |= jump
    return edge


def shadow_candidates(
    depth_m: np.ndarray, fx: float, baseline_m: float, margin_px: float = SHADOW_MARGIN_PX
) -> np.ndarray:
    """(H, W) bool: pixels that some surface seen by the camera may hide from the emitter.

    The emitter sits at ``baseline_m`` along the camera's x axis, so the segment from a
    surface point to it projects onto the same image row, from the pixel toward the emitter
    side. A point q on that row hides pixel p from the emitter only if q is nearer to the
    camera than the segment, i.e. only if q's column as the emitter sees it,
    ``u - fx * B / z``, is beyond p's. A running minimum along each row finds every such p in
    O(H W); the exact occlusion query then runs on these pixels alone. The result is widened
    by ``margin_px`` along the rows, for occluder edges between the sampled pixel centres.
    """
    rows, hidden = _shadow_candidate_rows(depth_m, fx, baseline_m, margin_px)
    candidates = np.zeros(depth_m.shape, dtype=bool)
    candidates[rows] = hidden
    return candidates


def _shadow_candidate_rows(
    depth_m: np.ndarray, fx: float, baseline_m: float, margin_px: float
) -> tuple[np.ndarray, np.ndarray]:
    """(rows, (len(rows), W) bool): ``shadow_candidates`` on the only rows that can hold any."""
    if baseline_m < 0:  # mirror the image: the emitter is then on the +x side
        rows, hidden = _shadow_candidate_rows(depth_m[:, ::-1], fx, -baseline_m, margin_px)
        return rows, hidden[:, ::-1]
    cols = np.arange(depth_m.shape[1], dtype=np.float32)
    disparity = np.full(depth_m.shape, -np.inf, dtype=np.float32)  # no return: never an occluder
    np.divide(np.float32(fx * baseline_m), depth_m, out=disparity, where=depth_m > 0)
    emitter_col = cols - disparity
    # only a row where a nearer surface begins (the emitter column steps back) can hold a shadow
    rows = np.flatnonzero((emitter_col[:, 1:] < emitter_col[:, :-1]).any(axis=1))
    emitter_col = emitter_col[rows]
    nearest_beyond = np.minimum.accumulate(emitter_col[:, ::-1], axis=1)[:, ::-1]  # min over q >= u
    beyond = np.concatenate(
        [nearest_beyond[:, 1:], np.full((len(rows), 1), np.inf, np.float32)], axis=1
    )
    hidden = beyond < emitter_col
    widened = hidden.copy()
    for shift in range(1, int(np.ceil(margin_px)) + 1):
        widened[:, shift:] |= hidden[:, :-shift]
        widened[:, :-shift] |= hidden[:, shift:]
    widened &= depth_m[rows] > 0
    return rows, widened


@dataclass
class _Surface:
    """What the shadow pass needs of a cast: depth (0 = none), camera-facing normals, |n . d|."""

    depth_m: np.ndarray
    normals: np.ndarray
    abs_facing: np.ndarray
    directions: np.ndarray


class DepthRenderer:
    """Casts camera rays into a fixed scene; build once, render many frames.

    The scene's meshes are placed in the camera frame once (Open3D builds its BVH on the first
    cast); every ``render`` then costs one ray cast plus the sensor model. ``threads``: the
    casts' threads (0: Open3D's choice, every core; 1 where processes already fill the cores).
    """

    def __init__(self, scene: Scene, camera: CameraIntrinsics, threads: int = 0):
        import open3d as o3d

        self.scene = scene
        self.camera = camera
        self.threads = int(threads)
        self._o3d = o3d
        self._raycaster = o3d.t.geometry.RaycastingScene()
        self._id_of_geometry: dict[int, int] = {}
        self._occluders: list[np.ndarray] = []  # camera-frame vertices of each mesh that may shadow
        for index, obj in enumerate(scene.objects):
            vertices = obj.mesh.transformed(obj.T_cam_obj)
            if not obj.encloses_camera:
                self._occluders.append(vertices)
            self._add(vertices, obj.mesh.faces, index)
        if scene.plane is not None:
            self._add(*scene.plane.triangles(), len(scene.objects))
        self._directions = camera.pixel_rays()
        dx, dy = self._directions[..., 0], self._directions[..., 1]
        self._inv_ray_len = 1 / np.sqrt(dx * dx + dy * dy + 1)  # z = 1 (a norm costs 5x)
        rays = np.zeros((camera.height, camera.width, 6), dtype=np.float32)
        rays[..., 3:] = self._directions
        self._rays = o3d.core.Tensor.from_numpy(rays)
        lut = np.full(max(self._id_of_geometry, default=0) + 2, NO_OBJECT, dtype=np.int32)
        for geometry_id, index in self._id_of_geometry.items():
            lut[geometry_id] = index
        self._lut = lut
        self._ids_are_indices = (
            all(g == i for g, i in self._id_of_geometry.items()) and NO_OBJECT == -1
        )

    def _add(self, vertices: np.ndarray, faces: np.ndarray, index: int) -> None:
        o3c = self._o3d.core
        geometry_id = self._raycaster.add_triangles(
            o3c.Tensor(np.ascontiguousarray(vertices, dtype=np.float32)),
            o3c.Tensor(np.ascontiguousarray(faces, dtype=np.uint32)),
        )
        self._id_of_geometry[int(geometry_id)] = index

    @property
    def rays(self):
        """The (H, W, 6) float32 Open3D tensor of camera rays (origin 0, direction z = 1)."""
        return self._rays

    def cast_rays(self, directions: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Raw cast: ``t_hit`` (= depth z, since direction z = 1), ``geometry_ids``, normals."""
        rays = self._rays
        if directions is not None:
            full = np.zeros((*directions.shape[:2], 6), dtype=np.float32)
            full[..., 3:] = directions
            rays = self._o3d.core.Tensor.from_numpy(full)
        out = self._raycaster.cast_rays(rays, nthreads=self.threads)
        keys = ("t_hit", "geometry_ids", "primitive_normals", "primitive_ids", "primitive_uvs")
        return {k: out[k].numpy() for k in keys}

    def test_occlusions(self, rays: np.ndarray, tfar: float = np.inf) -> np.ndarray:
        """(N,) bool: scene geometry lies on each ray of (N, 6) float32 (origin, direction) with
        0 < t < ``tfar``, t in units of the direction's length (shadow rays toward lights)."""
        o3c = self._o3d.core
        hit = self._raycaster.test_occlusions(
            o3c.Tensor(np.ascontiguousarray(rays, np.float32)),
            tnear=0.0,
            tfar=float(tfar),
            nthreads=self.threads,
        )
        return hit.numpy()

    def render_ideal(
        self,
        baseline_m: float = 0.0,
        lateral_sigma_px: float = 0.0,
        rng: np.random.Generator | None = None,
        timings_ms: dict[str, float] | None = None,
        shadow_prefilter: bool = True,
    ) -> RenderedFrame:
        """The noise-free frame. ``baseline_m`` (signed, along camera x) removes what the emitter
        cannot light; ``lateral_sigma_px`` jitters each pixel's ray by N(0, sigma) pixels.
        ``shadow_prefilter=False`` sends an occlusion ray from every pixel (for checking)."""
        timings = timings_ms if timings_ms is not None else {}
        t0 = time.perf_counter()
        directions = self._directions
        if lateral_sigma_px > 0:
            if rng is None:
                raise ValueError("lateral jitter needs a random generator")
            directions = directions.copy()
            shape = directions.shape[:2]
            directions[..., 0] += rng.standard_normal(shape, dtype=np.float32) * np.float32(
                lateral_sigma_px / self.camera.fx
            )
            directions[..., 1] += rng.standard_normal(shape, dtype=np.float32) * np.float32(
                lateral_sigma_px / self.camera.fy
            )
        hit = self.cast_rays(None if directions is self._directions else directions)
        t1 = time.perf_counter()
        timings["cast"] = (t1 - t0) * 1e3

        t_hit = hit["t_hit"]
        valid = np.isfinite(t_hit)
        depth = np.where(valid, t_hit, np.float32(0))
        normals = hit["primitive_normals"]
        # n . d with d = (dx, dy, 1); then turn every normal toward the camera
        facing = (
            normals[..., 0] * directions[..., 0]
            + normals[..., 1] * directions[..., 1]
            + normals[..., 2]
        )
        flipped = np.flatnonzero(facing > 0)  # few for consistently wound meshes
        if flipped.size:
            normals.reshape(-1, 3)[flipped] *= np.float32(-1)
        inv_ray_len = (
            self._inv_ray_len
            if directions is self._directions
            else 1 / np.linalg.norm(directions, axis=2)
        )
        cos_incidence = np.minimum(np.abs(facing) * inv_ray_len, np.float32(1))
        incidence = np.arccos(cos_incidence, where=valid, out=np.zeros_like(cos_incidence))
        normals[~valid] = 0
        if self._ids_are_indices:  # Open3D numbers geometries 0, 1, ... and misses 2^32 - 1 (= -1)
            object_id = hit["geometry_ids"].view(np.int32)
        else:
            object_id = self._lut[np.minimum(hit["geometry_ids"], len(self._lut) - 1)]
            object_id[~valid] = NO_OBJECT
        surface = _Surface(depth, normals, np.abs(facing), directions)
        t2 = time.perf_counter()
        timings["geometry"] = (t2 - t1) * 1e3

        # the scene's depth edges, before the shadow: a shadow's border is no edge of the scene
        edge = depth_edges(depth)
        t3 = time.perf_counter()
        timings["edges"] = (t3 - t2) * 1e3
        shadow = np.zeros(depth.shape, dtype=bool)
        if baseline_m != 0:
            shadow = self._emitter_shadow(surface, baseline_m, lateral_sigma_px, shadow_prefilter)
        timings["shadow"] = (time.perf_counter() - t3) * 1e3
        return RenderedFrame(
            self.camera,
            depth,
            normals,
            incidence,
            object_id,
            edge,
            shadow,
            self._return_probability(hit, object_id),
        )

    def _return_probability(self, hit: dict, object_id: np.ndarray) -> np.ndarray | None:
        tuned = [(i, o.returns) for i, o in enumerate(self.scene.objects) if o.returns is not None]
        if not tuned:
            return None
        p = np.ones(object_id.shape, np.float32)
        for index, returns in tuned:
            v, u = np.nonzero(object_id == index)
            p[v, u] = returns.at_faces(
                hit["primitive_ids"][v, u],
                hit["primitive_uvs"][v, u],
                returns.return_probability,
            )
        return p

    def _exact_band_px(self, baseline_m: float) -> float | None:
        """How wide a band of columns at the image's emitter-side border needs exact occlusion
        rays beside the image-space pre-filter (which sees only occluders in the image): 0 when
        every occluding mesh lies in front of the camera inside the image columns on the
        emitter's side, None when some vertex lies behind the camera plane (no pre-filter).
        A surface point at pixel u reaches an occluder at depth z off the image only if
        ``u + fx B / z`` is past the border, so the band is ``fx |B| / z_min`` over the meshes
        that leave the image. (The ground plane never hides a point in front of it from an
        emitter beside the camera.)"""
        band = 0.0
        for v in self._occluders:
            if np.any(v[:, 2] <= 0):
                return None
            u = self.camera.fx * v[:, 0] / v[:, 2] + self.camera.cx
            outside = u.max() >= self.camera.width - 0.5 if baseline_m > 0 else u.min() <= -0.5
            if outside:
                band = max(band, self.camera.fx * abs(baseline_m) / float(v[:, 2].min()))
        return band

    def _emitter_shadow(
        self, surface: _Surface, baseline_m: float, lateral_sigma_px: float, prefilter: bool = True
    ) -> np.ndarray:
        """(H, W) bool: visible surface points that the emitter, at (baseline_m, 0, 0), cannot see:
        facing away from it, or with scene geometry on the segment to it (second visibility query).
        Their depth in ``surface.depth_m`` is set to 0."""
        depth = surface.depth_m
        emitter = np.array([baseline_m, 0.0, 0.0], dtype=np.float32)
        plane = self.scene.plane
        plane_safe = plane is None or (
            np.sign(np.dot(-plane.point_cam, plane.normal_cam))
            == np.sign(np.dot(emitter - plane.point_cam, plane.normal_cam))
        )
        band = self._exact_band_px(baseline_m) if prefilter and plane_safe else None
        if band is not None:
            # a surface turning away from the emitter also makes the emitter column step back,
            # so the pre-filter keeps those pixels too
            margin = SHADOW_MARGIN_PX + 3 * lateral_sigma_px
            rows, hidden = _shadow_candidate_rows(depth, self.camera.fx, baseline_m, margin)
            candidates = np.zeros(depth.shape, dtype=bool)
            candidates[rows] = hidden
            if band > 0:  # occluders beyond the border: every return of the band is checked
                cols = np.arange(depth.shape[1])
                w = self.camera.width - 0.5
                near_border = cols >= w - band - 1 if baseline_m > 0 else cols <= band + 0.5
                candidates[:, near_border] |= depth[:, near_border] > 0
            v, u = np.nonzero(candidates)
        else:
            v, u = np.nonzero(depth > 0)
        shadow = np.zeros(depth.shape, dtype=bool)
        if v.size == 0:
            return shadow
        z = depth[v, u]
        # n . (e - p) with p = z d and n . d = -|n . d| (normals face the camera)
        faces_away = (
            surface.normals[v, u, 0] * np.float32(baseline_m) + z * surface.abs_facing[v, u] <= 0
        )
        points = surface.directions[v, u] * z[:, None]
        to_emitter = emitter - points
        # start a hair off the surface toward the emitter; t = 1 is the emitter itself
        origins = points + to_emitter * (
            SELF_HIT_SKIP_M / np.linalg.norm(to_emitter, axis=1, keepdims=True)
        )
        rays = np.concatenate([origins, emitter - origins], axis=1).astype(np.float32)
        dark = faces_away | self.test_occlusions(rays, tfar=1.0)
        shadow[v[dark], u[dark]] = True
        depth[v[dark], u[dark]] = 0
        return shadow

    def render(self, profile=None, seed: int | np.random.Generator = 0) -> RenderResult:
        """Render what the sensor described by ``profile`` (a NoiseProfile; None = ideal) sees."""
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        timings: dict[str, float] = {}
        baseline = float(profile.shadow_baseline_m) if profile is not None else 0.0
        lateral = (
            float(profile.lateral.sigma_px)
            if profile is not None and profile.lateral is not None
            else 0.0
        )
        frame = self.render_ideal(baseline, lateral, rng, timings)
        t0 = time.perf_counter()
        if profile is None:
            depth = frame.depth_m.copy()
        else:
            from sim2real.sensors.noise import apply_noise

            depth = apply_noise(frame, profile, rng)
            if frame.return_probability is not None:  # a tuned surface returns only so often
                depth[rng.random(depth.shape, dtype=np.float32) >= frame.return_probability] = 0
        timings["noise"] = (time.perf_counter() - t0) * 1e3
        return RenderResult(frame=frame, depth_m=depth, timings_ms=timings)


def render_scene(
    scene: Scene, camera: CameraIntrinsics, profile=None, seed: int = 0
) -> RenderResult:
    """One-shot render of ``scene`` by ``camera`` with the sensor ``profile`` (None = ideal)."""
    return DepthRenderer(scene, camera).render(profile, seed)
