"""The detector's network: a small fully-convolutional encoder-decoder (CenterNet-like, Zhou et
al. 2019, "Objects as Points") on a 320x240 RGB or RGB-D image, output at stride 8 (the
sub-cell offset head keeps the centre precise; stride 8 quarters the cost of the heads, which
training on two CPU cores needs).

Heads, per output cell (B, C, H/8, W/8):
- ``heat`` (1): logit of "the part's bounding-box centre projects into this cell";
- ``offset`` (2): the centre's sub-cell position, in cells;
- ``log_zf`` (1): log(z * F_REF / f), the centre's depth from the part's apparent size (z in
  metres, f the focal length in px at the network's input size): what an RGB image tells;
- ``dz`` (1, RGB-D only): centre depth minus the valid input depth averaged around the cell
  (metres): what the measured depth tells;
- ``keypoints`` (2K): pixel offsets from the cell's centre to the K canonical keypoints,
  divided by ``KEYPOINT_SCALE_PX``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from sim2real.core.strict import StrictModel

STRIDE = 8
F_REF_PX = 300.0
"""Reference focal length for ``log_zf`` [px]: only a scale, any value works."""
KEYPOINT_SCALE_PX = 32.0
DEPTH_MEAN_M, DEPTH_STD_M = 0.8, 0.5
"""Normalisation of the depth channel [m]: only a scale for the first layer."""
Z_REF_WINDOW_CELLS = 3


class NetworkConfig(StrictModel):
    """Shape of the detector's network."""

    input: Literal["rgb", "rgbd"] = Field(
        "rgbd", description="rgb: colour only; rgbd: colour, depth [m] and its valid mask"
    )
    width: int = Field(16, ge=4, le=128, description="channels of the first layer")
    n_keypoints: int = Field(8, ge=4, le=32, description="keypoints per part (bbox corners)")
    height_px: int = Field(240, ge=32, description="input image height [px], multiple of 16")
    width_px: int = Field(320, ge=32, description="input image width [px], multiple of 16")


def build_network(cfg: NetworkConfig):
    """A ``torch.nn.Module`` for ``cfg`` (see the module doc for its outputs)."""
    import torch
    from torch import nn

    def block(cin: int, cout: int, stride: int = 1, dilation: int = 1) -> nn.Sequential:
        return nn.Sequential(
            nn.Conv2d(cin, cout, 3, stride, padding=dilation, dilation=dilation, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
        )

    class DetectorNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            c = cfg.width
            cin = 3 + (2 if cfg.input == "rgbd" else 0)
            self.enc1 = block(cin, c, 2)  # /2
            self.enc2 = block(c, 2 * c, 2)  # /4
            self.enc3 = nn.Sequential(block(2 * c, 4 * c, 2), block(4 * c, 4 * c))  # /8
            self.enc4 = nn.Sequential(
                block(4 * c, 6 * c, 2), block(6 * c, 6 * c), block(6 * c, 6 * c, dilation=2)
            )  # /16
            self.dec3 = block(6 * c + 4 * c, 3 * c)  # /8
            n_out = 1 + 2 + 1 + 1 + 2 * cfg.n_keypoints
            self.head = nn.Sequential(block(3 * c, 2 * c), nn.Conv2d(2 * c, n_out, 1))
            with torch.no_grad():  # start with a low centre probability (CenterNet's -2.19)
                self.head[-1].bias[0] = -2.19

        def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
            from torch.nn import functional

            e1 = self.enc1(x)
            e2 = self.enc2(e1)
            e3 = self.enc3(e2)
            e4 = self.enc4(e3)
            up = functional.interpolate(
                e4, size=e3.shape[-2:], mode="bilinear", align_corners=False
            )
            y = self.head(self.dec3(torch.cat([up, e3], 1)))
            return {
                "heat": y[:, 0:1],
                "offset": y[:, 1:3],
                "log_zf": y[:, 3:4],
                "dz": y[:, 4:5],
                "keypoints": y[:, 5:],
            }

    # channels-last (NHWC) memory: oneDNN's convolutions run 20-25 % faster on this CPU, for
    # training steps and single frames alike (benchmarks/RESULTS.md, "channels-last")
    return DetectorNet().to(memory_format=torch.channels_last)


def network_input(rgb, depth_m, cfg: NetworkConfig):
    """(B, H, W, 3) uint8 RGB and (B, H, W) float32 depth [m] (0 = none; ignored for rgb) as
    torch tensors -> (B, 3 or 5, H, W) float32 network input, channels-last in memory."""
    import torch

    # built as (B, H, W, C), the channels-last layout, and seen as (B, C, H, W) at the end: the
    # same numbers, with no strided pass over the image (a training batch of 16 in about half
    # the time)
    x = (rgb.float() / 255.0 - 0.5) / 0.25
    if cfg.input == "rgbd":
        valid = (depth_m > 0).float()[..., None]
        d = (depth_m[..., None] - DEPTH_MEAN_M) / DEPTH_STD_M * valid
        x = torch.cat([x, d, valid], -1)
    return x.permute(0, 3, 1, 2)


def reference_depth(depth_m):
    """(B, H, W) depth [m] -> (B, 1, H/8, W/8): mean valid depth in a window of
    ``Z_REF_WINDOW_CELLS`` cells around each output cell, and the valid fraction there."""
    from torch.nn import functional

    d = depth_m[:, None]
    valid = (d > 0).float()
    k = STRIDE * Z_REF_WINDOW_CELLS
    pad = (k - STRIDE) // 2
    s = functional.avg_pool2d(functional.pad(d * valid, (pad, pad, pad, pad)), k, STRIDE)
    n = functional.avg_pool2d(functional.pad(valid, (pad, pad, pad, pad)), k, STRIDE)
    return s / n.clamp_min(1e-6), n
