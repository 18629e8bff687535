"""The tuned-model part of ``sim2real demo``: the M3T triangle (a dark part that returns depth
on few of its pixels) tuned with its real RealSense frame."""

from __future__ import annotations

from pathlib import Path

from sim2real.core.report import ReportSection


def m3t_reference(folder: Path):
    """(mesh, camera, depth, T_cam_part) of the M3T triangle frame, at M3T's own estimate."""
    from sim2real.core.camera_io import load_camera, load_camera_pose
    from sim2real.core.depth_io import read_depth
    from sim2real.core.mesh_io import load_mesh
    from sim2real.core.pose import invert_pose, load_pose_file

    camera = load_camera(folder / "depth_camera.yaml")
    T_cam_part = (
        invert_pose(load_camera_pose(folder / "depth_camera.yaml"))
        @ load_pose_file(folder / "triangle_pose_optimizer_test.txt")
        @ load_pose_file(folder / "triangle.yaml")
    )
    depth = read_depth(folder / "depth_camera_image_200.png", depth_scale=camera.depth_scale)
    return load_mesh(folder / "triangle.obj", "m"), camera, depth, T_cam_part


def tuned_model_section(out: Path, quiet: bool = False) -> ReportSection | None:
    """None when the real data is absent."""
    from sim2real.core.data import data_root
    from sim2real.models.tune import tune_model
    from sim2real.models.tune_report import tune_sections
    from sim2real.sensors.presets import get_preset

    root = data_root()
    folder = root / "real" / "depth-m3t" if root else None
    if folder is None or not folder.is_dir():
        return None
    mesh, camera, depth, T = m3t_reference(folder)
    result = tune_model(mesh, [depth], camera, [T], get_preset("realsense-d435").profile)
    section = tune_sections(result, out / "tuned")[0]
    section.images = [f"tuned/{name}" for name in section.images]
    section.title = "Tuned model: the M3T triangle with its real frame"
    summary = result.summary()
    if not quiet:
        print(
            "  tuned model: valid-pixel agreement on the part "
            f"{summary['valid_pixel_agreement']['untuned']:.2f} untuned -> "
            f"{summary['valid_pixel_agreement']['tuned']:.2f} tuned (the tuning frame)"
        )
    return section
