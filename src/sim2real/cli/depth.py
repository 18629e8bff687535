"""``sim2real depth ...``: depth-sensor simulation."""

from __future__ import annotations

from pathlib import Path

import typer

from sim2real.core.errors import InputError

app = typer.Typer(help="Depth sensors: render what a real depth camera sees.", no_args_is_help=True)

OUTPUT_SUFFIXES = (".png", ".npy", ".tif", ".tiff", ".ply", ".pcd")


def resolve_sensor(camera: Path | None, sensor: str | None, profile: Path | None):
    """(CameraIntrinsics, NoiseProfile | None): ``--camera`` beats the preset's intrinsics,
    ``--profile`` beats the preset's noise; neither preset nor profile means an ideal render."""
    from sim2real.core.camera_io import load_camera
    from sim2real.sensors.presets import get_preset
    from sim2real.sensors.profile import load_profile

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


@app.command("render")
def render_cmd(
    meshes: list[Path] = typer.Argument(
        None, help="Mesh files (OBJ, STL, PLY...), one --pose each."
    ),
    pose: list[str] = typer.Option(
        [], "--pose", help="T_cam_part: '--pose \"x y z qx qy qz qw\"', 16 numbers, or a pose file."
    ),
    rpy_deg: bool = typer.Option(
        False, "--rpy-deg", help="Read 6-number poses as x y z roll pitch yaw, in degrees."
    ),
    scene: Path | None = typer.Option(
        None, "--scene", help="Scene YAML listing meshes and poses instead."
    ),
    camera: Path | None = typer.Option(
        None, "--camera", help="Camera intrinsics file (JSON, YAML, XML)."
    ),
    sensor: str | None = typer.Option(
        None, "--sensor", help="Sensor preset (intrinsics and noise)."
    ),
    profile: Path | None = typer.Option(
        None, "--profile", help="Noise profile YAML (overrides the preset's)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the noise."),
    plane: bool = typer.Option(False, "--plane", help="Add a table under the first part."),
    mesh_unit: str = typer.Option("auto", "--mesh-unit", help="auto, m, cm or mm."),
    out: Path = typer.Option(
        ..., "--out", help="Output: .png (uint16), .tif, .npy (metres), .ply/.pcd."
    ),
) -> None:
    """Render what a depth sensor sees of MESHES at their poses."""
    import time
    import warnings

    from sim2real.core.depth_io import write_depth
    from sim2real.core.mesh_io import load_mesh
    from sim2real.core.pointcloud_io import write_point_cloud
    from sim2real.core.pose import parse_pose
    from sim2real.sensors.render import render_scene
    from sim2real.sensors.run_config import write_render_config
    from sim2real.sensors.scene import load_scene_yaml, make_scene

    if out.suffix.lower() not in OUTPUT_SUFFIXES:
        raise InputError(
            out,
            "--out",
            f"unknown output type '{out.suffix}'; use one of {', '.join(OUTPUT_SUFFIXES)}",
        )
    if scene is not None:
        if meshes:
            raise InputError(scene, "--scene", "give either --scene or MESH arguments, not both")
        the_scene = load_scene_yaml(scene)
    else:
        if not meshes:
            raise InputError(None, "MESH", "give at least one mesh (or --scene)")
        poses = [parse_pose(p, rpy_deg=rpy_deg, field=f"--pose[{i}]") for i, p in enumerate(pose)]
        the_scene = make_scene([load_mesh(m, mesh_unit) for m in meshes], poses, plane=plane)
    intrinsics, noise = resolve_sensor(camera, sensor, profile)
    started = time.perf_counter()
    result = render_scene(the_scene, intrinsics, noise, seed)
    elapsed_ms = (time.perf_counter() - started) * 1e3
    if out.suffix.lower() in (".ply", ".pcd"):
        write_point_cloud(out, intrinsics.backproject(result.depth_m))
    else:
        write_depth(out, result.depth_m, depth_scale=intrinsics.depth_scale)
    write_render_config(
        out.with_name(out.stem + ".config.yaml"), the_scene, intrinsics, noise, seed
    )
    part_pixels = int(
        (result.frame.object_id[result.frame.depth_m > 0] < len(the_scene.objects)).sum()
    )
    if part_pixels == 0:
        warnings.warn(
            "no part is in view: check --pose (T_cam_part, the part in the camera frame: z forward, "
            "metres) and --mesh-unit",
            stacklevel=1,
        )
    s = result.summary()
    typer.echo(
        f"wrote {out}: {s['valid_pixels']} valid pixels ({100 * s['valid_fraction']:.1f} %), "
        f"depth {s['depth_min_m']:.3f}..{s['depth_max_m']:.3f} m, {s['shadow_pixels']} in emitter shadow, "
        f"{elapsed_ms:.0f} ms ({noise.name if noise else 'ideal'})"
    )


@app.command("presets")
def presets_cmd() -> None:
    """List the built-in sensor presets."""
    from sim2real.sensors.presets import get_preset, preset_names

    for name in preset_names():
        p = get_preset(name)
        c = p.camera
        typer.echo(
            f"{name:20s} {c.width}x{c.height} fx={c.fx:.1f} baseline={p.profile.baseline_m:.3f} m  {p.profile.source[:60]}"
        )
