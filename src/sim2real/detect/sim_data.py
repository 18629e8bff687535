"""Frames held in memory for training: colour, depth and labels, from the randomized renderer
(``render_rgbd.SampleRenderer``) or from labelled real frames, and batches of them with the
network's targets."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from sim2real.detect.targets import Label, PartGeometry, sample_targets, stack_targets


@dataclass
class FrameSet:
    """N frames of one size."""

    rgb: np.ndarray
    """(N, H, W, 3) uint8."""
    depth_m: np.ndarray
    """(N, H, W) float16 metres (0 = none): half the memory, 0.5 mm steps at 1 m."""
    labels: list[Label]

    def __len__(self) -> int:
        return len(self.labels)

    def batch(
        self, idx, geometry: PartGeometry, rng=None, depth_dropout=0.0, crop_px=None, zoom=None,
        colour_dropout=0.0,
    ):  # fmt: skip
        """(rgb (B, h, w, 3) uint8, depth (B, h, w) float32, targets) as torch tensors;
        ``depth_dropout``: share of frames whose depth is blanked (drawn with ``rng``), so an
        RGB-D network also learns to find the part without depth; ``colour_dropout``: share of
        frames whose colour is flat grey, so it also learns the part's shape in the depth
        alone, whatever its print or paint; ``crop_px`` (w, h): a crop
        of each frame (the network is fully convolutional: crops train it at a fraction of
        the cost), placed on the part's centre with chance ``CROP_ON_PART`` (else anywhere),
        the intrinsics shifted with it; ``zoom`` (low, high): scale factors of the crops (see
        ``_crops``)."""
        import torch

        idx = np.asarray(idx)
        rgb = self.rgb[idx]
        depth = self.depth_m[idx]  # float16: converted after cropping (5 ms a batch before)
        labels = [self.labels[i] for i in idx]
        H, W = rgb.shape[1:3]
        if crop_px is not None and rng is not None and (crop_px[0] < W or crop_px[1] < H):
            size = (min(crop_px[0], W), min(crop_px[1], H))
            rgb, depth, labels = _crops(rgb, depth, labels, geometry, size, rng, zoom)
        else:
            depth = depth.astype(np.float32)
        if depth_dropout > 0 and rng is not None:
            depth[rng.random(len(idx)) < depth_dropout] = 0.0
        if colour_dropout > 0 and rng is not None:
            rgb = rgb.copy()  # a crop may be a view of the stored frames
            rgb[rng.random(len(idx)) < colour_dropout] = 128
        tgt = stack_targets([sample_targets(lab, geometry) for lab in labels])
        return torch.from_numpy(np.ascontiguousarray(rgb)), torch.from_numpy(depth), tgt


CROP_ON_PART = 0.8


def _crops(rgb, depth, labels, geometry, crop_px, rng, zoom=None):
    """Crops of ``crop_px`` (w, h); ``zoom`` (low, high): each crop first scaled by a factor
    drawn log-uniformly in that range (a longer or shorter focal length: the part looks larger
    or smaller at the same depth), the intrinsics scaled with it."""
    from PIL import Image

    from sim2real.detect.keypoints import project
    from sim2real.detect.network import STRIDE

    cw, ch = crop_px
    H, W = rgb.shape[1:3]
    out_rgb = np.empty((len(labels), ch, cw, 3), np.uint8)
    out_depth = np.empty((len(labels), ch, cw), np.float32)
    out_labels = []
    for n, lab in enumerate(labels):
        z = 1.0
        if zoom is not None:
            z = float(np.exp(rng.uniform(np.log(zoom[0]), np.log(zoom[1]))))
            z = max(z, cw / W, ch / H)
        sw, sh = min(W, round(cw / z)), min(H, round(ch / z))  # the window in the frame
        T = lab.T_cam_part
        c = T[:3, :3] @ geometry.centre_part_m + T[:3, 3]
        if c[2] > 0 and lab.visible_px > 0 and rng.random() < CROP_ON_PART:
            u, v = project(c[None], lab.K)[0]
            m = STRIDE / z
            x0, y0 = rng.uniform(u - sw + m, u - m), rng.uniform(v - sh + m, v - m)
        else:
            x0, y0 = rng.uniform(0, W - sw), rng.uniform(0, H - sh)
        x0, y0 = int(np.clip(x0, 0, W - sw)), int(np.clip(y0, 0, H - sh))
        if (sw, sh) == (cw, ch):
            out_rgb[n] = rgb[n, y0 : y0 + ch, x0 : x0 + cw]
            out_depth[n] = depth[n, y0 : y0 + ch, x0 : x0 + cw]
        else:
            win = Image.fromarray(np.ascontiguousarray(rgb[n, y0 : y0 + sh, x0 : x0 + sw]))
            out_rgb[n] = np.asarray(win.resize((cw, ch), Image.BILINEAR))
            d = Image.fromarray(depth[n, y0 : y0 + sh, x0 : x0 + sw].astype(np.float32))
            out_depth[n] = np.asarray(d.resize((cw, ch), Image.NEAREST))
        K = lab.K.copy()  # pixel u of the window -> (u - x0 + 0.5) * sx - 0.5 (as PIL resizes)
        sx, sy = cw / sw, ch / sh
        K[0, 0] *= sx
        K[1, 1] *= sy
        K[0, 2] = (K[0, 2] - x0 + 0.5) * sx - 0.5
        K[1, 2] = (K[1, 2] - y0 + 0.5) * sy - 0.5
        # the visible pixels are not known per crop: the part counts as seen when its centre
        # is inside (a partly cropped part still has its centre there to find)
        out_labels.append(Label(ch, cw, T, K, lab.visible_px))
    return out_rgb, out_depth, out_labels


def frame_record(
    renderer, index: int, part_absent: bool = False
) -> tuple[np.ndarray, np.ndarray, Label]:
    """(rgb, float16 depth, label) of frame ``index`` of a ``SampleRenderer`` (``part_absent``:
    without the part, its label's ``visible_px`` 0)."""
    s = renderer.sample(int(index), part_absent)
    h, w = s.rgb.shape[:2]
    label = Label(h, w, np.asarray(s.T_cam_part), np.asarray(s.K), int(s.mask.sum()))
    return s.rgb, s.depth_m.astype(np.float16), label


def render_frames(
    renderer, indices, progress=None, key=None, processes: int = 1, part_absent: bool = False
) -> FrameSet:
    """Render the frames ``indices`` of a ``SampleRenderer`` into memory; ``progress(i, n)``
    as they come. ``processes`` > 1 with ``key`` (the renderer's, built by
    ``frame_workers.worker_renderer``): in that many worker processes (the same frames).
    ``part_absent``: the frames without the part (``SampleRenderer.sample``)."""
    indices = [int(i) for i in indices]
    record = partial(frame_record, part_absent=part_absent)
    if processes > 1 and key is not None and len(indices) > 1:
        from sim2real.detect.frame_workers import render_in_processes

        done: dict = {}
        render_in_processes(key, indices, min(processes, len(indices)), record, done,
                            progress)  # fmt: skip
        records = [done[i] for i in indices]
    else:
        records = []
        for i in indices:
            records.append(record(renderer, i))
            if progress is not None:
                progress(len(records), len(indices))
    return FrameSet(np.stack([r[0] for r in records]), np.stack([r[1] for r in records]),
                    [r[2] for r in records])  # fmt: skip


def concat(a: FrameSet, b: FrameSet) -> FrameSet:
    return FrameSet(
        np.concatenate([a.rgb, b.rgb]), np.concatenate([a.depth_m, b.depth_m]), a.labels + b.labels
    )
