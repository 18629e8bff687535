"""One frame's random draws (a pure function of the part, the config and a generator): the
part's pose on the table, the camera, the room, the distractors, the lights, each surface's
texture and material, the colour camera's effects. Nothing is rendered here."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.mesh_io import Mesh
from sim2real.core.pose import look_at, make_pose, quats_to_matrices
from sim2real.detect.primitives import quad, scaled, unit_mesh, unit_primitive
from sim2real.detect.scene_config import CameraTerm, SceneConfig

TABLE_HEIGHT_M = (0.6, 0.9)
ROOM_HEIGHT_M = 2.6
ROOM_MARGIN_M = 0.3


@dataclass(frozen=True)
class Surface:
    """A mesh in the world frame with its look. Textures are looked up in the mesh's frame."""

    mesh: Mesh
    T_world_obj: np.ndarray
    texture: int
    tile_m: float
    specular: float
    shininess: float
    role: str  # "part", "room", "distractor", "table"


@dataclass(frozen=True)
class Light:
    kind: str  # "point" or "directional"
    position_world: np.ndarray  # point: position [m]; directional: unit vector toward it
    rgb: np.ndarray  # (3,) colour times intensity, at the part for a point light
    distance_m: float  # point: its distance to the part centre (for the fall-off)


@dataclass(frozen=True)
class ImageDraw:
    exposure_ev: float = 0.0
    white_balance: np.ndarray = field(default_factory=lambda: np.ones(3))
    blur_sigma_px: float = 0.0
    noise_sigma: float = 0.0


@dataclass(frozen=True)
class FrameDraw:
    camera: CameraIntrinsics
    T_world_cam: np.ndarray
    T_world_part: np.ndarray
    surfaces: list[Surface]  # the part first, then room walls, distractors
    table: Surface  # a square quad at z = 0 (the sensors.scene ground plane)
    table_size_m: float
    lights: list[Light]
    ambient: float
    image: ImageDraw


def nominal_camera(cfg: SceneConfig) -> CameraIntrinsics:
    """The camera of ``cfg`` at width_px x height_px (a given one scaled; else from hfov)."""
    cam = cfg.camera.nominal
    if cam is None:
        return CameraIntrinsics.from_hfov(cfg.width_px, cfg.height_px, cfg.camera.hfov_deg)
    if cam.width == cfg.width_px and cam.height == cfg.height_px:
        return cam
    factor = cfg.width_px / cam.width
    out = cam.scaled(factor)
    if out.height != cfg.height_px:
        raise ValueError(
            f"camera.nominal: {cam.width}x{cam.height} does not scale to "
            f"{cfg.width_px}x{cfg.height_px} (another aspect ratio)"
        )
    return out


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    """(3, 3) uniform on SO(3): a unit quaternion from 4 Gaussians."""
    q = rng.standard_normal(4)
    return quats_to_matrices((q / np.linalg.norm(q))[None])[0]


def resting_pose(mesh: Mesh, R: np.ndarray, xy: np.ndarray) -> np.ndarray:
    """T_world_obj: ``mesh`` rotated by R, its lowest point on z = 0, at (x, y)."""
    z_min = float((mesh.vertices @ R.T)[:, 2].min())
    return make_pose(R, np.array([xy[0], xy[1], -z_min]))


def rolled_look_at(eye: np.ndarray, target: np.ndarray, roll_rad: float) -> np.ndarray:
    """T_world_cam of ``core.pose.look_at`` (world z up), turned by ``roll_rad`` about the
    optical axis."""
    c, s = np.cos(roll_rad), np.sin(roll_rad)
    return look_at(eye, target) @ make_pose(
        np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]]), [0, 0, 0]
    )


def _spherical(elevation_rad: float, azimuth_rad: float) -> np.ndarray:
    """Unit vector at ``elevation_rad`` over the table (z up), ``azimuth_rad`` from +x."""
    c = np.cos(elevation_rad)
    return np.array([c * np.cos(azimuth_rad), c * np.sin(azimuth_rad), np.sin(elevation_rad)])


def _u(rng: np.random.Generator, r: tuple[float, float]) -> float:
    return float(rng.uniform(r[0], r[1]))


def _mid(r: tuple[float, float]) -> float:
    return (r[0] + r[1]) / 2


def _camera(
    term: CameraTerm, base: CameraIntrinsics, centre: np.ndarray, diameter: float, rng
) -> tuple[CameraIntrinsics, np.ndarray]:
    jitter = term.jitter
    pick = (lambda r: _u(rng, r)) if jitter else _mid
    distance = float(np.clip(diameter * pick(term.distance_rel), *term.distance_m))
    elevation = np.radians(pick(term.elevation_deg))
    azimuth = rng.uniform(0, 2 * np.pi) if jitter else 0.0
    roll = np.radians(pick(term.roll_deg)) if jitter else 0.0
    eye = centre + distance * _spherical(elevation, azimuth)
    T = rolled_look_at(eye, centre, roll)
    if jitter:  # shift the view so the part is anywhere in the image
        half_w = distance * base.width / (2 * base.fx)
        half_h = distance * base.height / (2 * base.fy)
        shift = T[:3, 0] * _u(rng, term.offset_rel) * 2 * half_w
        shift += T[:3, 1] * _u(rng, term.offset_rel) * 2 * half_h
        T = rolled_look_at(eye, centre + shift, roll)
        f = _u(rng, term.focal_rel)
        base = CameraIntrinsics(
            fx=base.fx * f,
            fy=base.fy * f,
            cx=base.cx + _u(rng, term.principal_px),
            cy=base.cy + _u(rng, term.principal_px),
            width=base.width,
            height=base.height,
            depth_scale=base.depth_scale,
        )
    return base, T


def _look(cfg: SceneConfig, rng, n_textures: int, tile_m: float) -> dict:
    return {
        "texture": int(rng.integers(n_textures)),
        "tile_m": tile_m,
        "specular": _u(rng, cfg.lights.specular),
        "shininess": _u(rng, cfg.lights.shininess),
    }


def _room(
    cfg: SceneConfig, rng, n_textures: int, eye: np.ndarray
) -> tuple[list[Surface], np.ndarray]:
    """The six inner faces of a box room around the table and the camera at ``eye`` (0.3 m
    inside it at least), and the room's (2, 3) lower / upper corner."""
    h = _u(rng, cfg.room_m)
    cx, cy = rng.uniform(-0.3 * h, 0.3 * h, 2)
    h = max(h, abs(eye[0] - cx) + ROOM_MARGIN_M, abs(eye[1] - cy) + ROOM_MARGIN_M)
    z0 = -_u(rng, TABLE_HEIGHT_M)
    z1 = max(z0 + ROOM_HEIGHT_M, eye[2] + ROOM_MARGIN_M)
    x0, x1, y0, y1 = cx - h, cx + h, cy - h, cy + h
    faces = {
        "floor": [[x0, y0, z0], [x1, y0, z0], [x1, y1, z0], [x0, y1, z0]],
        "ceiling": [[x0, y0, z1], [x1, y0, z1], [x1, y1, z1], [x0, y1, z1]],
        "wall-x0": [[x0, y0, z0], [x0, y1, z0], [x0, y1, z1], [x0, y0, z1]],
        "wall-x1": [[x1, y0, z0], [x1, y1, z0], [x1, y1, z1], [x1, y0, z1]],
        "wall-y0": [[x0, y0, z0], [x1, y0, z0], [x1, y0, z1], [x0, y0, z1]],
        "wall-y1": [[x0, y1, z0], [x1, y1, z0], [x1, y1, z1], [x0, y1, z1]],
    }
    walls = [
        Surface(
            quad(np.array(c), name),
            np.eye(4),
            role="room",
            **_look(cfg, rng, n_textures, _u(rng, cfg.textures.tile_scene_m)),
        )
        for name, c in faces.items()
    ]
    return walls, np.array([[x0, y0, z0], [x1, y1, z1]])


def _distractors(
    cfg: SceneConfig, rng, n_textures: int, part_centre, eye, diameter
) -> list[Surface]:
    term = cfg.distractors
    if not term.enabled:
        return []
    out = []
    count = int(rng.integers(term.count[0], term.count[1] + 1))
    occluder = count > 0 and rng.random() < term.occluder_share
    for k in range(count):
        kind = term.kinds[int(rng.integers(len(term.kinds)))]
        size = diameter * _u(rng, term.size_rel) * rng.uniform(0.6, 1.4, 3)
        shape = unit_primitive(kind)
        if term.meshes and rng.random() < term.mesh_share:  # no draw without meshes: the
            shape = unit_mesh(term.meshes[int(rng.integers(len(term.meshes)))])  # same frames
        mesh = scaled(shape, size)
        R = random_rotation(rng)
        if occluder and k == 0:  # floating on the line of sight, overlapping the part's edge
            frac = rng.uniform(0.2, 0.6)
            sight = (eye - part_centre) / np.linalg.norm(eye - part_centre)
            side = np.cross(sight, rng.standard_normal(3))
            side /= np.linalg.norm(side)
            # seen from the eye, the part's radius at that depth is r (1 - frac): overlap it
            reach = diameter / 2 * (1 - frac) + float(size.max()) / 2
            spot = part_centre + frac * (eye - part_centre) + side * reach * rng.uniform(0.3, 1.0)
            T = make_pose(R, spot)
        else:
            angle = rng.uniform(0, 2 * np.pi)
            r = diameter * _u(rng, term.ring_rel)
            xy = part_centre[:2] + r * np.array([np.cos(angle), np.sin(angle)])
            T = resting_pose(mesh, R, xy)
        look = _look(cfg, rng, n_textures, _u(rng, cfg.textures.tile_scene_m))
        out.append(Surface(mesh, T, role="distractor", **look))
    return out


def _lights(cfg: SceneConfig, rng, centre: np.ndarray, room: np.ndarray) -> list[Light]:
    term = cfg.lights
    lights = []
    for _ in range(int(rng.integers(term.count[0], term.count[1] + 1))):
        elevation = np.radians(_u(rng, term.elevation_deg))
        azimuth = rng.uniform(0, 2 * np.pi)
        direction = _spherical(elevation, azimuth)
        hue, sat = rng.uniform(0, 1), _u(rng, term.saturation)
        # a colour of hue `hue` and saturation `sat` at full value (HSV), channel by channel
        k = (np.array([5.0, 3.0, 1.0]) + hue * 6) % 6
        rgb = 1 - sat * np.clip(np.minimum(k, 4 - k), 0, 1)
        rgb = rgb * _u(rng, term.intensity)
        if rng.random() < term.point_share:
            distance = _u(rng, term.distance_m)
            where = np.clip(centre + distance * direction, room[0] + 0.05, room[1] - 0.05)
            distance = float(np.linalg.norm(where - centre))
            lights.append(Light("point", where, rgb, distance))
        else:
            lights.append(Light("directional", direction, rgb, 0.0))
    return lights


def _image(cfg: SceneConfig, rng) -> ImageDraw:
    term = cfg.image
    if not term.enabled:
        return ImageDraw()
    return ImageDraw(
        exposure_ev=_u(rng, term.exposure_ev),
        white_balance=rng.uniform(*term.white_balance, 3),
        blur_sigma_px=_u(rng, term.blur_sigma_px) if rng.random() < term.blur_share else 0.0,
        noise_sigma=_u(rng, term.noise_sigma),
    )


def draw_frame(
    part: Mesh, cfg: SceneConfig, base: CameraIntrinsics, n_textures: int, rng
) -> FrameDraw:
    """Every random choice of one frame, from ``rng`` only (same generator state, same frame).
    ``base``: the nominal camera (``nominal_camera(cfg)``); ``n_textures``: the bank's size."""
    diameter = part.diameter_m
    R = random_rotation(rng)
    xy = np.zeros(2) if cfg.camera.jitter else rng.uniform(*cfg.camera.placement_m, 2)
    T_world_part = resting_pose(part, R, xy)
    centre = T_world_part[:3, :3] @ part.centre_m + T_world_part[:3, 3]
    # no jitter: one camera for every frame, looking at the table's origin (at part height)
    look_target = centre if cfg.camera.jitter else np.array([0.0, 0.0, diameter / 4])
    camera, T_world_cam = _camera(cfg.camera, base, look_target, diameter, rng)
    tile_part = diameter * _u(rng, cfg.textures.tile_part_rel)
    surfaces = [Surface(part, T_world_part, role="part", **_look(cfg, rng, n_textures, tile_part))]
    walls, room = _room(cfg, rng, n_textures, T_world_cam[:3, 3])
    surfaces += walls
    surfaces += _distractors(cfg, rng, n_textures, centre, T_world_cam[:3, 3], diameter)
    size = _u(rng, cfg.table_m)
    h = size / 2
    table_quad = quad(np.array([[-h, -h, 0], [h, -h, 0], [h, h, 0], [-h, h, 0.0]]), "table")
    look = _look(cfg, rng, n_textures, _u(rng, cfg.textures.tile_scene_m))
    table = Surface(table_quad, np.eye(4), role="table", **look)
    return FrameDraw(
        camera=camera,
        T_world_cam=T_world_cam,
        T_world_part=T_world_part,
        surfaces=surfaces,
        table=table,
        table_size_m=size,
        lights=_lights(cfg, rng, centre, room),
        ambient=_u(rng, cfg.lights.ambient),
        image=_image(cfg, rng),
    )
