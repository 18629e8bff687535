"""A randomized dataset's files in BOP layout, one frame at a time, each file written to a
temporary name and renamed (a frame's files exist whole or not at all):

    rgb/NNNNNN.png              8-bit RGB
    depth/NNNNNN.png            uint16, millimetres = value * depth_scale (0 = no return)
    mask/NNNNNN_000000.png      the part's silhouette (occluders ignored), 0 / 255
    mask_visib/NNNNNN_000000.png  its visible pixels, 0 / 255
    scene_gt.json               {"N": [{"cam_R_m2c": 9 row-major, "cam_t_m2c": mm, "obj_id"}]}
    scene_camera.json           {"N": {"cam_K": 9 row-major, "depth_scale": mm per unit}}
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from sim2real.core.atomic import write_bytes_atomic, write_text_atomic
from sim2real.core.camera import CameraIntrinsics
from sim2real.core.png_encode import encode_png

DEPTH_SCALE_MM = 0.1
"""Millimetres per depth unit (BOP's depth_scale): 0.1 mm steps, 6.55 m at most."""
PNG_COMPRESS_LEVEL = 1  # zlib level: fast, the files as small as Pillow's at its level 1
OBJ_ID = 1


def frame_files(out: Path, index: int) -> dict[str, Path]:
    """The four image files of frame ``index``; ``mask_visib`` is written last."""
    name = f"{index:06d}"
    return {
        "rgb": out / "rgb" / f"{name}.png",
        "depth": out / "depth" / f"{name}.png",
        "mask": out / "mask" / f"{name}_000000.png",
        "mask_visib": out / "mask_visib" / f"{name}_000000.png",
    }


def frame_done(out: Path, index: int) -> bool:
    """Whether every file of frame ``index`` is there (each was renamed into place whole)."""
    return all(p.is_file() for p in frame_files(out, index).values())


def _png(array: np.ndarray) -> bytes:
    return encode_png(array, PNG_COMPRESS_LEVEL)


def depth_units(depth_m: np.ndarray, depth_scale_mm: float = DEPTH_SCALE_MM) -> np.ndarray:
    """(H, W) float metres -> uint16 units of ``depth_scale_mm``; depths beyond the format's
    range (65535 units) become 0 (no return)."""
    units = np.rint(np.asarray(depth_m, np.float64) * (1000.0 / depth_scale_mm))
    units[(units > 65535) | ~np.isfinite(units)] = 0
    return units.astype(np.uint16)


def write_frame(out: Path, index: int, sample, depth_scale_mm: float = DEPTH_SCALE_MM) -> None:
    """Frame ``index`` of ``sample`` (a render_rgbd.Sample) as its four PNGs."""
    files = frame_files(out, index)
    write_bytes_atomic(files["rgb"], _png(sample.rgb))
    write_bytes_atomic(files["depth"], _png(depth_units(sample.depth_m, depth_scale_mm)))
    write_bytes_atomic(files["mask"], _png(sample.mask_full.astype(np.uint8) * 255))
    write_bytes_atomic(files["mask_visib"], _png(sample.mask.astype(np.uint8) * 255))


def gt_entry(T_cam_part: np.ndarray) -> list[dict]:
    """scene_gt.json's entry of one frame: the part's pose (rotation row-major, mm)."""
    T = np.asarray(T_cam_part, np.float64)
    return [
        {
            "cam_R_m2c": [float(x) for x in T[:3, :3].ravel()],
            "cam_t_m2c": [float(x) * 1000.0 for x in T[:3, 3]],
            "obj_id": OBJ_ID,
        }
    ]


def camera_entry(camera: CameraIntrinsics, depth_scale_mm: float = DEPTH_SCALE_MM) -> dict:
    """scene_camera.json's entry of one frame."""
    return {"cam_K": [float(x) for x in camera.K.ravel()], "depth_scale": depth_scale_mm}


def write_labels(out: Path, labels: dict[int, tuple[np.ndarray, CameraIntrinsics]]) -> None:
    """scene_gt.json and scene_camera.json of ``labels`` (index -> (T_cam_part, camera)),
    each rewritten whole and atomically, frames in order."""
    order = sorted(labels)
    gt = {str(i): gt_entry(labels[i][0]) for i in order}
    cams = {str(i): camera_entry(labels[i][1]) for i in order}
    write_text_atomic(out / "scene_gt.json", _one_frame_a_line(gt))
    write_text_atomic(out / "scene_camera.json", _one_frame_a_line(cams))


def _one_frame_a_line(data: dict) -> str:
    lines = [f"  {json.dumps(key)}: {json.dumps(value)}" for key, value in data.items()]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def read_labels(out: Path) -> dict[int, tuple[np.ndarray, np.ndarray, float]]:
    """index -> (T_cam_part (4, 4) metres, K (3, 3), depth_scale mm) of a written dataset."""
    gt = json.loads((out / "scene_gt.json").read_text())
    cams = json.loads((out / "scene_camera.json").read_text())
    labels = {}
    for key, entries in gt.items():
        T = np.eye(4)
        T[:3, :3] = np.reshape(entries[0]["cam_R_m2c"], (3, 3))
        T[:3, 3] = np.asarray(entries[0]["cam_t_m2c"]) / 1000.0
        cam = cams[key]
        labels[int(key)] = (T, np.reshape(cam["cam_K"], (3, 3)), float(cam["depth_scale"]))
    return labels
