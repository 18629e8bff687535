"""From a frame to the network's input size and back: resizing with the intrinsics scaled (one
scale for both axes, the rest padded: a 16:9 frame is letterboxed, not stretched), one
forward pass, and reading the detection at the heatmap's peaks (centre, depth, keypoints,
then the pose by PnP; with depth, the peak whose pose the depth confirms, verify.py)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from itertools import islice

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


def heat_peaks(heat: np.ndarray, min_score: float, count: int) -> list[tuple[int, int]]:
    """(row, col) of the ``count`` highest local maxima (3 x 3) of ``heat`` at ``min_score`` or
    above, highest first (ties in row-major order: the first is ``argmax``'s)."""
    from scipy.ndimage import maximum_filter

    top = (heat == maximum_filter(heat, size=3, mode="constant", cval=-np.inf)) & (
        heat >= min_score
    )
    rows, cols = np.nonzero(top)
    order = np.argsort(-heat[rows, cols], kind="stable")[:count]
    return [(int(rows[k]), int(cols[k])) for k in order]


def decode_outputs(detector, out: dict[str, np.ndarray], frame: NetFrame):
    """The detection (``detector.Detection``): the heatmap's highest peak, or, with depth and
    the part's surface points, the peak among the ``settings.candidates`` highest whose pose
    the depth confirms best (``verified_candidate``, which stops early once one is confirmed
    well enough). Found when the highest peak reaches
    ``min_confidence``; the other candidates need only ``candidate_confidence``: a network
    trained in simulation scores the real part low at times (0.26-0.39 beside 0.7 on another
    object, RESULTS.md), and the depth, not the score, tells them apart."""
    settings = detector.info.settings
    heat = heat_scores(out)
    checkable = can_check(detector, frame)
    peaks = candidate_peaks(heat, settings, checkable)
    if not peaks:
        return Detection(False, float(heat.max()), None, None)
    top_agreement = None
    if checkable:  # a checked pose is refined by ICP: its PnP needs no Levenberg-Marquardt
        candidates = (  # built as the checks reach them: most frames stop at the first batch
            _candidate(detector, out, frame, i, j, float(heat[i, j]), refine=False)
            for i, j in peaks
        )
        confirmed, checks = verified_candidate(detector, candidates, frame)
        if confirmed is not None:
            return confirmed
        top_agreement = None if checks[0] is None else checks[0].agreement
    (i, j) = peaks[0]
    top = _candidate(detector, out, frame, i, j, float(heat[i, j]))
    return top if top_agreement is None else replace(top, depth_agreement=top_agreement)


def heat_scores(out: dict[str, np.ndarray]) -> np.ndarray:
    """(h/8, w/8) the centre heatmap's scores in [0, 1] (the sigmoid of its logits)."""
    with np.errstate(over="ignore"):  # exp(-x) of a very low logit is inf: its score is 0
        return 1.0 / (1.0 + np.exp(-out["heat"][0]))


def candidate_peaks(heat: np.ndarray, settings, checkable: bool) -> list[tuple[int, int]]:
    """The heatmap cells to read, highest first: none when the highest peak is below
    ``min_confidence`` (not found); else that peak alone, or, when the candidates can be
    checked against depth, up to ``candidates`` peaks down to ``candidate_confidence``."""
    if not checkable:
        return heat_peaks(heat, settings.min_confidence, 1)
    floor = min(settings.candidate_confidence, settings.min_confidence)
    peaks = heat_peaks(heat, floor, settings.candidates)
    return peaks if peaks and heat[peaks[0]] >= settings.min_confidence else []


def can_check(detector, frame: NetFrame) -> bool:
    """Whether the candidates can be checked against depth: checking on, the detector's surface
    points stored, an RGB-D network and a frame with depth."""
    info = detector.info
    return (
        info.settings.verify
        and info.surface_part_m is not None
        and info.diameter_m is not None
        and info.network.input == "rgbd"
        and bool(np.any(frame.depth_m > 0))
    )


def _candidate(
    detector, out, frame: NetFrame, i: int, j: int, confidence: float, refine: bool = True
) -> Detection:
    """The detection read at heatmap cell (i, j); ``refine``: PnP with Levenberg-Marquardt."""
    settings, cfg, K = detector.info.settings, detector.info.network, frame.K
    uv = STRIDE * np.array([j + out["offset"][0, i, j], i + out["offset"][1, i, j]])
    kp = STRIDE * np.array([j, i]) + KEYPOINT_SCALE_PX * out["keypoints"][:, i, j].reshape(-1, 2)
    f = 0.5 * (K[0, 0] + K[1, 1])
    z, depth_from = float(np.exp(out["log_zf"][0, i, j]) * f / F_REF_PX), "size"
    if cfg.input == "rgbd" and out["z_valid"][0, i, j] >= settings.min_depth_valid:
        z, depth_from = float(out["z_ref"][0, i, j] + out["dz"][0, i, j]), "depth"
    position = np.array([(uv[0] - K[0, 2]) / K[0, 0] * z, (uv[1] - K[1, 2]) / K[1, 1] * z, z])
    T = _pose_from_keypoints(detector, kp, K, position, refine)
    return Detection(
        True,
        confidence,
        position,
        _to_given(uv[None], frame.scale)[0],
        T,
        _to_given(kp, frame.scale),
        depth_from,
    )


def verified_candidate(
    detector, candidates: Iterable[Detection], frame: NetFrame
) -> tuple[Detection | None, list]:
    """(the candidate whose refined pose the depth confirms at the most surface points, at least
    ``min_agreement`` of its camera-facing ones, moved to that pose, or None; the
    ``verify.DepthCheck`` of each candidate checked, None where it has no pose). Nothing is
    checked when ``can_check`` says no.

    The ``check_first`` highest candidates are checked first; when the most confirmed of them
    reaches ``accept_agreement`` it is kept and the rest are not checked (on the real ViSP
    frames the part is nearly always among the first peaks, and checking all eight cost most
    of a frame's time, RESULTS.md); otherwise the rest are checked together, as all were.

    A candidate whose keypoints gave no pose is checked from ``Detector.start_rotations`` and
    needs ``rotation_agreement`` besides ``min_agreement`` (none checked when that is null).
    With ``no_return_share`` set, the highest candidate over a hole in the depth is kept
    unchecked (``_over_a_hole``: a part that returns no depth)."""
    from sim2real.core.pose import poses_at
    from sim2real.detect.verify import check_poses

    info, settings = detector.info, detector.info.settings
    candidates = iter(candidates)
    if not can_check(detector, frame):
        return None, [None] * len(list(candidates))
    surface = detector.surface_part_m
    centre = detector.geometry.centre_part_m
    checked: list[Detection] = []
    checks: list = []
    bars: list[float] = []  # the agreement each checked candidate needs
    accept, rotations = settings.accept_agreement, settings.rotation_agreement
    rotation_bar = max(settings.min_agreement, rotations or 0.0)
    best = None  # the most confirmed candidate so far passing its bar (its index)
    accepted = False  # that candidate reached accept_agreement
    for batch in (list(islice(candidates, n)) for n in (settings.check_first, None)):
        if not batch:
            break
        starts = [
            c.T_cam_part if c.T_cam_part is not None or rotations is None
            else poses_at(c.position_m, centre, detector.start_rotations)
            for c in batch
        ]  # fmt: skip
        bars += [rotation_bar if isinstance(s, list) else settings.min_agreement for s in starts]
        checks += check_poses(surface, starts, centre, frame.depth_m, frame.K, info.diameter_m)
        checked += batch
        passed = [k for k, ch in enumerate(checks) if ch is not None and ch.agreement >= bars[k]]
        best = max(passed, key=lambda k: checks[k].confirmed, default=None)  # equals: the first
        accepted = best is not None and accept is not None and checks[best].agreement >= accept
        if accepted:
            break
    if not accepted and checked and _over_a_hole(detector, checked[0], frame):
        return replace(checked[0], depth_agreement=0.0), checks
    if best is None:
        return None, checks
    T = checks[best].T_cam_part
    position = T[:3, :3] @ centre + T[:3, 3]
    uv = frame.K @ position
    centre_px = _to_given((uv[:2] / uv[2])[None], frame.scale)[0]
    moved = replace(checked[best], position_m=position, centre_px=centre_px, T_cam_part=T,
                    depth_agreement=checks[best].agreement)  # fmt: skip
    return moved, checks


def _over_a_hole(detector, top: Detection, frame: NetFrame) -> bool:
    """Whether the highest peak (none of the checked candidates having reached
    ``accept_agreement``) is taken as a part that returns no depth: at its pose (its
    keypoints', else the first of ``start_rotations`` at its position) at least
    ``no_return_share`` of the part's camera-facing points fall where the depth has no return."""
    from sim2real.core.pose import poses_at
    from sim2real.detect.verify import unmeasured_share

    share = detector.info.settings.no_return_share
    if share is None or top.position_m is None:
        return False
    T = top.T_cam_part
    if T is None:
        first = detector.start_rotations[:1]
        T = poses_at(top.position_m, detector.geometry.centre_part_m, first)[0]
    return unmeasured_share(detector.surface_part_m, T, frame.depth_m, frame.K) >= share


def _pose_from_keypoints(detector, kp_px, K, position_m, refine=True) -> np.ndarray | None:
    """PnP on the predicted keypoints; the rotation kept, the translation moved so that the
    bounding-box centre lands on ``position_m`` (the centre and depth heads are the surer
    cue). None when PnP fails or fits the keypoints worse than ``max_pnp_rms_rel``."""
    geo = detector.geometry
    res = solve_pnp(geo.keypoints_part_m, kp_px, K, refine=refine)
    size_px = float(np.ptp(kp_px, axis=0).mean())
    if res is None or res.rms_px > detector.info.settings.max_pnp_rms_rel * max(size_px, 1.0):
        return None
    T = res.T_cam_part.copy()
    T[:3, 3] = position_m - T[:3, :3] @ geo.centre_part_m
    return T
