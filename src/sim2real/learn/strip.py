"""An image strip of a recorded episode: a few frames side by side (one PNG), rendered by
MuJoCo's offscreen renderer (``mujoco.Renderer``) without a display.

MuJoCo picks its OpenGL backend when it is first imported (``MUJOCO_GL``), so the frames are
rendered in a child process (``python -m sim2real.learn.strip STATES.npz OUT.png``) under
``MUJOCO_GL=egl`` first, then ``osmesa``; when neither works there is no strip, and
:func:`render_strip` says why (no picture is faked). EGL needs ``libEGL.so.1`` with a Mesa
driver (Debian: ``libegl1 libegl-mesa0 libgl1-mesa-dri``), OSMesa ``libosmesa6``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

BACKENDS = ("egl", "osmesa")


def render_strip(
    path: str | Path,
    model: str | Path,
    qpos: np.ndarray,
    *,
    height: int = 240,
    width: int = 320,
    timeout_s: float = 120.0,
) -> str:
    """Write ``path`` (PNG): the frames of ``qpos`` (K, nq), states of ``model`` (an MJCF
    path), side by side, the camera following the model's first body with a free joint.
    Returns the backend that rendered it, or raises RuntimeError saying why none did."""
    path = Path(path)
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        states = Path(tmp) / "states.npz"
        np.savez(states, qpos=np.asarray(qpos, dtype=float), model=str(model),
                 size=np.array([height, width]))  # fmt: skip
        for backend in BACKENDS:
            env = {**os.environ, "MUJOCO_GL": backend}
            env.pop("PYOPENGL_PLATFORM", None)  # mujoco sets it to match MUJOCO_GL
            cmd = [sys.executable, "-m", "sim2real.learn.strip", str(states), str(path)]
            try:
                proc = subprocess.run(
                    cmd, env=env, capture_output=True, text=True, timeout=timeout_s
                )
            except subprocess.TimeoutExpired:
                failures.append(f"{backend}: no frame after {timeout_s:g} s")
                continue
            if proc.returncode == 0 and path.is_file():
                return backend
            last = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
            failures.append(f"{backend}: {last}")
    raise RuntimeError("no headless OpenGL for MuJoCo's renderer (" + "; ".join(failures) + ")")


def _render(states: Path, out: Path) -> None:
    """The child process: render and write the strip (atomically)."""
    import mujoco
    from PIL import Image

    from sim2real.core.atomic import atomic_path

    data = np.load(states)
    m = mujoco.MjModel.from_xml_path(str(data["model"]))
    d = mujoco.MjData(m)
    height, width = (int(x) for x in data["size"])
    free = [j for j in range(m.njnt) if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE]
    body = int(m.jnt_bodyid[free[0]]) if free else 0
    camera = mujoco.MjvCamera()
    camera.distance, camera.azimuth, camera.elevation = 1.3, 135.0, -20.0
    frames = []
    with mujoco.Renderer(m, height, width) as renderer:
        for q in data["qpos"]:
            d.qpos[:] = q
            mujoco.mj_forward(m, d)
            camera.lookat[:] = d.xpos[body]
            renderer.update_scene(d, camera=camera)
            frames.append(renderer.render())
    with atomic_path(out) as tmp:
        Image.fromarray(np.concatenate(frames, axis=1)).save(tmp, format="PNG")


if __name__ == "__main__":
    _render(Path(sys.argv[1]), Path(sys.argv[2]))
