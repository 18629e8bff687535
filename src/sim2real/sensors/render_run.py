"""The ``depth render`` job: which sensor (camera file, preset, profile), one render of a
scene, and its outputs (a depth image or point cloud, and the resolved config beside it)."""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.camera_io import load_camera
from sim2real.core.depth_io import write_depth
from sim2real.core.pointcloud_io import write_point_cloud
from sim2real.sensors.presets import get_preset
from sim2real.sensors.profile import NoiseProfile, load_profile
from sim2real.sensors.render import RenderResult, render_scene
from sim2real.sensors.run_config import write_render_config
from sim2real.sensors.scene import Scene

POINT_CLOUD_SUFFIXES = (".ply", ".pcd")
OUTPUT_SUFFIXES = (".png", ".npy", ".tif", ".tiff", *POINT_CLOUD_SUFFIXES)


def resolve_sensor(
    camera: Path | None, sensor: str | None, profile: Path | None
) -> tuple[CameraIntrinsics, NoiseProfile | None]:
    """A camera file beats the preset's intrinsics, a profile file beats the preset's noise;
    neither preset nor profile means an ideal render (None)."""
    preset = get_preset(sensor) if sensor else None
    if camera is not None:
        intrinsics = load_camera(camera)
    else:
        intrinsics = (preset or get_preset("ideal")).camera
    if profile is not None:
        noise = load_profile(profile)
    else:
        noise = preset.profile if preset is not None and preset.name != "ideal" else None
    return intrinsics, noise


@dataclass(frozen=True)
class RenderRun:
    scene: Scene
    camera: CameraIntrinsics
    profile: NoiseProfile | None
    seed: int
    result: RenderResult
    elapsed_ms: float

    @property
    def part_pixels(self) -> int:
        """Pixels with a return from one of the parts (not the table)."""
        frame = self.result.frame
        return int((frame.object_id[frame.depth_m > 0] < len(self.scene.objects)).sum())

    def write(self, out: str | Path) -> list[Path]:
        """The depth (.png uint16 at the camera's depth scale, .tif/.npy metres) or the
        back-projected cloud (.ply/.pcd), and ``<out>.config.yaml`` (the whole name: renders to
        ``x.tif`` and ``x.pcd`` each keep their own); each atomically."""
        out = Path(out)
        if out.suffix.lower() in POINT_CLOUD_SUFFIXES:
            write_point_cloud(out, self.camera.backproject(self.result.depth_m))
        else:
            write_depth(out, self.result.depth_m, depth_scale=self.camera.depth_scale)
        config = out.with_name(out.name + ".config.yaml")
        write_render_config(config, self.scene, self.camera, self.profile, self.seed)
        return [out, config]

    def summary_line(self) -> str:
        s = self.result.summary()
        return (
            f"{s['valid_pixels']} valid pixels ({100 * s['valid_fraction']:.1f} %), depth "
            f"{s['depth_min_m']:.3f}..{s['depth_max_m']:.3f} m, {s['shadow_pixels']} in emitter "
            f"shadow, {self.elapsed_ms:.0f} ms ({self.profile.name if self.profile else 'ideal'})"
        )


def render_job(
    scene: Scene, camera: CameraIntrinsics, profile: NoiseProfile | None, seed: int = 0
) -> RenderRun:
    """Render ``scene``; warns when no part is in view (a pose in the wrong frame or unit)."""
    started = time.perf_counter()
    result = render_scene(scene, camera, profile, seed)
    run = RenderRun(scene, camera, profile, seed, result, (time.perf_counter() - started) * 1e3)
    if run.part_pixels == 0:
        warnings.warn(
            "no part is in view: check --pose (T_cam_part, the part in the camera frame: z forward, "
            "metres) and --mesh-unit",
            stacklevel=2,
        )
    return run
