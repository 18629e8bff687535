"""From a frame to the network's input size and back: resizing with the intrinsics scaled (one
scale for both axes, the rest padded: a 16:9 frame is letterboxed, not stretched), one
forward pass, and reading the detection at the heatmap's peak (centre, depth, keypoints,
then the pose by PnP)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim2real.core.errors import InputError
from sim2real.detect.detection import Detection
from sim2real.detect.network import (
    F_REF_PX,
    KEYPOINT_SCALE_PX,
    STRIDE,
    NetworkConfig,
    network_input,
    reference_depth,
)
from sim2real.detect.pnp import solve_pnp


@dataclass
class NetFrame:
    """A frame at the network's input size."""

    rgb: np.ndarray
    """(h, w, 3) uint8."""
    depth_m: np.ndarray
    """(h, w) float32 metres, 0 = none (all zero when the frame had no depth)."""
    K: np.ndarray
    """(3, 3) intrinsics at this size."""
    scale: tuple[float, int, int]
    """(s, ox, oy): network pixels per given pixel, and the padding left and top [px]."""


def scale_intrinsics(K: np.ndarray, s: float, ox: float = 0.0, oy: float = 0.0) -> np.ndarray:
    """(3, 3) intrinsics of an image resized by ``s`` and shifted by (ox, oy) px, pixel
    centres at integers (pixel u maps to (u + 0.5) s - 0.5 + ox)."""
    K2 = np.asarray(K, dtype=np.float64).copy()
    K2[0, 0] *= s
    K2[1, 1] *= s
    K2[0, 2] = (K2[0, 2] + 0.5) * s - 0.5 + ox
    K2[1, 2] = (K2[1, 2] + 0.5) * s - 0.5 + oy
    return K2


def prepare_frame(rgb, depth_m, K, cfg: NetworkConfig) -> NetFrame:
    """Validate and resize one frame to the network's ``width_px`` x ``height_px``: RGB
    bilinear, depth nearest (no mixing of valid and missing pixels)."""
    from PIL import Image

    rgb = np.asarray(rgb)
    if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8:
        raise InputError(None, "rgb", f"expected (H, W, 3) uint8, got {rgb.shape} {rgb.dtype}")
    H, W = rgb.shape[:2]
    if depth_m is not None and np.asarray(depth_m).shape != (H, W):
        raise InputError(None, "depth", f"depth is {np.shape(depth_m)}, colour is {(H, W)}")
    w, h = cfg.width_px, cfg.height_px
    s = min(w / W, h / H)
    sw, sh = min(w, round(W * s)), min(h, round(H * s))
    ox, oy = (w - sw) // 2, (h - sh) // 2
    out_rgb = np.full((h, w, 3), 128, np.uint8)
    out_depth = np.zeros((h, w), np.float32)
    if (sw, sh) != (W, H):
        rgb = np.asarray(Image.fromarray(rgb).resize((sw, sh), Image.BILINEAR))
    out_rgb[oy : oy + sh, ox : ox + sw] = rgb
    if depth_m is not None:
        depth = np.nan_to_num(np.asarray(depth_m, np.float32), nan=0.0, posinf=0.0)
        depth[depth < 0] = 0.0
        if (sw, sh) != (W, H):
            depth = np.asarray(Image.fromarray(depth, mode="F").resize((sw, sh), Image.NEAREST))
        out_depth[oy : oy + sh, ox : ox + sw] = depth
    return NetFrame(out_rgb, out_depth, scale_intrinsics(K, s, ox, oy), (s, ox, oy))


def run_network(detector, frame: NetFrame) -> dict[str, np.ndarray]:
    """One forward pass: the heads as (C, h/8, w/8) arrays, plus ``z_ref`` / ``z_valid``."""
    import torch

    cfg = detector.info.network
    rgb = torch.from_numpy(np.ascontiguousarray(frame.rgb))[None]
    depth = torch.from_numpy(np.ascontiguousarray(frame.depth_m))[None]
    with torch.no_grad():
        out = detector.net(network_input(rgb, depth, cfg))
        z_ref, z_valid = reference_depth(depth)
    res = {k: v[0].numpy() for k, v in out.items()}
    res["z_ref"], res["z_valid"] = z_ref[0].numpy(), z_valid[0].numpy()
    return res


def _to_given(uv: np.ndarray, scale: tuple[float, int, int]) -> np.ndarray:
    s, ox, oy = scale
    return np.c_[(uv[:, 0] - ox + 0.5) / s - 0.5, (uv[:, 1] - oy + 0.5) / s - 0.5]


def decode_outputs(detector, out: dict[str, np.ndarray], frame: NetFrame):
    """The detection at the heatmap's peak (``detector.Detection``)."""
    settings, cfg = detector.info.settings, detector.info.network
    heat = 1.0 / (1.0 + np.exp(-out["heat"][0]))
    i, j = np.unravel_index(int(np.argmax(heat)), heat.shape)
    confidence = float(heat[i, j])
    if confidence < settings.min_confidence:
        return Detection(False, confidence, None, None)
    K = frame.K
    uv = STRIDE * np.array([j + out["offset"][0, i, j], i + out["offset"][1, i, j]])
    kp = STRIDE * np.array([j, i]) + KEYPOINT_SCALE_PX * out["keypoints"][:, i, j].reshape(-1, 2)
    f = 0.5 * (K[0, 0] + K[1, 1])
    z, depth_from = float(np.exp(out["log_zf"][0, i, j]) * f / F_REF_PX), "size"
    if cfg.input == "rgbd" and out["z_valid"][0, i, j] >= settings.min_depth_valid:
        z, depth_from = float(out["z_ref"][0, i, j] + out["dz"][0, i, j]), "depth"
    position = np.array([(uv[0] - K[0, 2]) / K[0, 0] * z, (uv[1] - K[1, 2]) / K[1, 1] * z, z])
    T = _pose_from_keypoints(detector, kp, K, position)
    return Detection(
        True,
        confidence,
        position,
        _to_given(uv[None], frame.scale)[0],
        T,
        _to_given(kp, frame.scale),
        depth_from,
    )


def _pose_from_keypoints(detector, kp_px, K, position_m) -> np.ndarray | None:
    """PnP on the predicted keypoints; the rotation kept, the translation moved so that the
    bounding-box centre lands on ``position_m`` (the centre and depth heads are the surer
    cue). None when PnP fails or fits the keypoints worse than ``max_pnp_rms_rel``."""
    geo = detector.geometry
    res = solve_pnp(geo.keypoints_part_m, kp_px, K)
    size_px = float(np.ptp(kp_px, axis=0).mean())
    if res is None or res.rms_px > detector.info.settings.max_pnp_rms_rel * max(size_px, 1.0):
        return None
    T = res.T_cam_part.copy()
    T[:3, 3] = position_m - T[:3, :3] @ geo.centre_part_m
    return T
