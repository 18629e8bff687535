"""The fully resolved configuration of a render, written next to its output."""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import Field

from sim2real.core.atomic import write_text_atomic
from sim2real.core.camera import CameraIntrinsics
from sim2real.core.strict import StrictModel, validate
from sim2real.core.yaml_io import read_yaml_mapping
from sim2real.sensors.profile import NoiseProfile
from sim2real.sensors.scene import Scene


class RenderedObject(StrictModel):
    mesh: str = Field(description="mesh file (or built-in name)")
    T_cam_part: list[list[float]] = Field(
        description="4x4 pose of the part in the camera frame [m]"
    )


class RenderConfig(StrictModel):
    """Everything a render depended on: camera, noise profile, seed, objects and plane."""

    camera: CameraIntrinsics = Field(..., description="the camera the frame was rendered with")
    noise: NoiseProfile | None = Field(None, description="None = ideal render")
    seed: int = Field(0, description="seed of the noise")
    objects: list[RenderedObject] = Field(..., description="the meshes and their poses")
    plane_T_cam: list[list[float]] | None = Field(None, description="4x4 pose of the ground plane")
    plane_size_m: float | None = Field(
        None, description="side of the ground plane [m] (None: no plane)"
    )


def render_config(
    scene: Scene, camera: CameraIntrinsics, noise: NoiseProfile | None, seed: int
) -> RenderConfig:
    objects = [
        RenderedObject(mesh=o.mesh.path or o.mesh.name, T_cam_part=o.T_cam_obj.tolist())
        for o in scene.objects
    ]
    plane = scene.plane
    return RenderConfig(
        camera=camera,
        noise=noise,
        seed=seed,
        objects=objects,
        plane_T_cam=plane.T_cam_plane.tolist() if plane else None,
        plane_size_m=plane.size_m if plane else None,
    )


def write_render_config(
    path: str | Path, scene: Scene, camera: CameraIntrinsics, noise: NoiseProfile | None, seed: int
) -> RenderConfig:
    config = render_config(scene, camera, noise, seed)
    write_text_atomic(path, yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False))
    return config


def read_render_config(path: str | Path) -> RenderConfig:
    """A render's ``<out>.config.yaml`` read back (InputError naming the file and field)."""
    return validate(RenderConfig, read_yaml_mapping(path, "render config"), path)
