"""BOP-layout variants of the real ViSP sequence (rgbd-visp-rbt, read in place) built in a test's
tmp_path: its first frames, with the scene files and depth unit a test changes."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image


def visp_bop_scene(
    real_data: Path,
    folder: Path,
    n: int = 2,
    *,
    depth_factor: int = 1,
    camera_entry: Callable[[dict, int], dict] | None = None,
    gt_entries: Callable[[list, int], list] | None = None,
    color_dir: str | None = "rgb",
) -> Path:
    """``folder`` with the first ``n`` frames of rgbd-visp-rbt: depth/ (its millimetres times
    ``depth_factor``), colour in ``color_dir`` (None: none), scene_camera.json and
    scene_gt.json with each frame's entry passed through ``camera_entry`` / ``gt_entries``."""
    src = real_data / "rgbd-visp-rbt"
    cameras = json.loads((src / "scene_camera.json").read_text())
    gts = json.loads((src / "scene_gt.json").read_text())
    (folder / "depth").mkdir(parents=True)
    scene_camera, scene_gt = {}, {}
    for i in range(n):
        name = f"{i:06d}.png"
        raw = np.array(Image.open(src / "depth" / name)).astype(np.uint32) * depth_factor
        Image.fromarray(raw.clip(0, 65535).astype(np.uint16)).save(folder / "depth" / name)
        if color_dir is not None:
            (folder / color_dir).mkdir(exist_ok=True)
            shutil.copy(src / "rgb" / name, folder / color_dir / name)
        entry = dict(cameras[str(i)])
        scene_camera[str(i)] = camera_entry(entry, i) if camera_entry else entry
        entries = [dict(e) for e in gts[str(i)]]
        scene_gt[str(i)] = gt_entries(entries, i) if gt_entries else entries
    (folder / "scene_camera.json").write_text(json.dumps(scene_camera))
    (folder / "scene_gt.json").write_text(json.dumps(scene_gt))
    return folder


def real_depth_m(real_data: Path, i: int = 0) -> np.ndarray:
    """(H, W) float32 metres of the real sequence's frame ``i`` (its PNGs are millimetres)."""
    raw = np.array(Image.open(real_data / "rgbd-visp-rbt" / "depth" / f"{i:06d}.png"))
    return (raw.astype(np.float64) * 1e-3).astype(np.float32)
