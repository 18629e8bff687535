"""Frames held in memory for training: colour, depth and labels, from the randomized renderer
(``render_rgbd.SampleRenderer``) or from labelled real frames, and batches of them with the
network's targets."""

from __future__ import annotations

from dataclasses import dataclass

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

    def batch(self, idx: np.ndarray, geometry: PartGeometry, rng=None, depth_dropout=0.0):
        """(rgb (B, H, W, 3) uint8, depth (B, H, W) float32, targets) as torch tensors;
        ``depth_dropout``: share of frames whose depth is blanked (drawn with ``rng``), so an
        RGB-D network also learns to find the part without depth."""
        import torch

        idx = np.asarray(idx)
        depth = self.depth_m[idx].astype(np.float32)
        if depth_dropout > 0 and rng is not None:
            depth[rng.random(len(idx)) < depth_dropout] = 0.0
        tgt = stack_targets([sample_targets(self.labels[i], geometry) for i in idx])
        return torch.from_numpy(self.rgb[idx]), torch.from_numpy(depth), tgt


def render_frames(renderer, indices, progress=None) -> FrameSet:
    """Render the frames ``indices`` of a ``SampleRenderer`` into memory; ``progress(i, n)``
    is called after each."""
    indices = list(indices)
    rgb, depth, labels = [], [], []
    for n, index in enumerate(indices):
        s = renderer.sample(int(index))
        rgb.append(s.rgb)
        depth.append(s.depth_m.astype(np.float16))
        h, w = s.rgb.shape[:2]
        labels.append(Label(h, w, np.asarray(s.T_cam_part), np.asarray(s.K), int(s.mask.sum())))
        if progress is not None:
            progress(n + 1, len(indices))
    return FrameSet(np.stack(rgb), np.stack(depth), labels)


def concat(a: FrameSet, b: FrameSet) -> FrameSet:
    return FrameSet(
        np.concatenate([a.rgb, b.rgb]), np.concatenate([a.depth_m, b.depth_m]), a.labels + b.labels
    )
