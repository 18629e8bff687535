"""What a randomized RGB-D frame draws, as data: one typed term per kind of randomization
(textures, lights, distractors, camera, image, depth), each switchable with ``enabled`` (the
detector's ablations: 10 / 100 / 1000 textures, distractors on / off, camera jitter on / off).

Ranges are ``[low, high]`` drawn uniformly per frame (counts: integers, both ends included).
The world frame is the table's: z up, the table top at z = 0, the part resting on it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.errors import InputError
from sim2real.core.strict import StrictModel, validate
from sim2real.core.yaml_io import read_yaml_mapping

Range = tuple[float, float]
TextureKind = Literal["noise", "checkers", "stripes", "gradient", "flat"]
PrimitiveKind = Literal["box", "sphere", "cylinder", "cone", "capsule", "torus"]


class _Ranged(StrictModel):
    @model_validator(mode="after")
    def _ordered(self):
        for name, value in self:
            if isinstance(value, tuple) and len(value) == 2 and value[0] > value[1]:
                raise ValueError(f"{name}: inverted range [{value[0]}, {value[1]}]")
        return self


def _check_count(term, lowest: int, highest: int):
    """``term`` when ``lowest <= count[0] <= count[1] <= highest``, else a ValueError."""
    lo, hi = term.count
    if not lowest <= lo <= hi <= highest:
        raise ValueError(f"count: expected {lowest} <= min <= max <= {highest}, got [{lo}, {hi}]")
    return term


class TextureTerm(_Ranged):
    """Procedural textures, generated from the run's seed, mapped triplanar on every surface
    (the part, the table, the room's walls, the distractors)."""

    enabled: bool = Field(True, description="false: one flat mid-grey for every surface")
    count: int = Field(1000, ge=1, le=100_000, description="textures in the run's bank")
    size_px: int = Field(64, ge=4, le=512, description="side of each square texture [px]")
    kinds: list[TextureKind] = Field(
        default_factory=lambda: ["noise", "checkers", "stripes", "gradient", "flat"],
        min_length=1,
        description="kinds drawn in turn: noise, checkers, stripes, gradient, flat",
    )
    tile_part_rel: Range = Field(
        (0.2, 2.0), description="texture tile side on the part, in part diameters"
    )
    tile_scene_m: Range = Field(
        (0.05, 1.0), description="texture tile side on the table, walls, distractors [m]"
    )
    images: str | None = Field(
        None,
        description="a folder of images (PNG, JPEG) added to the bank, each centre-cropped to "
        "size_px (photos of the workplace: floors, bins, posters); relative to the config file",
    )


class LightTerm(_Ranged):
    """Point and directional lights (Lambert + a Blinn-Phong specular lobe), ambient light."""

    count: tuple[int, int] = Field((1, 4), description="lights per frame [min, max]")
    point_share: float = Field(0.5, ge=0, le=1, description="share of point lights (else sun)")
    intensity: Range = Field((0.4, 1.4), description="light intensity at the part (1: white)")
    saturation: Range = Field((0.0, 0.35), description="light colour saturation (0 = white)")
    distance_m: Range = Field(
        (0.4, 1.8), description="point light distance from the part (kept inside the room) [m]"
    )
    elevation_deg: Range = Field((15.0, 89.0), description="light elevation over the table")
    ambient: Range = Field((0.05, 0.4), description="ambient light level")
    specular: Range = Field((0.0, 0.6), description="specular strength per surface")
    shininess: Range = Field((4.0, 80.0), description="Blinn-Phong exponent per surface")
    shadows: bool = Field(True, description="cast shadows (one occlusion ray per light)")
    shadow_stride_px: int = Field(
        2,
        ge=1,
        le=8,
        description="shadow rays on every n-th pixel per axis, found coarse to fine (nearest "
        "upsampling)",
    )

    @model_validator(mode="after")
    def _counts(self) -> LightTerm:
        return _check_count(self, 1, 8)


class DistractorTerm(_Ranged):
    """Random primitives around the part (on the table) and, at times, between it and the camera."""

    enabled: bool = Field(True, description="false: no distractor objects")
    count: tuple[int, int] = Field((0, 10), description="distractors per frame [min, max]")
    kinds: list[PrimitiveKind] = Field(
        default_factory=lambda: ["box", "sphere", "cylinder", "cone", "capsule", "torus"],
        min_length=1,
        description="primitive shapes drawn from",
    )
    meshes: list[str] = Field(
        default_factory=list,
        description="mesh files (other parts, tools) drawn instead of a primitive with chance "
        "mesh_share, each scaled like one; relative to the config file",
    )
    mesh_share: float = Field(0.5, ge=0, le=1, description="chance a distractor is a mesh")
    size_rel: Range = Field((0.3, 1.5), description="distractor size in part diameters")
    ring_rel: Range = Field((0.8, 4.0), description="distance from the part in part diameters")
    occluder_share: float = Field(
        0.3, ge=0, le=1, description="chance per frame that one floats between camera and part"
    )

    @model_validator(mode="after")
    def _counts(self) -> DistractorTerm:
        return _check_count(self, 0, 50)


class CameraTerm(_Ranged):
    """Where the camera looks from and its intrinsics; ``jitter`` false: the nominal camera at
    the middle of each pose range, looking at the table's origin (the part still moves)."""

    jitter: bool = Field(True, description="randomize the camera pose and intrinsics")
    nominal: CameraIntrinsics | None = Field(
        None, description="the camera (scaled to width_px x height_px); None: from hfov_deg"
    )
    hfov_deg: float = Field(58.0, gt=10, lt=150, description="horizontal FOV when no nominal")
    distance_rel: Range = Field(
        (1.8, 9.0),
        description="camera distance from the part centre, in part diameters (1.8: the part "
        "spans half the view's width at 58 deg; M3T's real camera stood 1.95 from a bottle)",
    )
    distance_m: Range = Field((0.25, 1.5), description="the distance is clipped to this [m]")
    elevation_deg: Range = Field(
        (5.0, 85.0),
        description="camera elevation over the table: from a camera near table height (parts "
        "seen from the side, as cell cameras beside a conveyor see them) to straight down",
    )
    roll_deg: Range = Field((-20.0, 20.0), description="rotation about the optical axis")
    offset_rel: Range = Field(
        (-0.35, 0.35), description="look-at offset (image plane) in fractions of the view"
    )
    focal_rel: Range = Field((0.9, 1.1), description="focal length factor (fx and fy)")
    principal_px: Range = Field((-6.0, 6.0), description="principal point shift [px]")
    placement_m: Range = Field(
        (-0.1, 0.1), description="part position on the table, per axis, when jitter is off [m]"
    )


class ImageTerm(_Ranged):
    """What the colour camera adds: exposure, white balance, blur, noise, gamma."""

    enabled: bool = Field(True, description="false: the shaded image as is (gamma only)")
    exposure_ev: Range = Field((-1.0, 1.0), description="exposure change [EV, stops]")
    white_balance: Range = Field((0.85, 1.15), description="per-channel gain")
    blur_share: float = Field(0.5, ge=0, le=1, description="share of frames blurred")
    blur_sigma_px: Range = Field((0.3, 1.2), description="Gaussian blur sigma [px]")
    noise_sigma: Range = Field((0.0, 0.03), description="Gaussian colour noise (1 = full scale)")
    gamma: float = Field(2.2, gt=0, le=4, description="display gamma (1: linear)")


class DepthTerm(StrictModel):
    """The depth image: a sensor preset or a calibrated profile through the project's noise path."""

    sensor: str | None = Field(
        "realsense-d435", description="preset name or profile YAML; None: the ideal depth"
    )
    emitter_shadow: bool = Field(
        True, description="the profile's emitter shadow (a second cast per frame when on)"
    )
    no_return_share: float = Field(
        0.0,
        ge=0,
        le=1,
        description="chance that the part, and each distractor, returns no depth at all (a dark, "
        "IR-absorbing or mirror-like material)",
    )


class SceneConfig(StrictModel):
    """Everything one randomized frame draws (see the module doc)."""

    width_px: int = Field(320, ge=16, le=4096, description="image width [px]")
    height_px: int = Field(240, ge=16, le=4096, description="image height [px]")
    textures: TextureTerm = Field(default_factory=TextureTerm, description="texture bank")
    lights: LightTerm = Field(default_factory=LightTerm, description="lights and shading")
    distractors: DistractorTerm = Field(default_factory=DistractorTerm, description="clutter")
    camera: CameraTerm = Field(default_factory=CameraTerm, description="camera pose, intrinsics")
    image: ImageTerm = Field(default_factory=ImageTerm, description="colour camera effects")
    depth: DepthTerm = Field(default_factory=DepthTerm, description="depth sensor model")
    room_m: Range = Field((1.2, 3.0), description="half-size of the room around the table [m]")
    table_m: Range = Field((0.6, 2.0), description="side of the table top [m]")

    @model_validator(mode="after")
    def _ranges(self) -> SceneConfig:
        for name in ("room_m", "table_m"):
            lo, hi = getattr(self, name)
            if not 0 < lo <= hi:
                raise ValueError(f"{name}: expected 0 < low <= high, got [{lo}, {hi}]")
        return self


IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")
"""Texture images read from ``textures.images``."""


def load_scene_config(path: str | Path) -> SceneConfig:
    """A SceneConfig from YAML (missing fields take their defaults; texture images and
    distractor meshes relative to the file, which must exist); InputError(file, field)."""
    cfg = validate(SceneConfig, read_yaml_mapping(path, "config file"), path)
    return resolve_assets(cfg, path)


def resolve_assets(cfg: SceneConfig, path: str | Path, prefix: str = "") -> SceneConfig:
    """``cfg`` (read from ``path``, under ``prefix`` in it) with its texture image folder and
    distractor meshes made absolute, relative to the file's folder; InputError(file, field)
    for one that does not exist."""
    here = Path(path).parent
    if cfg.textures.images is not None:
        folder = here / cfg.textures.images
        if not folder.is_dir():
            raise InputError(path, f"{prefix}textures.images", f"no folder {folder}")
        if not any(p.suffix.lower() in IMAGE_SUFFIXES for p in folder.iterdir()):
            why = f"no PNG or JPEG image in {folder}"
            raise InputError(path, f"{prefix}textures.images", why)
        cfg.textures.images = str(folder.resolve())
    for k, name in enumerate(cfg.distractors.meshes):
        mesh = here / name
        if not mesh.is_file():
            raise InputError(path, f"{prefix}distractors.meshes.{k}", f"no mesh file {mesh}")
        cfg.distractors.meshes[k] = str(mesh.resolve())
    return cfg
