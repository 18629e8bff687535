"""Writing a depth sequence in the BOP-like layout ``load_sequence`` reads: ``depth/`` uint16
PNGs, ``camera.json`` and ``scene_camera.json``, and ``scene_gt.json`` with the part's poses."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from sim2real.core.atomic import write_bytes_atomic, write_text_atomic
from sim2real.core.camera import CameraIntrinsics
from sim2real.core.errors import InputError
from sim2real.core.png_encode import encode_png
from sim2real.core.pose import check_rigid


def write_bop_sequence(
    out_dir: str | Path,
    camera: CameraIntrinsics,
    frames: Iterable[np.ndarray],
    poses: list[np.ndarray] | None,
    *,
    depth_scale_mm: float = 0.1,
    obj_id: int = 1,
) -> list[Path]:
    """Write a BOP-like folder: ``depth/000000.png`` ... (uint16, value * depth_scale_mm =
    millimetres), ``scene_camera.json``, ``camera.json`` and, with ``poses`` ((4, 4)
    ``T_cam_part`` in metres, one per frame, kept for frames where the part is out of view),
    ``scene_gt.json``. ``frames``: (H, W) float metres, 0 = no return. Every file is written
    to a temporary name and renamed. Returns the depth paths."""
    out_dir = Path(out_dir)
    if not np.isfinite(depth_scale_mm) or not 0.01 <= depth_scale_mm <= 100:
        raise InputError(
            None, "depth_scale_mm", f"expected 0.01..100 mm per unit, got {depth_scale_mm}"
        )
    max_m = 65535 * depth_scale_mm / 1000.0
    if poses is not None and hasattr(frames, "__len__") and len(poses) != len(frames):
        raise InputError(
            out_dir, "poses", f"{len(poses)} poses for {len(frames)} frames: give one each"
        )
    written: list[Path] = []
    scene_camera: dict[str, dict] = {}
    for i, depth in enumerate(frames):
        path = out_dir / "depth" / f"{i:06d}.png"
        depth = np.asarray(depth, dtype=np.float64)
        if depth.shape != (camera.height, camera.width):
            raise InputError(
                path,
                "size",
                f"frame {i} is {depth.shape} px, the camera's is ({camera.height}, {camera.width})",
            )
        if not np.all(np.isfinite(depth)) or depth.min() < 0:
            raise InputError(path, "depth_m", f"frame {i}: non-finite or negative depth")
        if depth.max() > max_m:
            raise InputError(
                path,
                "depth_m",
                f"frame {i}: depth {depth.max():.3f} m beyond {max_m:.3f} m, the most uint16 "
                f"holds at {depth_scale_mm} mm per unit",
            )
        units = np.rint(depth * 1000.0 / depth_scale_mm).astype(np.uint16)
        write_bytes_atomic(path, encode_png(units, level=1))  # 3x Pillow's speed at level 1
        written.append(path)
        scene_camera[str(i)] = {"cam_K": camera.K.ravel().tolist(), "depth_scale": depth_scale_mm}
    if not written:
        raise InputError(out_dir, "frames", "no frames to write")
    cam = {k: getattr(camera, k) for k in ("cx", "cy", "fx", "fy", "width", "height")}
    cam["depth_scale"] = depth_scale_mm
    write_text_atomic(out_dir / "camera.json", json.dumps(cam, indent=2) + "\n")
    write_text_atomic(out_dir / "scene_camera.json", _dump_by_frame(scene_camera))
    if poses is not None:
        if len(poses) != len(written):
            raise InputError(
                out_dir, "poses", f"{len(poses)} poses for {len(written)} frames: give one each"
            )
        scene_gt = {}
        for i, T in enumerate(poses):
            T = check_rigid(T, None, f"poses[{i}]")
            scene_gt[str(i)] = [
                {
                    "cam_R_m2c": T[:3, :3].ravel().tolist(),
                    "cam_t_m2c": (T[:3, 3] * 1000.0).tolist(),
                    "obj_id": obj_id,
                }
            ]
        write_text_atomic(out_dir / "scene_gt.json", _dump_by_frame(scene_gt))
    return written


def write_visible(path: str | Path, visible: dict[int, float]) -> None:
    """``visible.json``: frame id -> visible fraction of the part (0..1), atomically."""
    write_text_atomic(path, _dump_by_frame({str(k): float(v) for k, v in visible.items()}))


def _dump_by_frame(data: dict) -> str:
    """One frame per line, as BOP's files are laid out (readable, diff-friendly)."""
    lines = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in data.items()]
    return "{\n" + ",\n".join(lines) + "\n}\n"
