"""The bad-input catalogue: malformed inputs across every command group. Each must exit 2 (3 for
``adapt`` on a lost track) with one ``error:`` line on stderr naming the file or the option,
no traceback, no output and no temporary file left, its inputs untouched; and the same
command, given good inputs, must then work where the case says so."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from bad_inputs import good_inputs, run_main, snapshot
from PIL import Image

POSE = "0 0 0.6 0 0 0 1"


def spoil(path: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


# (id, argv given the good inputs `f` and a scratch folder `s`, expected code, needles)
CASES = [
    # --- depth render ---------------------------------------------------------------------
    (
        "render: mesh missing",
        lambda f, s: ["depth", "render", s / "none.stl", "--pose", POSE, "--out", s / "o.png"],
        2,
        ["none.stl"],
    ),
    (
        "render: empty mesh",
        lambda f, s: [
            "depth",
            "render",
            spoil(s / "e.stl", b""),
            "--pose",
            POSE,
            "--out",
            s / "o.png",
        ],
        2,
        ["e.stl"],
    ),
    (
        "render: garbage mesh",
        lambda f, s: [
            "depth",
            "render",
            spoil(s / "g.stl", b"\x00\x17garbage" * 40),
            "--pose",
            POSE,
            "--out",
            s / "o.png",
        ],
        2,
        ["g.stl"],
    ),
    (
        "render: vertices without faces",
        lambda f, s: [
            "depth",
            "render",
            spoil(s / "v.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\n"),
            "--pose",
            POSE,
            "--out",
            s / "o.png",
        ],
        2,
        ["v.obj", "no triangles"],
    ),
    (
        "render: NaN pose",
        lambda f, s: [
            "depth",
            "render",
            f["mesh"],
            "--pose",
            "0 0 nan 0 0 0 1",
            "--out",
            s / "o.png",
        ],
        2,
        ["--pose"],
    ),
    (
        "render: non-rigid pose",
        lambda f, s: [
            "depth",
            "render",
            f["mesh"],
            "--pose",
            "1 0.4 0 0 0 1 0 0 0 0 1 0.6 0 0 0 1",
            "--out",
            s / "o.png",
        ],
        2,
        ["--pose"],
    ),
    (
        "render: pose of 5 numbers",
        lambda f, s: ["depth", "render", f["mesh"], "--pose", "0 0 0.6 0 1", "--out", s / "o.png"],
        2,
        ["--pose"],
    ),
    (
        "render: negative focal length",
        lambda f, s: [
            "depth",
            "render",
            f["mesh"],
            "--pose",
            POSE,
            "--camera",
            spoil(
                s / "c.json",
                json.dumps(
                    {"fx": -300, "fy": 300, "cx": 79.5, "cy": 59.5, "width": 160, "height": 120}
                ),
            ),
            "--out",
            s / "o.png",
        ],
        2,
        ["c.json", "fx"],
    ),
    (
        "render: output under a file",
        lambda f, s: ["depth", "render", f["mesh"], "--pose", POSE, "--out", f["afile"] / "o.png"],
        2,
        ["--out"],
    ),
    (
        "render: output is a folder",
        lambda f, s: ["depth", "render", f["mesh"], "--pose", POSE, "--out", f["adir"]],
        2,
        ["--out"],
    ),
    (
        "render: unknown output kind",
        lambda f, s: ["depth", "render", f["mesh"], "--pose", POSE, "--out", s / "o.xyz"],
        2,
        ["--out"],
    ),
    (
        "render: negative seed",
        lambda f, s: [
            "depth",
            "render",
            f["mesh"],
            "--pose",
            POSE,
            "--seed",
            "-3",
            "--out",
            s / "o.png",
        ],
        2,
        ["--seed"],
    ),
    (
        "render: unknown sensor",
        lambda f, s: [
            "depth",
            "render",
            f["mesh"],
            "--pose",
            POSE,
            "--sensor",
            "kinect-v9",
            "--out",
            s / "o.png",
        ],
        2,
        ["kinect-v9"],
    ),
    (
        "render: profile with unknown field",
        lambda f, s: [
            "depth",
            "render",
            f["mesh"],
            "--pose",
            POSE,
            "--profile",
            spoil(s / "p.yaml", "name: x\nbaseline_m: 0.05\nnoisiness: 3\n"),
            "--out",
            s / "o.png",
        ],
        2,
        ["p.yaml", "noisiness"],
    ),
    (
        "render: profile with NaN",
        lambda f, s: [
            "depth",
            "render",
            f["mesh"],
            "--pose",
            POSE,
            "--profile",
            spoil(s / "p.yaml", "name: x\nbaseline_m: .nan\n"),
            "--out",
            s / "o.png",
        ],
        2,
        ["p.yaml", "baseline_m"],
    ),
    (
        "render: unknown option",
        lambda f, s: [
            "depth",
            "render",
            f["mesh"],
            "--pose",
            POSE,
            "--colour",
            "red",
            "--out",
            s / "o.png",
        ],
        2,
        ["--colour"],
    ),
    # --- depth calibrate / gap ------------------------------------------------------------
    (
        "calibrate: frame missing",
        lambda f, s: [
            "depth",
            "calibrate",
            "--frames",
            s / "none.png",
            "--camera",
            f["camera"],
            "--out",
            s / "p.yaml",
        ],
        2,
        ["none.png"],
    ),
    (
        "calibrate: 8-bit depth",
        lambda f, s: [
            "depth",
            "calibrate",
            "--frames",
            _png8(s / "d8.png"),
            "--camera",
            f["camera"],
            "--out",
            s / "p.yaml",
        ],
        2,
        ["d8.png"],
    ),
    (
        "calibrate: truncated PNG",
        lambda f, s: [
            "depth",
            "calibrate",
            "--frames",
            spoil(s / "t.png", f["depth"].read_bytes()[:300]),
            "--camera",
            f["camera"],
            "--out",
            s / "p.yaml",
        ],
        2,
        ["t.png"],
    ),
    (
        "calibrate: camera missing",
        lambda f, s: [
            "depth",
            "calibrate",
            "--frames",
            f["depth"],
            "--camera",
            s / "none.json",
            "--out",
            s / "p.yaml",
        ],
        2,
        ["none.json"],
    ),
    (
        "calibrate: output under a file",
        lambda f, s: [
            "depth",
            "calibrate",
            "--frames",
            f["depth"],
            "--camera",
            f["camera"],
            "--out",
            f["afile"] / "p.yaml",
        ],
        2,
        ["--out"],
    ),
    (
        "calibrate: camera of garbage",
        lambda f, s: [
            "depth",
            "calibrate",
            "--frames",
            f["depth"],
            "--camera",
            spoil(s / "c.json", "{not json"),
            "--out",
            s / "p.yaml",
        ],
        2,
        ["c.json"],
    ),
    (
        "gap: unknown profile",
        lambda f, s: [
            "depth",
            "gap",
            "--frames",
            f["depth"],
            "--camera",
            f["camera"],
            "--profile",
            "nosuch",
            "--out",
            s / "g.json",
        ],
        2,
        ["nosuch"],
    ),
    (
        "gap: output under a file",
        lambda f, s: [
            "depth",
            "gap",
            "--frames",
            f["depth"],
            "--camera",
            f["camera"],
            "--profile",
            "ideal",
            "--out",
            f["afile"] / "g.json",
        ],
        2,
        ["--out"],
    ),
    # --- track synth / run / eval --------------------------------------------------------
    (
        "synth: unknown motion",
        lambda f, s: [
            "track",
            "synth",
            f["mesh"],
            "--mesh-unit",
            "m",
            "--out",
            s / "seq",
            "--motion",
            "wobble",
        ],
        2,
        ["--motion"],
    ),
    (
        "synth: no frames",
        lambda f, s: [
            "track",
            "synth",
            f["mesh"],
            "--mesh-unit",
            "m",
            "--out",
            s / "seq",
            "--frames",
            "0",
        ],
        2,
        ["--frames"],
    ),
    (
        "synth: output under a file",
        lambda f, s: [
            "track",
            "synth",
            f["mesh"],
            "--mesh-unit",
            "m",
            "--out",
            f["afile"] / "seq",
            "--frames",
            "2",
        ],
        2,
        ["--out"],
    ),
    (
        "synth: negative seed",
        lambda f, s: [
            "track",
            "synth",
            f["mesh"],
            "--mesh-unit",
            "m",
            "--out",
            s / "seq",
            "--seed",
            "-1",
        ],
        2,
        ["--seed"],
    ),
    (
        "run: camera of another size",
        lambda f, s: [
            "track",
            "run",
            f["mesh"],
            "--mesh-unit",
            "m",
            "--frames",
            f["depth"],
            "--camera",
            spoil(
                s / "c.json",
                json.dumps(
                    {"fx": 300, "fy": 300, "cx": 159.5, "cy": 119.5, "width": 320, "height": 240}
                ),
            ),
            "--init",
            POSE,
            "--out",
            s / "p.jsonl",
        ],
        2,
        ["frame_000000.png", "320x240"],
    ),
    (
        "run: an RGB image as depth",
        lambda f, s: [
            "track",
            "run",
            f["mesh"],
            "--mesh-unit",
            "m",
            "--frames",
            _rgb(s / "frame_000000.png"),
            "--camera",
            f["camera"],
            "--init",
            POSE,
            "--out",
            s / "p.jsonl",
        ],
        2,
        ["frame_000000.png"],
    ),
    (
        "run: bad symmetry",
        lambda f, s: [
            "track",
            "run",
            f["mesh"],
            "--mesh-unit",
            "m",
            "--frames",
            f["depth"],
            "--camera",
            f["camera"],
            "--init",
            POSE,
            "--symmetry",
            "axis:w",
            "--out",
            s / "p.jsonl",
        ],
        2,
        ["--symmetry"],
    ),
    (
        "run: non-rigid init",
        lambda f, s: [
            "track",
            "run",
            f["mesh"],
            "--mesh-unit",
            "m",
            "--frames",
            f["depth"],
            "--camera",
            f["camera"],
            "--init",
            "2 0 0 0 0 1 0 0 0 0 1 0.6 0 0 0 1",
            "--out",
            s / "p.jsonl",
        ],
        2,
        ["--init"],
    ),
    (
        "run: output not .jsonl",
        lambda f, s: [
            "track",
            "run",
            f["mesh"],
            "--mesh-unit",
            "m",
            "--frames",
            f["depth"],
            "--camera",
            f["camera"],
            "--init",
            POSE,
            "--out",
            s / "p.json",
        ],
        2,
        ["--out"],
    ),
    (
        "run: output under a file",
        lambda f, s: [
            "track",
            "run",
            f["mesh"],
            "--mesh-unit",
            "m",
            "--frames",
            f["depth"],
            "--camera",
            f["camera"],
            "--init",
            POSE,
            "--out",
            f["afile"] / "p.jsonl",
        ],
        2,
        ["--out"],
    ),
    (
        "run: report under a file",
        lambda f, s: [
            "track",
            "run",
            f["mesh"],
            "--mesh-unit",
            "m",
            "--frames",
            f["depth"],
            "--camera",
            f["camera"],
            "--init",
            POSE,
            "--out",
            s / "p.jsonl",
            "--report",
            f["afile"] / "r",
        ],
        2,
        ["--report"],
    ),
    (
        "run: empty frame folder",
        lambda f, s: [
            "track",
            "run",
            f["mesh"],
            "--mesh-unit",
            "m",
            "--frames",
            _folder(s / "empty"),
            "--camera",
            f["camera"],
            "--init",
            POSE,
            "--out",
            s / "p.jsonl",
        ],
        2,
        ["empty"],
    ),
    (
        "eval: truncated poses",
        lambda f, s: [
            "track",
            "eval",
            spoil(s / "p.jsonl", f["poses"].read_text() + '{"frame": 1, "status": "track'),
            "--gt",
            _gt(s),
            "--mesh",
            f["mesh"],
            "--mesh-unit",
            "m",
        ],
        2,
        ["p.jsonl", "line 2"],
    ),
    (
        "eval: NaN pose",
        lambda f, s: [
            "track",
            "eval",
            spoil(s / "p.jsonl", f["poses"].read_text().replace("0.6", "NaN")),
            "--gt",
            _gt(s),
            "--mesh",
            f["mesh"],
            "--mesh-unit",
            "m",
        ],
        2,
        ["p.jsonl", "T_cam_part"],
    ),
    (
        "eval: ground truth missing",
        lambda f, s: [
            "track",
            "eval",
            f["poses"],
            "--gt",
            s / "scene_gt.json",
            "--mesh",
            f["mesh"],
            "--mesh-unit",
            "m",
        ],
        2,
        ["scene_gt.json"],
    ),
    (
        "eval: visible file missing",
        lambda f, s: [
            "track",
            "eval",
            f["poses"],
            "--gt",
            _gt(s),
            "--mesh",
            f["mesh"],
            "--mesh-unit",
            "m",
            "--visible",
            s / "v.json",
        ],
        2,
        ["--visible"],
    ),
    (
        "eval: output under a file",
        lambda f, s: [
            "track",
            "eval",
            f["poses"],
            "--gt",
            _gt(s),
            "--mesh",
            f["mesh"],
            "--mesh-unit",
            "m",
            "--out",
            f["afile"] / "e.json",
        ],
        2,
        ["--out"],
    ),
    # --- adapt ----------------------------------------------------------------------------
    (
        "adapt: lost track refused",
        lambda f, s: [
            "adapt",
            f["trajectory"],
            "--taught-pose",
            POSE,
            "--observed",
            spoil(s / "p.jsonl", '{"frame": 3, "status": "lost", "score": 0.1}\n'),
            "--camera-pose",
            POSE,
            "--out",
            s / "a.csv",
        ],
        3,
        ["lost"],
    ),
    (
        "adapt: trajectory without qw",
        lambda f, s: [
            "adapt",
            spoil(s / "t.csv", "x,y,z,qx,qy,qz\n0.5,0,0.3,0,0,0\n"),
            "--taught-pose",
            POSE,
            "--observed",
            POSE,
            "--camera-pose",
            POSE,
            "--out",
            s / "a.csv",
        ],
        2,
        ["t.csv", "qw"],
    ),
    (
        "adapt: trajectory with a NaN row",
        lambda f, s: [
            "adapt",
            spoil(s / "t.csv", "x,y,z,qx,qy,qz,qw\n0.5,0,nan,0,0,0,1\n"),
            "--taught-pose",
            POSE,
            "--observed",
            POSE,
            "--camera-pose",
            POSE,
            "--out",
            s / "a.csv",
        ],
        2,
        ["t.csv"],
    ),
    (
        "adapt: non-rigid camera pose",
        lambda f, s: [
            "adapt",
            f["trajectory"],
            "--taught-pose",
            POSE,
            "--observed",
            POSE,
            "--camera-pose",
            "1 0 0 0 0 1 0 0 0 0 -1 0 0 0 0 1",
            "--out",
            s / "a.csv",
        ],
        2,
        ["--camera-pose"],
    ),
    (
        "adapt: output under a file",
        lambda f, s: [
            "adapt",
            f["trajectory"],
            "--taught-pose",
            POSE,
            "--observed",
            POSE,
            "--camera-pose",
            POSE,
            "--out",
            f["afile"] / "a.csv",
        ],
        2,
        ["--out"],
    ),
    (
        "adapt: truncated poses",
        lambda f, s: [
            "adapt",
            f["trajectory"],
            "--taught-pose",
            POSE,
            "--observed",
            spoil(s / "p.jsonl", '{"frame": 3, "status": "track'),
            "--camera-pose",
            POSE,
            "--out",
            s / "a.csv",
        ],
        2,
        ["p.jsonl", "line 1"],
    ),
    (
        "adapt: two tracks in one poses file",
        lambda f, s: [
            "adapt",
            f["trajectory"],
            "--taught-pose",
            POSE,
            "--observed",
            spoil(s / "p.jsonl", _tracking_lines(4, 5, 2)),
            "--camera-pose",
            POSE,
            "--out",
            s / "a.csv",
        ],
        2,
        ["p.jsonl", "line 3, frame", "frame 2 follows frame 5"],
    ),
    # --- model ----------------------------------------------------------------------------
    (
        "prepare: input missing",
        lambda f, s: ["model", "prepare", s / "none.step", "--out", s / "m"],
        2,
        ["none.step"],
    ),
    (
        "prepare: unsupported input",
        lambda f, s: ["model", "prepare", spoil(s / "part.docx", "x"), "--out", s / "m"],
        2,
        ["part.docx"],
    ),
    (
        "prepare: output is a file",
        lambda f, s: ["model", "prepare", f["mesh"], "--unit", "m", "--out", f["afile"]],
        2,
        ["--out"],
    ),
    (
        "tune: not a model",
        lambda f, s: [
            "model",
            "tune",
            _folder(s / "nomodel"),
            "--frames",
            f["depth"],
            "--camera",
            f["camera"],
            "--poses",
            POSE,
        ],
        2,
        ["nomodel"],
    ),
    ("info: not a model", lambda f, s: ["model", "info", _folder(s / "nomodel")], 2, ["nomodel"]),
    # --- sysid ----------------------------------------------------------------------------
    (
        "sysid fit: log without torque",
        lambda f, s: [
            "sysid",
            "fit",
            "--model",
            "pendulum-dfki",
            "--log",
            spoil(s / "l.csv", "time,position,velocity\n0,0,0\n0.01,0,0\n"),
            "--out",
            s / "fit" / "f.xml",
        ],
        2,
        ["l.csv", "torque"],
    ),
    (
        "sysid fit: log with NaN rows",
        lambda f, s: [
            "sysid",
            "fit",
            "--model",
            "pendulum-dfki",
            "--log",
            spoil(s / "l.csv", f["log"].read_text().replace("0.0\n", "nan\n", 3)),
            "--out",
            s / "fit" / "f.xml",
        ],
        2,
        ["l.csv"],
    ),
    (
        "sysid fit: time going back",
        lambda f, s: [
            "sysid",
            "fit",
            "--model",
            "pendulum-dfki",
            "--log",
            spoil(
                s / "l.csv",
                "time,position,velocity,torque\n0,0,0,0\n0.01,0,0,0\n0.005,0,0,0\n0.02,0,0,0\n",
            ),
            "--out",
            s / "fit" / "f.xml",
        ],
        2,
        ["l.csv", "time"],
    ),
    (
        "sysid fit: binary log",
        lambda f, s: [
            "sysid",
            "fit",
            "--model",
            "pendulum-dfki",
            "--log",
            spoil(s / "l.csv", bytes(range(256)) * 8),
            "--out",
            s / "fit" / "f.xml",
        ],
        2,
        ["l.csv"],
    ),
    (
        "sysid fit: unknown model",
        lambda f, s: [
            "sysid",
            "fit",
            "--model",
            "nosuch-robot",
            "--log",
            f["log"],
            "--out",
            s / "fit" / "f.xml",
        ],
        2,
        ["nosuch-robot"],
    ),
    (
        "sysid fit: inverted bounds",
        lambda f, s: [
            "sysid",
            "fit",
            "--model",
            "pendulum-dfki",
            "--log",
            f["log"],
            "--spec",
            spoil(
                s / "spec.yaml",
                "params:\n  - name: damping\n    target: joint:pendulum.damping\n    nominal: 0.05\n    lower: 1.0\n    upper: 0.0\n",
            ),
            "--out",
            s / "fit" / "f.xml",
        ],
        2,
        ["spec.yaml"],
    ),
    (
        "sysid fit: output under a file",
        lambda f, s: [
            "sysid",
            "fit",
            "--model",
            "pendulum-dfki",
            "--log",
            f["log"],
            "--out",
            f["afile"] / "f.xml",
        ],
        2,
        ["--out"],
    ),
    (
        "sysid eval: binary log",
        lambda f, s: [
            "sysid",
            "eval",
            "--model",
            "pendulum-dfki",
            "--log",
            spoil(s / "l.csv", bytes(range(256)) * 8),
        ],
        2,
        ["l.csv"],
    ),
    (
        "sysid eval: unknown mapping",
        lambda f, s: [
            "sysid",
            "eval",
            "--model",
            "pendulum-dfki",
            "--log",
            f["log"],
            "--builtin-mapping",
            "nosuch-map",
        ],
        2,
        ["nosuch-map"],
    ),
    # --- actuator --------------------------------------------------------------------------
    (
        "actuator fit: no time",
        lambda f, s: [
            "actuator",
            "fit",
            "--logs",
            f["servo"],
            "--model",
            "pd",
            "--time-budget",
            "0",
            "--out",
            s / "a.yaml",
        ],
        2,
        ["--time-budget"],
    ),
    (
        "actuator fit: unknown model",
        lambda f, s: [
            "actuator",
            "fit",
            "--logs",
            f["servo"],
            "--model",
            "m9",
            "--out",
            s / "a.yaml",
        ],
        2,
        ["--model", "m9"],
    ),
    (
        "actuator fit: log not JSON",
        lambda f, s: [
            "actuator",
            "fit",
            "--logs",
            spoil(s / "l.json", "{not json"),
            "--model",
            "pd",
            "--out",
            s / "a.yaml",
        ],
        2,
        ["l.json"],
    ),
    (
        "actuator fit: log without samples",
        lambda f, s: [
            "actuator",
            "fit",
            "--logs",
            spoil(s / "l.json", json.dumps({**json.loads(f["servo"].read_text()), "entries": []})),
            "--model",
            "pd",
            "--out",
            s / "a.yaml",
        ],
        2,
        ["l.json", "entries"],
    ),
    (
        "actuator fit: output under a file",
        lambda f, s: [
            "actuator",
            "fit",
            "--logs",
            f["servo"],
            "--model",
            "pd",
            "--out",
            f["afile"] / "a.yaml",
        ],
        2,
        ["--out"],
    ),
    (
        "actuator replay: negative resistance",
        lambda f, s: [
            "actuator",
            "replay",
            spoil(s / "neg.yaml", "actuator:\n  kind: dc\n  params:\n    R_ohm: -2.0\n"),
            "--log",
            f["servo"],
            "--out",
            s / "p.csv",
        ],
        2,
        ["neg.yaml", "R_ohm"],
    ),
    (
        "actuator replay: plot under a file",
        lambda f, s: [
            "actuator",
            "replay",
            spoil(s / "ok.yaml", "actuator:\n  kind: pd\n"),
            "--log",
            f["servo"],
            "--out",
            s / "p.csv",
            "--plot",
            f["afile"] / "p.png",
        ],
        2,
        ["--plot"],
    ),
    (
        "actuator replay: model missing",
        lambda f, s: [
            "actuator",
            "replay",
            s / "none.yaml",
            "--log",
            f["servo"],
            "--out",
            s / "p.csv",
        ],
        2,
        ["none.yaml"],
    ),
    (
        "actuator compare: output under a file",
        lambda f, s: [
            "actuator",
            "compare",
            "--logs",
            f["servo"],
            "--models",
            "pd",
            "--out",
            f["afile"] / "cmp",
        ],
        2,
        ["--out"],
    ),
    # --- policy ---------------------------------------------------------------------------
    (
        "policy train: unknown env",
        lambda f, s: ["policy", "train", "sim2real/Nope-v0", "--out", s / "run"],
        2,
        ["sim2real/Nope-v0"],
    ),
    (
        "policy train: no steps",
        lambda f, s: [
            "policy",
            "train",
            "sim2real/PendulumSwingup-v0",
            "--steps",
            "0",
            "--out",
            s / "run",
        ],
        2,
        ["--steps"],
    ),
    (
        "policy train: output under a file",
        lambda f, s: [
            "policy",
            "train",
            "sim2real/PendulumSwingup-v0",
            "--steps",
            "64",
            "--out",
            f["afile"] / "run",
        ],
        2,
        ["--out"],
    ),
    (
        "policy distill: no rounds",
        lambda f, s: [
            "policy",
            "distill",
            _folder(s / "teacher"),
            "--rounds",
            "0",
            "--out",
            s / "student",
        ],
        2,
        ["--rounds"],
    ),
    (
        "policy export: not a run",
        lambda f, s: ["policy", "export", _folder(s / "norun"), "--out", s / "deploy"],
        2,
        ["norun"],
    ),
    (
        "policy eval: no episodes",
        lambda f, s: ["policy", "eval", _folder(s / "norun"), "--episodes", "0"],
        2,
        ["--episodes"],
    ),
    # --- demo -----------------------------------------------------------------------------
    (
        "demo: output under a file",
        lambda f, s: ["demo", "--out", f["afile"] / "demo", "--quiet"],
        2,
        ["--out"],
    ),
]


def _png8(path: Path) -> Path:
    Image.fromarray(np.full((120, 160), 100, np.uint8)).save(path)
    return path


def _rgb(path: Path) -> Path:
    Image.fromarray(np.full((120, 160, 3), 100, np.uint8)).save(path)
    return path


def _folder(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _tracking_lines(*frames: int) -> str:
    rec = {"status": "tracking", "score": 0.9, "T_cam_part": np.eye(4).tolist()}
    return "".join(json.dumps({**rec, "frame": f}) + "\n" for f in frames)


def _gt(s: Path) -> Path:
    gt = {"0": [{"cam_R_m2c": np.eye(3).ravel().tolist(), "cam_t_m2c": [0, 0, 600], "obj_id": 1}]}
    path = s / "gt" / "scene_gt.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(gt))
    return path


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    return good_inputs(tmp_path_factory.mktemp("good"))


def test_the_catalogue_covers_every_command_group_with_over_sixty_cases():
    groups = {case[0].split(":")[0].split()[0] for case in CASES}
    assert len(CASES) >= 60
    assert {"render", "calibrate", "gap", "synth", "run", "eval", "adapt", "prepare", "tune",
            "sysid", "actuator", "policy", "demo"} <= groups  # fmt: skip


@pytest.mark.parametrize(("name", "argv", "code", "needles"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_exit_code_and_leaves_nothing(
    tmp_path, inputs, name, argv, code, needles
):
    scratch = tmp_path / "s"
    scratch.mkdir()
    args = argv(inputs, scratch)
    before_inputs = snapshot(inputs["mesh"].parent)
    before = snapshot(scratch)
    result = run_main(*args)
    lines = [line for line in result.stderr.strip().splitlines() if not line.startswith("warning:")]
    assert result.code == code, (name, result.stderr, result.stdout[-500:])
    assert len(lines) == 1, (name, result.stderr)
    expected_prefix = "refused: " if code == 3 else "error: "
    assert lines[0].startswith(expected_prefix), lines[0]
    for needle in needles:
        assert str(needle) in lines[0], (name, lines[0])
    assert "Traceback" not in result.stderr
    assert snapshot(scratch) == before, f"{name}: wrote or changed files"  # nothing new left
    assert snapshot(inputs["mesh"].parent) == before_inputs, f"{name}: changed its inputs"
