"""The command line as a user meets it: round trips, and one-line errors with exit code 2."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import trimesh
from cli_helpers import assert_one_line_error, run_cli

from sim2real.core.depth_io import read_depth

BOX_POSE = "0 0 0.6 1 0 0 0"  # 180 deg about x: the box's top faces the camera, 0.6 m away


@pytest.fixture(scope="module")
def box_obj(tmp_path_factory):
    path = tmp_path_factory.mktemp("mesh") / "box.obj"
    trimesh.creation.box((0.1, 0.08, 0.05)).export(path)
    return path


def test_help_and_version_do_not_import_heavy_libraries():
    code = (
        "import sys; from sim2real.cli.main import app; "
        "bad = [m for m in ('open3d', 'mujoco', 'torch', 'trimesh', 'matplotlib') if m in sys.modules]; "
        "print(bad)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
    version = run_cli("--version")
    assert version.returncode == 0 and version.stdout.startswith("sim2real 0.")
    assert "depth" in run_cli("--help").stdout


def test_help_texts_print_as_written():
    """Typer reads help text as rich markup: a unit in brackets, ``[s]``, is a style tag to
    it and vanishes ("Time budget of one model's fit ."); every one must be escaped."""
    import typer.main
    from rich.text import Text

    from sim2real.cli.main import app

    def commands(cmd, path):
        for name, sub in getattr(cmd, "commands", {}).items():
            yield from commands(sub, f"{path} {name}")
        yield path, cmd

    eaten = []
    for path, cmd in commands(typer.main.get_command(app), "sim2real"):
        texts = [cmd.help or ""] + [getattr(p, "help", None) or "" for p in cmd.params]
        eaten += [(path, t) for t in texts if Text.from_markup(t).plain != t.replace("\\[", "[")]
    assert not eaten
    shown = subprocess.run(
        [sys.executable, "-m", "sim2real.cli.main", "actuator", "fit", "--help"],
        capture_output=True, text=True, check=True, env={**os.environ, "COLUMNS": "200"},
    ).stdout  # fmt: skip
    assert "Time budget of one model's fit [s]." in shown


def test_command_lists_show_each_summary_as_one_paragraph():
    """A group's --help lists its commands by their summary; typer (rich mode) printed the
    docstring's own line breaks there, so 'sysid --help' read "bounded least squares run
    to" / "convergence) and write ...", broken where the source wrapped."""
    import typer.main

    from sim2real.cli.main import app

    def groups(cmd):
        subs = getattr(cmd, "commands", {})
        if subs:
            yield cmd
        for sub in subs.values():
            yield from groups(sub)

    ragged = [
        (group.name, name)
        for group in groups(typer.main.get_command(app))
        for name, cmd in group.commands.items()
        if "\n" in (cmd.short_help or cmd.help or "").split("\n\n")[0]
    ]
    assert not ragged
    listed = subprocess.run(
        [sys.executable, "-m", "sim2real.cli.main", "sysid", "--help"],
        capture_output=True, text=True, check=True, env={**os.environ, "COLUMNS": "200"},
    ).stdout  # fmt: skip
    assert "bounded least squares run to convergence) and write FITTED.xml" in listed


def test_render_png_round_trip_with_sensor_preset(tmp_path, box_obj):
    out = tmp_path / "box.png"
    proc = run_cli(
        "depth",
        "render",
        box_obj,
        "--pose",
        BOX_POSE,
        "--sensor",
        "realsense-d435",
        "--plane",
        "--out",
        out,
    )
    assert proc.returncode == 0, proc.stderr
    assert "valid pixels" in proc.stdout
    depth = read_depth(out)
    assert depth.shape == (480, 848)  # the preset's intrinsics
    # the box top is 0.6 - 0.025 = 0.575 m from the camera; noise at that range is ~ 1 mm
    assert np.median(depth[230:250, 414:434]) == pytest.approx(0.575, abs=0.004)
    assert json.loads(out.with_suffix(".json").read_text())["depth_scale"] == pytest.approx(0.001)
    config = (tmp_path / "box.png.config.yaml").read_text()
    assert "realsense-d435" in config and "T_cam_part" in config
    # a cloud of the same stem keeps its own record (both were box.config.yaml: the last won)
    cloud = tmp_path / "box.ply"
    assert run_cli("depth", "render", box_obj, "--pose", BOX_POSE, "--out", cloud).returncode == 0
    assert "realsense-d435" in (tmp_path / "box.png.config.yaml").read_text()
    assert "realsense-d435" not in (tmp_path / "box.ply.config.yaml").read_text()


def test_render_npy_ideal_is_exact_and_seeded_noise_repeats(tmp_path, box_obj):
    ideal = tmp_path / "ideal.npy"
    assert run_cli("depth", "render", box_obj, "--pose", BOX_POSE, "--out", ideal).returncode == 0
    depth = np.load(ideal)
    assert depth.shape == (480, 640)
    assert depth[240, 320] == pytest.approx(0.575, abs=1e-6)  # ideal camera preset, no noise
    a, b, c = (tmp_path / f"{n}.npy" for n in "abc")
    for out, seed in ((a, 1), (b, 1), (c, 2)):
        assert (
            run_cli(
                "depth",
                "render",
                box_obj,
                "--pose",
                BOX_POSE,
                "--sensor",
                "kinect-v1",
                "--seed",
                seed,
                "--out",
                out,
            ).returncode
            == 0
        )
    assert np.array_equal(np.load(a), np.load(b))
    assert not np.array_equal(np.load(a), np.load(c))


def test_render_point_cloud_and_scene_yaml(tmp_path, box_obj):
    scene = tmp_path / "scene.yaml"
    scene.write_text(f"objects:\n  - mesh: {box_obj}\n    pose: '{BOX_POSE}'\nplane: true\n")
    out = tmp_path / "cloud.ply"
    proc = run_cli("depth", "render", "--scene", scene, "--out", out)
    assert proc.returncode == 0, proc.stderr
    import open3d as o3d

    cloud = o3d.io.read_point_cloud(str(out))
    assert len(cloud.points) == 640 * 480  # plane fills the view behind the box


def test_bad_inputs_give_one_line_and_no_output(tmp_path, box_obj):
    out = tmp_path / "out.png"
    cases = [
        (
            ("depth", "render", tmp_path / "missing.obj", "--pose", BOX_POSE),
            ("missing.obj", "not found"),
        ),
        (
            ("depth", "render", box_obj, "--pose", "2 0 0 0 0 2 0 0 0 0 2 0.5 0 0 0 1"),
            ("--pose", "orthonormal"),
        ),
        (
            ("depth", "render", box_obj, "--pose", BOX_POSE, "--sensor", "realsense-d453"),
            ("sensor", "realsense-d435"),
        ),
        (("depth", "render", box_obj), ("--pose",)),
    ]
    empty = tmp_path / "empty.obj"
    empty.write_text("# no geometry\n")
    cases.append((("depth", "render", empty, "--pose", BOX_POSE), ("empty.obj",)))
    nan_mesh = tmp_path / "nan.obj"
    nan_mesh.write_text("v 0 0 0\nv 1 0 nan\nv 0 1 0\nf 1 2 3\n")
    cases.append((("depth", "render", nan_mesh, "--pose", BOX_POSE), ("nan.obj", "vertices")))
    zero_f = tmp_path / "zero_f.json"
    zero_f.write_text(
        json.dumps({"fx": 0, "fy": 500, "cx": 320, "cy": 240, "width": 640, "height": 480})
    )
    cases.append(
        (
            ("depth", "render", box_obj, "--pose", BOX_POSE, "--camera", zero_f),
            ("zero_f.json", "fx"),
        )
    )
    zero_size = tmp_path / "zero_size.json"
    zero_size.write_text(
        json.dumps({"fx": 500, "fy": 500, "cx": 320, "cy": 240, "width": 0, "height": 480})
    )
    cases.append(
        (
            ("depth", "render", box_obj, "--pose", BOX_POSE, "--camera", zero_size),
            ("zero_size.json", "width"),
        )
    )
    typo = tmp_path / "typo.yaml"
    typo.write_text("name: mine\naxial:\n  a_m: 0.001\n  b_per_mm: 0.002\n")
    cases.append(
        (
            ("depth", "render", box_obj, "--pose", BOX_POSE, "--profile", typo),
            ("typo.yaml", "b_per_mm"),
        )
    )
    for args, needles in cases:
        proc = run_cli(*args, "--out", out)
        assert_one_line_error(proc, *needles)
        assert not out.exists()
        assert not list(tmp_path.glob(".out*"))  # no temporary file left behind


def test_warns_when_no_part_is_in_view(tmp_path, box_obj):
    # the box 1 m behind the camera: the render succeeds, but the user is told why it is empty
    proc = run_cli(
        "depth", "render", box_obj, "--pose", "0 0 -1 0 0 0 1", "--out", tmp_path / "d.npy"
    )
    assert proc.returncode == 0
    assert "warning: no part is in view" in proc.stderr
    assert not np.load(tmp_path / "d.npy").any()


def test_colour_files_follow_one_flag_as_depth_files_do():
    """`track run --frames a b --color c d`: the help promised it, click refused 'd' (a probe)."""
    from sim2real.cli.main import expand_multi_value_options

    for verb in (["track", "run"], ["detect", "run"], ["detect", "finetune"]):
        argv = [*verb, "X", "--frames", "a.png", "b.png", "--color", "c.png", "d.png", "--quiet"]
        assert expand_multi_value_options(argv) == [
            *verb, "X", "--frames", "a.png", "--frames", "b.png",
            "--color", "c.png", "--color", "d.png", "--quiet",
        ]  # fmt: skip


def test_detect_commands_read_depth_in_other_encodings_and_a_cad_file_says_prepare_it(tmp_path):
    """`detect run` refused a TUM folder naming --encoding tum, which it did not take; a STEP
    given where a mesh goes failed on a missing module (a probe)."""
    for verb in ("run", "finetune"):
        listed = subprocess.run(
            [sys.executable, "-m", "sim2real.cli.main", "detect", verb, "--help"],
            capture_output=True, text=True, check=True, env={**os.environ, "COLUMNS": "200"},
        ).stdout  # fmt: skip
        assert "--encoding" in listed, verb
    (tmp_path / "part.step").write_text("ISO-10303-21;\n")
    proc = run_cli("depth", "render", tmp_path / "part.step", "--pose", "0 0 0.5 0 0 0 1",
                   "--out", tmp_path / "d.npy")  # fmt: skip
    assert proc.returncode == 2 and "prepare it first (sim2real model prepare" in proc.stderr


def test_ctrl_c_inside_a_command_is_one_line_and_exit_2(monkeypatch, tmp_path):
    """A KeyboardInterrupt inside a command (typer returns 130 for it, silently): the user
    reads that it was interrupted and that nothing was written."""
    from bad_inputs import run_main

    import sim2real.actuators.run

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(sim2real.actuators.run, "fit_actuator", interrupted)
    out = tmp_path / "act.yaml"
    got = run_main(
        "actuator", "fit", "--logs", tmp_path / "log.json", "--model", "pd", "--out", out
    )
    assert got.code == 2, got
    assert got.stderr.strip() == "error: interrupted: nothing was written", got.stderr
    assert not out.exists()
