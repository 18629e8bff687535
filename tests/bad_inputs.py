"""The good files the bad-input catalogue spoils one at a time, and the in-process runner that
calls the console entry point exactly as a user's shell does (argv in; stdout, stderr and the
exit code out), without a new interpreter per case."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import trimesh
from PIL import Image

from sim2real.cli.main import main


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str


def run_main(*args) -> Outcome:
    """``sim2real ARGS`` in this process: the exit code and what it printed. An exception that
    escapes the entry point (a traceback for the user) fails the calling test."""
    out, err = io.StringIO(), io.StringIO()
    argv = sys.argv
    sys.argv = ["sim2real", *map(str, args)]
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv = argv
    return Outcome(code, out.getvalue(), err.getvalue())


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` with a digest of its bytes."""
    return {
        str(p.relative_to(folder)): hashlib.sha1(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def good_inputs(root: Path) -> dict[str, Path]:
    """Small valid inputs of every kind the commands read (each case spoils one)."""
    root.mkdir(parents=True, exist_ok=True)
    f: dict[str, Path] = {}
    f["mesh"] = root / "box.stl"
    trimesh.creation.box((0.08, 0.06, 0.04)).export(f["mesh"])
    f["camera"] = root / "camera.json"
    cam = {"fx": 300.0, "fy": 300.0, "cx": 79.5, "cy": 59.5, "width": 160, "height": 120}
    f["camera"].write_text(json.dumps({**cam, "depth_scale": 0.001}))
    depth = np.full((120, 160), 800, np.uint16)
    depth[40:80, 50:110] = 600
    f["depth"] = root / "frame_000000.png"
    Image.fromarray(depth).save(f["depth"])
    f["pose"] = root / "pose.txt"
    f["pose"].write_text("1 0 0 0\n0 1 0 0\n0 0 1 0.6\n0 0 0 1\n")
    f["trajectory"] = root / "taught.csv"
    f["trajectory"].write_text("x,y,z,qx,qy,qz,qw\n0.5,0,0.3,0,0,0,1\n0.6,0,0.3,0,0,0,1\n")
    record = {"frame": 0, "status": "tracking", "score": 0.95, "T_cam_part": np.eye(4).tolist()}
    record["T_cam_part"][2][3] = 0.6
    f["poses"] = root / "poses.jsonl"
    f["poses"].write_text(json.dumps(record) + "\n")
    f["log"] = root / "pendulum.csv"
    t = np.arange(0, 1.0, 0.005)
    rows = ["time,position,velocity,torque"] + [
        f"{ti:.3f},{0.1 * np.sin(3 * ti):.5f},{0.3 * np.cos(3 * ti):.5f},0.0" for ti in t
    ]
    f["log"].write_text("\n".join(rows) + "\n")
    f["servo"] = root / "servo.json"
    entries = [
        {"timestamp": 0.01 * k, "goal_position": 0.3 * np.sin(0.05 * k), "position": 0.0,
         "speed": 0.0, "load": 0, "input_volts": 7.3, "temp": 30.0, "torque_enable": True}
        for k in range(200)
    ]  # fmt: skip
    f["servo"].write_text(json.dumps(
        {"mass": 0.49, "length": 0.1, "kp": 200, "vin": 7.4, "motor": "xl330",
         "trajectory": "sin_sin", "dt": 0.005, "entries": entries}
    ))  # fmt: skip
    f["afile"] = root / "afile.txt"
    f["afile"].write_text("a file where a folder is expected\n")
    f["adir"] = root / "adir.png"  # a folder named like an output file
    f["adir"].mkdir()
    return f
