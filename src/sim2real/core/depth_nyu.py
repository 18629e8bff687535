"""NYU Depth v2's raw Kinect frames (``.pgm``), read by ``sim2real.core.depth_io.read_depth``:
16-bit PGM of raw disparity d, held little-endian despite PGM's big-endian rule (Open3D reads
them big-endian, then swaps the bytes back in ``RGBDImage::CreateFromNYUFormat``)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from sim2real.core.errors import InputError

# NYU Depth v2 toolbox (depth_rel2depth_abs.m), also Open3D's CreateFromNYUFormat
NYU_PARAM_1 = 351.3
NYU_PARAM_2 = 1092.5
NYU_INVALID_DISPARITY = 2047


def read_nyu_pgm(path: Path) -> np.ndarray:
    """(H, W) float32 metres: 351.3 / (1092.5 - d), 0 (no return) where not positive (d = 2047,
    the invalid code), rounded to millimetres as Open3D does."""
    buffer = path.read_bytes()
    m = re.match(
        rb"P5\s+(?:#[^\n]*\n\s*)*(\d+)\s+(?:#[^\n]*\n\s*)*(\d+)\s+(?:#[^\n]*\n\s*)*(\d+)\s", buffer
    )
    if m is None:
        raise InputError(path, "header", "not a binary PGM (P5) file")
    width, height, maxval = (int(g) for g in m.groups())
    if maxval < 256:
        raise InputError(
            path, "maxval", f"expected a 16-bit PGM of raw Kinect values, got maxval {maxval}"
        )
    n = width * height
    if len(buffer) - m.end() < 2 * n:
        raise InputError(path, "data", f"file too short for {width}x{height} 16-bit pixels")
    raw = np.frombuffer(buffer, dtype="<u2", count=n, offset=m.end()).reshape(height, width)
    if raw.max() > NYU_INVALID_DISPARITY:  # the Kinect's disparity has 11 bits
        raise InputError(
            path,
            "encoding",
            f"values up to {raw.max()}: not the Kinect's 11-bit raw disparity (NYU Depth v2, what "
            "a .pgm is read as); a PGM of depth in millimetres? pass --encoding png",
        )
    with np.errstate(divide="ignore"):
        depth = NYU_PARAM_1 / (NYU_PARAM_2 - raw.astype(np.float64))
    depth = np.where(depth > 0, np.floor(depth * 1000.0 + 0.5) / 1000.0, 0.0)
    return depth.astype(np.float32)
