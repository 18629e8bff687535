"""``sim2real demo``: the main job on built-in defaults. Renders a built-in bracket on a table
with several sensor presets, and (when the real data is present) a real RealSense frame beside
a simulation of the same part at the same pose; a tracked sequence; a STEP part prepared into a
tracking model and the real M3T part tuned with its frame; the DFKI pendulum identified from its
real log. Later stages add their sections."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sim2real.core.report import (
    ReportSection,
    crop_around,
    depth_panels_png,
    write_html_report,
)

DEMO_SENSORS = ("ideal", "kinect-v1", "realsense-d435")
OCCLUSION_MARGIN_M = 0.03
"""Real depth more than 3 cm nearer than the simulated part is something in front of it."""


@dataclass
class DemoResult:
    report: Path
    summaries: dict[str, dict] = field(default_factory=dict)


def _say(quiet: bool, text: str) -> None:
    if not quiet:
        print(text)


def bracket_section(out: Path, quiet: bool) -> tuple[ReportSection, dict]:
    from sim2real.core.depth_io import write_depth
    from sim2real.core.pointcloud_io import write_point_cloud
    from sim2real.core.pose import invert_pose, look_at
    from sim2real.sensors.demo_part import machined_bracket
    from sim2real.sensors.presets import get_preset
    from sim2real.sensors.render import render_scene
    from sim2real.sensors.run_config import write_render_config
    from sim2real.sensors.scene import make_scene

    bracket = machined_bracket()
    T_world_cam = look_at(eye=[0.15, -0.25, 0.53], target=[0.0, 0.0, 0.02])
    scene = make_scene([bracket], [invert_pose(T_world_cam)], plane=True)
    panels, closeups, table, summaries = {}, {}, [], {}
    for name in DEMO_SENSORS:
        preset = get_preset(name)
        profile = preset.profile if name != "ideal" else None
        result = render_scene(scene, preset.camera, profile, seed=0)
        write_depth(
            out / f"bracket_{name}.png", result.depth_m, depth_scale=preset.camera.depth_scale
        )
        write_render_config(out / f"bracket_{name}.config.yaml", scene, preset.camera, profile, 0)
        if name == "realsense-d435":
            write_point_cloud(
                out / "bracket_realsense-d435.ply", preset.camera.backproject(result.depth_m)
            )
        s = result.summary()
        summaries[name] = s
        label = f"{name} ({preset.camera.width}x{preset.camera.height})"
        panels[label] = result.depth_m
        closeups[label] = result.depth_m[crop_around(result.frame.object_id == 0, pad=25)]
        table.append(
            (
                name,
                f"{100 * s['valid_fraction']:.1f} % valid, {s['shadow_pixels']} shadow px, "
                f"depth {s['depth_min_m']:.3f}-{s['depth_max_m']:.3f} m, {s['time_ms']:.0f} ms",
            )
        )
        _say(quiet, f"  bracket / {name}: {table[-1][1]}")
    depth_panels_png(out / "bracket_sensors.png", panels)
    depth_panels_png(out / "bracket_closeup.png", closeups)
    text = (
        "A machined L-bracket (made in code) on a table, 0.6 m from the camera, rendered ideal and "
        "with two sensor presets. Black = no return: the emitter shadow beside the part, range "
        "limits and dropouts. Files: bracket_<sensor>.png (uint16 depth, scale in the .json beside "
        "it), bracket_realsense-d435.ply (point cloud), *.config.yaml (everything each render used)."
    )
    return ReportSection(
        "Built-in bracket, three sensors",
        text,
        ["bracket_sensors.png", "bracket_closeup.png"],
        table,
    ), summaries


def m3t_section(out: Path, quiet: bool) -> tuple[ReportSection, dict] | None:
    """Real RealSense frame of the M3T triangle beside its simulation at M3T's pose."""
    from sim2real.core.camera_io import load_camera, load_camera_pose
    from sim2real.core.data import data_root
    from sim2real.core.depth_io import read_depth
    from sim2real.core.mesh_io import load_mesh
    from sim2real.core.pose import invert_pose, load_pose_file
    from sim2real.sensors.presets import get_preset
    from sim2real.sensors.render import render_scene
    from sim2real.sensors.scene import make_scene

    root = data_root()
    folder = root / "real" / "depth-m3t" if root else None
    if folder is None or not folder.is_dir():
        return None
    camera = load_camera(folder / "depth_camera.yaml")
    T_world_cam = load_camera_pose(folder / "depth_camera.yaml")
    T_world_body = load_pose_file(folder / "triangle_pose_optimizer_test.txt")
    T_body_geometry = load_pose_file(folder / "triangle.yaml")
    T_cam_part = invert_pose(T_world_cam) @ T_world_body @ T_body_geometry
    scene = make_scene([load_mesh(folder / "triangle.obj", "m")], [T_cam_part])
    real = read_depth(folder / "depth_camera_image_200.png", depth_scale=camera.depth_scale)
    ideal = render_scene(scene, camera, None).depth_m
    d435 = render_scene(scene, camera, get_preset("realsense-d435").profile, seed=0).depth_m
    part = ideal > 0
    both = part & (real > 0)
    diff = np.where(both, real - ideal, 0.0)
    crop = crop_around(part, pad=40)
    sim_on_real = np.where(part, d435, real)  # the simulated part pasted into the real frame
    depth_panels_png(
        out / "m3t_real_vs_sim.png",
        {
            "real D4xx frame": real[crop],
            "real, part replaced by simulation": sim_on_real[crop],
            "sim ideal": ideal[crop],
        },
    )
    depth_panels_png(
        out / "m3t_difference.png",
        {"real - ideal sim, on the part [m]": diff[crop]},
        symmetric=True,
        cmap="RdBu_r",
        label="real - sim [m]",
    )
    # sort the part's pixels: no real return, something in front (the bottle), or the part itself
    occluded = both & (real < ideal - OCCLUSION_MARGIN_M)
    agree = both & ~occluded & (np.abs(real - ideal) <= OCCLUSION_MARGIN_M)
    residual = np.abs(diff[agree])
    stats = {
        "part_pixels": int(part.sum()),
        "no_real_return": int((part & ~both).sum()),
        "occluded_in_real_frame": int(occluded.sum()),
        "real_on_part": int(agree.sum()),
        "median_abs_diff_mm": float(np.median(residual) * 1e3) if residual.size else float("nan"),
    }
    n = max(stats["part_pixels"], 1)
    table = [
        ("part pixels (simulated)", str(stats["part_pixels"])),
        (
            "no real return there",
            f"{stats['no_real_return']} ({100 * stats['no_real_return'] / n:.0f} %)",
        ),
        (
            f"real depth nearer by > {OCCLUSION_MARGIN_M * 100:.0f} cm (occluder)",
            f"{stats['occluded_in_real_frame']} ({100 * stats['occluded_in_real_frame'] / n:.0f} %)",
        ),
        (
            "real depth on the part",
            f"{stats['real_on_part']} ({100 * stats['real_on_part'] / n:.0f} %)",
        ),
        ("median |real - sim| on the part", f"{stats['median_abs_diff_mm']:.1f} mm"),
    ]
    text = (
        "Real data: DLR-RM/3DObjectTracking (M3T, MIT licence), an Intel RealSense D4xx depth frame "
        "with the triangle part at the pose M3T's own tracker estimated (not independent ground "
        "truth). The simulation uses M3T's camera intrinsics and the realsense-d435 preset's noise. "
        "Much of the dark part returns no real depth, and a bottle occludes part of it: the gap that "
        "calibration (next stage) closes."
    )
    _say(
        quiet,
        f"  M3T triangle: real depth on {table[3][1]} of the part's pixels, "
        f"median |real - sim| there {stats['median_abs_diff_mm']:.1f} mm",
    )
    return ReportSection(
        "Real frame vs simulation (M3T triangle)",
        text,
        ["m3t_real_vs_sim.png", "m3t_difference.png"],
        table,
    ), stats


def calibration_section(out: Path, quiet: bool) -> tuple[ReportSection, dict] | None:
    """Calibrate the PrimeSense sensor of the PCL grabber frames as ``depth calibrate`` does by
    default (base by evidence, frame 1 held out) and measure the gap on frame 1, which the
    calibration never saw, against the ideal sensor and the kinect-v1 preset."""
    import json

    from sim2real.core.atomic import write_text_atomic
    from sim2real.core.data import data_root
    from sim2real.sensors.calibration_report import noise_curves_png, reference_overlay_png
    from sim2real.sensors.calibration_run import run_calibration
    from sim2real.sensors.gap_run import gap_out_of_sample
    from sim2real.sensors.presets import get_preset
    from sim2real.sensors.profile import save_profile

    root = data_root()
    grabber = root / "real" / "depth-pcl" / "grabber" if root else None
    if grabber is None or not grabber.is_dir():
        return None
    frames = [grabber / "frame_0_depth.tiff", grabber / "frame_1_depth.tiff"]
    run = run_calibration(frames, grabber / "frame_0_camera.xml", name="pcl-primesense")
    save_profile(run.profile, out / "pcl_calibrated.yaml")
    profiles = {
        "ideal": get_preset("ideal").profile,
        "kinect-v1": get_preset("kinect-v1").profile,
        "calibrated": run.profile,
    }
    # on frame 1 alone; were frame 0 given too, the calibrated profile's record (fitted to
    # frame 0) would leave it out for that profile
    gap = gap_out_of_sample(run.references[1:], profiles, seeds=(0, 1))
    write_text_atomic(out / "pcl_gap.json", json.dumps(gap.to_json(), indent=2))
    reference_overlay_png(out / "pcl_reference.png", run.references[0])
    noise_curves_png(out / "pcl_noise.png", gap.real, {g.profile: g.simulated for g in gap.gaps})
    header, *rows = gap.table()
    table = [
        (
            f"{row[0]} ({row[1]})",
            "  ".join(f"{h}={v}" for h, v in zip(header[2:], row[2:], strict=True)),
        )
        for row in rows
    ]
    for name, text in table:
        _say(quiet, f"  gap / {name}: {text}")
    _say(quiet, f"  {run.base.reason()}")
    text = (
        "Real data: PCL test data (BSD), two frames of one static scene from a PrimeSense sensor. "
        "`depth calibrate` on both frames holds frame 1 out by default: the profile is fitted to "
        f"frame 0 against the planes found in it (pcl_calibrated.yaml; {run.base.reason()}), "
        "and judged on frame 1, which calibration never saw (pcl_gap.json; the presets are "
        "judged on the same frame). noise_bins_within_25pct: share of the 10 cm depth bins whose "
        "local noise is within 25 % of the real one (higher is better); the rest: lower is "
        "better. Noise curves: the spread of depth minus its local 9x9 median on frame 1."
    )
    images = ["pcl_reference.png", "pcl_noise.png"]
    return ReportSection("Calibration from a real frame, gap on another", text, images, table), {
        g.profile: g.metrics for g in gap.gaps
    }


def tracking_section(out: Path, quiet: bool) -> tuple[ReportSection, dict]:
    """Track the built-in bracket through a generated sequence where a bar hides up to half of
    it, with the realsense-d435 noise, and plot the error against the ground truth."""
    from sim2real.core.pose_records import write_pose_records
    from sim2real.models.part import PreparedModel
    from sim2real.sensors.demo_part import machined_bracket
    from sim2real.sensors.presets import get_preset
    from sim2real.tracking.report import write_track_report
    from sim2real.tracking.run import track_recording
    from sim2real.tracking.sequence import load_sequence
    from sim2real.tracking.synth import synthesize_sequence

    part = machined_bracket()
    d435 = get_preset("realsense-d435")
    synth = synthesize_sequence(
        part, motion="occluded", frames=60, seed=0, profile=d435.profile, camera=d435.camera
    )
    synth.write(out / "track_sequence")
    sequence = load_sequence(out / "track_sequence")
    result = track_recording(PreparedModel(part), sequence, sequence.gt[sequence.frame_ids[0]])
    write_pose_records(out / "track_poses.jsonl", result.run.records)
    evaluation = result.evaluation
    write_track_report(out / "track_report", result.run, sequence, evaluation)
    lines = evaluation.summary_lines()
    for line in lines:
        _say(quiet, f"  tracking: {line}")
    text = (
        "A generated 60-frame sequence (sim2real track synth --motion occluded): the bracket moves "
        "on its table while a bar hides up to half of it; RealSense D435 noise. The tracker starts "
        "from the first ground-truth pose. Top: its score and status per frame; bottom: ADD (and "
        "ADD-S, faint) against the ground truth (log scale). Files: track_sequence/ (BOP layout), "
        "track_poses.jsonl, track_report/index.html."
    )
    table = [(line.split(":")[0], ":".join(line.split(":")[1:]).strip()) for line in lines]
    images = ["track_report/track.png", "track_report/overlays.png"]
    return ReportSection("Tracking a partly hidden part", text, images, table), evaluation.to_dict()


def run_demo(out: str | Path = "runs/demo", quiet: bool = False) -> DemoResult:
    """Run every demo stage and write ``out/index.html``: into a temporary folder beside
    ``out``, renamed onto it at the end (an interrupted demo leaves nothing)."""
    from sim2real.core.atomic import atomic_folder

    final = Path(out)
    with atomic_folder(final) as out:
        _say(quiet, f"sim2real demo -> {final}")
        summaries = _stages(out, quiet)
    return DemoResult(report=final / "index.html", summaries=summaries)


def _stages(out: Path, quiet: bool) -> dict:
    sections, summaries = [], {}
    section, summaries["bracket"] = bracket_section(out, quiet)
    sections.append(section)
    real = m3t_section(out, quiet)
    if real is None:
        sections.append(
            ReportSection(
                "Real frame vs simulation",
                "Real data not found: set SIM2REAL_DATA to the folder holding real/.",
            )
        )
        _say(quiet, "  real data not found (set SIM2REAL_DATA): skipped the real-frame comparison")
    else:
        sections.append(real[0])
        summaries["m3t"] = real[1]
    calibration = calibration_section(out, quiet)
    if calibration is not None:
        sections.append(calibration[0])
        summaries["calibration"] = calibration[1]
    section, summaries["tracking"] = tracking_section(out, quiet)
    sections.append(section)
    from sim2real.models.demo import run_model_demo
    from sim2real.models.demo_tune import tuned_model_section

    sections += run_model_demo(out, quiet)
    tuned = tuned_model_section(out, quiet)
    if tuned is not None:
        sections.append(tuned)
    from sim2real.sysid.demo import run_dynamics_demo

    sections += run_dynamics_demo(out, quiet)
    from sim2real.actuators.demo import run_actuator_demo

    sections.append(run_actuator_demo(out, quiet))
    write_html_report(out, "sim2real demo: depth sensors, part tracking, dynamics", sections)
    return summaries
