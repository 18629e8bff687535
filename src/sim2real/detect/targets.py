"""Training targets of the detector's network from labelled samples, and its loss.

A label (the image size, ``T_cam_part`` (4, 4), ``K`` (3, 3) and the count of the part's
visible pixels) gives, on the output grid of stride 8: a Gaussian centre heatmap (CenterNet), and near the centre cell the centre's
sub-cell offset, its depth and the keypoints' pixel offsets. A part with fewer than
``MIN_VISIBLE_PX`` visible pixels, or whose centre projects outside the image, is "absent":
an all-zero heatmap and no regression.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim2real.detect.keypoints import keypoint_targets, project
from sim2real.detect.network import F_REF_PX, KEYPOINT_SCALE_PX, STRIDE

MIN_VISIBLE_PX = 30
REGRESSION_RADIUS_CELLS = 1
"""Cells within this Chebyshev distance of the centre cell learn the regressions (the peak
read at run time may fall one cell off)."""
LOSS_WEIGHTS = {"heat": 1.0, "offset": 1.0, "log_zf": 5.0, "dz": 10.0, "keypoints": 1.0}
"""Per-head weights: an error of 1 cm at 0.5 m in either depth head costs about 0.1, like 3 px
on a keypoint (units of ``KEYPOINT_SCALE_PX``)."""


@dataclass
class PartGeometry:
    """What the targets need of the part: part-frame centre and keypoints, symmetries."""

    centre_part_m: np.ndarray
    """(3,) metres."""
    keypoints_part_m: np.ndarray
    """(K, 3) metres."""
    symmetries: np.ndarray
    """(S, 4, 4): identity first."""


@dataclass
class Label:
    """What a frame's targets are made from."""

    height_px: int
    width_px: int
    T_cam_part: np.ndarray
    """(4, 4) float64, metres."""
    K: np.ndarray
    """(3, 3) float64."""
    visible_px: int
    """Pixels where the part is seen (not occluded)."""


def sample_targets(label: Label, geometry: PartGeometry) -> dict[str, np.ndarray]:
    """Targets on the (H/8, W/8) grid of one frame: ``heat`` (1, h, w), ``offset`` (2, h, w),
    ``log_zf`` (1, h, w), ``z`` (1, h, w) centre depth [m], ``keypoints`` (2K, h, w), ``reg``
    (1, h, w) regression weight (0 away from the centre), ``present`` (1,)."""
    H, W = label.height_px, label.width_px
    h, w = H // STRIDE, W // STRIDE
    n_kp = len(geometry.keypoints_part_m)
    out = {
        "heat": np.zeros((1, h, w), np.float32),
        "offset": np.zeros((2, h, w), np.float32),
        "log_zf": np.zeros((1, h, w), np.float32),
        "z": np.zeros((1, h, w), np.float32),
        "keypoints": np.zeros((2 * n_kp, h, w), np.float32),
        "reg": np.zeros((1, h, w), np.float32),
        "present": np.zeros(1, np.float32),
    }
    T = np.asarray(label.T_cam_part, dtype=np.float64)
    K = np.asarray(label.K, dtype=np.float64)
    c_cam = T[:3, :3] @ geometry.centre_part_m + T[:3, 3]
    if c_cam[2] <= 0 or label.visible_px < MIN_VISIBLE_PX:
        return out
    uv = project(c_cam[None], K)[0]
    p = uv / STRIDE
    ci, cj = int(np.floor(p[1])), int(np.floor(p[0]))
    if not (0 <= ci < h and 0 <= cj < w):
        return out
    kp_uv = keypoint_targets(T, K, geometry.keypoints_part_m, geometry.symmetries)
    size_px = float(np.ptp(kp_uv, axis=0).mean())
    sigma = max(0.8, 0.1 * size_px / STRIDE)
    jj, ii = np.meshgrid(np.arange(w), np.arange(h))
    out["heat"][0] = np.exp(-((jj - p[0] + 0.5) ** 2 + (ii - p[1] + 0.5) ** 2) / (2 * sigma**2))
    out["heat"][0, ci, cj] = 1.0
    out["present"][0] = 1.0
    f = 0.5 * (K[0, 0] + K[1, 1])
    r = REGRESSION_RADIUS_CELLS
    for i in range(max(0, ci - r), min(h, ci + r + 1)):
        for j in range(max(0, cj - r), min(w, cj + r + 1)):
            out["reg"][0, i, j] = 1.0 if (i, j) == (ci, cj) else 0.5
            out["offset"][:, i, j] = (p[0] - j, p[1] - i)
            out["log_zf"][0, i, j] = np.log(c_cam[2] * F_REF_PX / f)
            out["z"][0, i, j] = c_cam[2]
            out["keypoints"][:, i, j] = (
                (kp_uv - STRIDE * np.array([j, i])) / KEYPOINT_SCALE_PX
            ).ravel()
    return out


def stack_targets(targets: list[dict[str, np.ndarray]]):
    """A list of ``sample_targets`` -> dict of (B, ...) torch tensors."""
    import torch

    return {k: torch.from_numpy(np.stack([t[k] for t in targets])) for k in targets[0]}


def focal_loss(logits, target):
    """CenterNet's penalty-reduced focal loss (alpha 2, beta 4), per visible centre."""
    import torch
    from torch.nn import functional

    pred = torch.sigmoid(logits).clamp(1e-4, 1 - 1e-4)
    pos = target.eq(1).float()
    neg = 1.0 - pos
    pos_loss = -functional.logsigmoid(logits) * (1 - pred) ** 2 * pos
    neg_loss = -functional.logsigmoid(-logits) * pred**2 * (1 - target) ** 4 * neg
    n = pos.sum().clamp_min(1.0)
    return (pos_loss.sum() + neg_loss.sum()) / n


def detector_loss(out, tgt, z_ref=None, z_ref_valid=None) -> dict:
    """Weighted loss terms and their sum (``total``) of the network's outputs ``out`` against
    ``stack_targets`` ``tgt``; ``z_ref`` / ``z_ref_valid`` (B, 1, h, w) from
    ``network.reference_depth`` for the RGB-D depth head (None: no ``dz`` term)."""
    reg = tgt["reg"]
    n = reg.sum().clamp_min(1.0)

    def l1(pred, target, weight):
        return ((pred - target).abs() * weight).sum() / n

    terms = {
        "heat": focal_loss(out["heat"], tgt["heat"]),
        "offset": l1(out["offset"], tgt["offset"], reg),
        "log_zf": l1(out["log_zf"], tgt["log_zf"], reg),
        "keypoints": l1(out["keypoints"], tgt["keypoints"], reg) / (out["keypoints"].shape[1] / 2),
    }
    if z_ref is not None:
        w = reg * (z_ref_valid > 0.2).float()
        terms["dz"] = l1(out["dz"], tgt["z"] - z_ref, w)
    terms = {k: LOSS_WEIGHTS[k] * v for k, v in terms.items()}
    terms["total"] = sum(terms.values())
    return terms
