"""Randomized RGB-D samples of a part: the frame's draws (scene_draw), one ray cast by the
project's depth renderer (sensors.render.DepthRenderer) for the depth, the labels and the
colour image's geometry, textures looked up triplanar at the hit points, shading, the colour
camera's response, and depth through the sensor's noise profile.

Every sample is a function of (seed, index) alone: sample 7 is the same whether it is drawn
first, after sample 6 or in another process."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.mesh_io import Mesh
from sim2real.core.pose import invert_pose
from sim2real.detect.image_terms import camera_response
from sim2real.detect.keypoints import bbox_corners
from sim2real.detect.scene_config import SceneConfig
from sim2real.detect.scene_draw import FrameDraw, draw_frame, nominal_camera
from sim2real.detect.shading import CameraLight, grid_visibility, shade
from sim2real.detect.textures import make_texture_bank, sample_texture, triplanar_uv

PART_ID = 0  # the part is the first object of every frame's scene
ABSENT_DROP_M = 50.0
"""How far below the table an absent part is put: outside the room, whose walls and floor
hide it from the camera, the emitter and the lights (it keeps its object id)."""


@dataclass
class Sample:
    """One labelled randomized RGB-D frame (see note_RENDER.md's API)."""

    index: int
    rgb: np.ndarray
    """(H, W, 3) uint8."""
    depth_m: np.ndarray
    """(H, W) float32 metres, 0 = no return: what the depth sensor's profile measures."""
    depth_ideal_m: np.ndarray
    """(H, W) float32 metres along the optical axis, noise-free, 0 = nothing hit."""
    mask: np.ndarray
    """(H, W) bool: the part's visible pixels (the camera rays that hit it first)."""
    mask_full: np.ndarray
    """(H, W) bool: the part's silhouette, occluders ignored."""
    T_cam_part: np.ndarray
    """(4, 4) float64: part frame -> camera frame (OpenCV axes), metres."""
    K: np.ndarray
    """(3, 3) float64 camera matrix (jittered)."""
    camera: CameraIntrinsics
    centre_cam_m: np.ndarray
    """(3,) the centre of the part mesh's bounding box in the camera frame [m]."""
    centre_px: np.ndarray
    """(2,) its projection (u, v), pixel centres at integers."""
    visible_fraction: float
    """mask pixels / mask_full pixels (0 when the part is out of view)."""
    timings_ms: dict[str, float] = field(default_factory=dict)


def _part_of(part) -> tuple[Mesh, object]:
    """(mesh, tuned returns or None) of a Mesh or a PreparedModel."""
    if isinstance(part, Mesh):
        return part, None
    return part.mesh, getattr(part, "returns", None)


def _rotate(x: np.ndarray, R: np.ndarray) -> np.ndarray:
    """(N, 3) rows of ``x`` rotated by (3, 3) ``R`` (``x @ R.T``), by einsum: a BLAS product
    of this shape with several threads on a loaded machine took milliseconds a call."""
    return np.einsum("ij,kj->ik", x, R)


class SampleRenderer:
    """Renders randomized samples of ``part`` (a Mesh or a PreparedModel) under ``cfg``; the
    texture bank (``cfg.textures.count`` textures) and the part's own ray-casting scene (for
    its unoccluded silhouette) are built once, here. ``cast_threads``: the ray casts' threads
    (0: Open3D's choice; 1 in worker processes that fill the cores between them)."""

    cast_threads: int = 0

    def __init__(self, part, cfg: SceneConfig | None = None, seed: int = 0):
        from sim2real.core.raycast import raycasting_scene

        self.cfg = cfg if cfg is not None else SceneConfig()
        self.seed = int(seed)
        self.mesh, self._returns = _part_of(part)
        self.bank = make_texture_bank(self.cfg.textures, self.seed)
        self.base_camera = nominal_camera(self.cfg)
        self.profile = _depth_profile(self.cfg)
        self._part_scene = raycasting_scene(self.mesh.vertices, self.mesh.faces)
        self._bbox_centre = self.mesh.centre_m
        self._corners = bbox_corners(self.mesh)

    def draw(
        self, index: int, part_absent: bool = False
    ) -> tuple[FrameDraw, np.random.Generator, np.random.Generator]:
        """Frame ``index``'s draws and its depth-noise and image-noise generators;
        ``part_absent``: the same frame with the part moved out of the room (nothing else
        changes: the camera, lights and distractors were placed around where it stood)."""
        streams = np.random.SeedSequence([self.seed, 1, int(index)]).spawn(3)
        draws, depth_rng, image_rng = (np.random.default_rng(s) for s in streams)
        frame = draw_frame(self.mesh, self.cfg, self.base_camera, len(self.bank), draws)
        if part_absent:
            part = frame.surfaces[PART_ID]
            T = part.T_world_obj.copy()
            T[2, 3] -= ABSENT_DROP_M
            surfaces = [replace(part, T_world_obj=T), *frame.surfaces[PART_ID + 1 :]]
            frame = replace(frame, surfaces=surfaces, T_world_part=T)
        return frame, depth_rng, image_rng

    def labels(self, index: int) -> tuple[np.ndarray, CameraIntrinsics]:
        """(T_cam_part, camera) of frame ``index`` without rendering it (cheap)."""
        frame, _, _ = self.draw(index)
        return invert_pose(frame.T_world_cam) @ frame.T_world_part, frame.camera

    def depth_renderer(self, frame: FrameDraw):
        """(the project's DepthRenderer of ``frame``'s scene, T_cam_obj per object id: the
        part, the room's walls, the distractors, then the table)."""
        from sim2real.sensors.render import DepthRenderer
        from sim2real.sensors.scene import GroundPlane, Scene, SceneObject

        T_cam_world = invert_pose(frame.T_world_cam)
        poses = [T_cam_world @ s.T_world_obj for s in frame.surfaces] + [T_cam_world]
        # the room is a convex box around the camera and its emitter (0.3 m inside at least):
        # its walls hide nothing from the emitter
        objects = [
            SceneObject(
                s.mesh,
                T,
                returns=self._returns if i == PART_ID else None,
                encloses_camera=s.role == "room",
            )
            for i, (s, T) in enumerate(zip(frame.surfaces, poses[:-1], strict=True))
        ]
        plane = GroundPlane(T_cam_world, frame.table_size_m)
        return DepthRenderer(Scene(objects, plane), frame.camera, self.cast_threads), poses

    def sample(self, index: int, part_absent: bool = False) -> Sample:
        """Frame ``index``, rendered; ``part_absent``: without the part (``draw``), a frame in
        which the detector should find nothing (its mask empty, its pose out of view)."""
        t0 = time.perf_counter()
        frame, depth_rng, image_rng = self.draw(index, part_absent)
        renderer, poses = self.depth_renderer(frame)
        t1 = time.perf_counter()
        depth, geometry = self._depth(renderer, depth_rng)
        t2 = time.perf_counter()
        ideal = geometry.depth_m
        rgb = self._colour(renderer, frame, poses, geometry, image_rng)
        t3 = time.perf_counter()
        depth = self._no_returns(depth, geometry.object_id, frame, index)
        T_cam_part = poses[PART_ID]
        mask = geometry.object_id == PART_ID
        mask_full = self._silhouette(T_cam_part, frame.camera) | mask
        centre = T_cam_part[:3, :3] @ self._bbox_centre + T_cam_part[:3, 3]
        cam = frame.camera
        centre_px = np.array([cam.fx * centre[0] / centre[2] + cam.cx,
                              cam.fy * centre[1] / centre[2] + cam.cy])  # fmt: skip
        full = int(mask_full.sum())
        timings = {"draw+scene": (t1 - t0) * 1e3, "cast+depth": (t2 - t1) * 1e3}
        timings["colour"] = (t3 - t2) * 1e3
        timings["labels"] = (time.perf_counter() - t3) * 1e3
        return Sample(index=int(index), rgb=rgb, depth_m=depth, depth_ideal_m=ideal, mask=mask,
                      mask_full=mask_full, T_cam_part=T_cam_part, K=cam.K, camera=cam,
                      centre_cam_m=centre, centre_px=centre_px,
                      visible_fraction=float(mask.sum() / full) if full else 0.0,
                      timings_ms=timings)  # fmt: skip

    def _no_returns(self, depth, object_id, frame: FrameDraw, index: int) -> np.ndarray:
        """``depth`` with no return on the pixels of the part and of each distractor drawn
        dark (chance ``cfg.depth.no_return_share`` each): a dark, IR-absorbing or mirror-like
        material. The draws have their own stream, one per surface, so the same frame without
        the part (``part_absent``) keeps its distractors' and no other draw moves."""
        share = self.cfg.depth.no_return_share
        if share <= 0:
            return depth
        draws = np.random.default_rng([self.seed, 2, int(index)]).random(len(frame.surfaces))
        dark = [i for i, s in enumerate(frame.surfaces)
                if s.role in ("part", "distractor") and draws[i] < share]  # fmt: skip
        return np.where(np.isin(object_id, dark), 0.0, depth).astype(depth.dtype) if dark else depth

    def _depth(self, renderer, rng):
        """(sensor depth, the ideal frame the colour image is shaded from). One cast when the
        profile has no lateral jitter: pixels its emitter shadow removed get their ideal depth
        back from a cast of those rays alone."""
        profile = self.profile
        if profile is None:
            frame = renderer.render_ideal()
            return frame.depth_m.copy(), frame
        result = renderer.render(profile, rng)
        frame = result.frame
        if profile.lateral is not None and profile.lateral.sigma_px > 0:
            return result.depth_m, renderer.render_ideal()  # jittered rays: cast the camera's
        v, u = np.nonzero(frame.shadow)
        if v.size:
            rays = renderer.camera.pixel_rays()[v, u][None]
            frame.depth_m[v, u] = renderer.cast_rays(rays)["t_hit"][0]
        return result.depth_m, frame

    def _colour(self, renderer, frame: FrameDraw, poses, geometry, rng) -> np.ndarray:
        """Planar (3, H*W) arrays over the whole image (the room around the camera leaves few
        pixels without a hit): texture coordinates in each surface's frame, albedo, shading,
        the camera's response."""
        cam = frame.camera
        ids = geometry.object_id.ravel()
        hit = ids >= 0
        ids = np.where(hit, ids, 0)  # misses: shaded as surface 0, blacked out below
        dirs = renderer.camera.pixel_rays()
        p = np.empty((3, cam.height, cam.width), np.float32)
        np.multiply(np.moveaxis(dirs, 2, 0), geometry.depth_m, out=p)
        normals = np.ascontiguousarray(np.moveaxis(geometry.normal_cam, 2, 0), np.float32)
        lights = _camera_lights(frame, invert_pose(frame.T_world_cam))
        vis = None
        if self.cfg.lights.shadows and lights:
            vis = grid_visibility(renderer.test_occlusions, p, normals,
                                  hit.reshape(cam.height, cam.width), lights,
                                  self.cfg.lights.shadow_stride_px)  # fmt: skip
            vis = vis.reshape(len(lights), -1)
        p, normals = p.reshape(3, -1), normals.reshape(3, -1)
        surfaces = [*frame.surfaces, frame.table]
        # texture coordinates in each surface's frame: the world's for the room and the table
        # (one product for all pixels), their own for the part and the distractors
        T_wc = frame.T_world_cam.astype(np.float32)
        p_obj = T_wc[:3, :3] @ p + T_wc[:3, 3:]
        n_obj = T_wc[:3, :3] @ normals
        for k, surface in enumerate(surfaces):
            if surface.role in ("part", "distractor"):
                where = np.flatnonzero(ids == k)
                if where.size:
                    T = invert_pose(poses[k]).astype(np.float32)  # camera -> the surface
                    p_obj[:, where] = T[:3, :3] @ p[:, where] + T[:3, 3:]
                    n_obj[:, where] = T[:3, :3] @ normals[:, where]
        look = np.array([[s.texture, s.tile_m, s.specular, s.shininess] for s in surfaces],
                        np.float32).T  # fmt: skip
        uv = triplanar_uv(p_obj, n_obj, np.take(look[1], ids))
        albedo = sample_texture(self.bank, np.take(look[0].astype(np.intp), ids), uv)
        radiance = shade(p, normals, albedo, np.take(look[2], ids), np.take(look[3], ids),
                         lights, frame.ambient, vis)  # fmt: skip
        radiance[:, ~hit] = 0
        linear = np.ascontiguousarray(radiance.T).reshape(cam.height, cam.width, 3)
        return camera_response(linear, frame.image, self.cfg.image.gamma, rng)

    def _silhouette(self, T_cam_part: np.ndarray, cam: CameraIntrinsics) -> np.ndarray:
        """(H, W) bool: pixels whose ray hits the part alone (cast in the part's frame, over the
        image box of its bounding box)."""
        import open3d as o3d

        out = np.zeros((cam.height, cam.width), bool)
        corners = self._corners @ T_cam_part[:3, :3].T + T_cam_part[:3, 3]
        if np.any(corners[:, 2] <= 1e-6):
            u0, u1, v0, v1 = 0, cam.width, 0, cam.height
        else:
            u = cam.fx * corners[:, 0] / corners[:, 2] + cam.cx
            v = cam.fy * corners[:, 1] / corners[:, 2] + cam.cy
            u0, u1 = max(int(np.floor(u.min())), 0), min(int(np.ceil(u.max())) + 1, cam.width)
            v0, v1 = max(int(np.floor(v.min())), 0), min(int(np.ceil(v.max())) + 1, cam.height)
        if u0 >= u1 or v0 >= v1:
            return out
        dirs = cam.pixel_rays()[v0:v1, u0:u1]
        T_part_cam = invert_pose(T_cam_part)
        rays = np.empty((*dirs.shape[:2], 6), np.float32)
        rays[..., :3] = T_part_cam[:3, 3]
        R = T_part_cam[:3, :3].astype(np.float32)
        rays[..., 3:] = _rotate(dirs.reshape(-1, 3), R).reshape(dirs.shape)
        hit = self._part_scene.cast_rays(o3d.core.Tensor(rays), nthreads=self.cast_threads)
        hit = hit["t_hit"].numpy()
        out[v0:v1, u0:u1] = np.isfinite(hit)
        return out


def _camera_lights(frame: FrameDraw, T_cam_world: np.ndarray) -> list[CameraLight]:
    R, t = T_cam_world[:3, :3], T_cam_world[:3, 3]
    out = []
    for light in frame.lights:
        vector = R @ light.position_world + (t if light.kind == "point" else 0.0)
        out.append(CameraLight(light.kind, vector.astype(np.float32), light.rgb, light.distance_m))
    return out


def _depth_profile(cfg: SceneConfig):
    """The NoiseProfile of ``cfg.depth`` (a preset name or a profile file), or None (ideal)."""
    if cfg.depth.sensor is None:
        return None
    from sim2real.sensors.presets import resolve_profile

    _, profile = resolve_profile(cfg.depth.sensor)
    if not cfg.depth.emitter_shadow:
        profile = profile.model_copy(update={"emitter_shadow": False})
    return profile


def render_sample(part, cfg: SceneConfig | None = None, seed: int = 0, index: int = 0) -> Sample:
    """One sample (builds a SampleRenderer, with its texture bank, each call: for one-offs)."""
    return SampleRenderer(part, cfg, seed).sample(index)


def load_part_model(path: str | Path):
    """A MODEL_DIR or a mesh file as a PreparedModel (``models.part.load_part``)."""
    from sim2real.models.part import load_part

    return load_part(path)
