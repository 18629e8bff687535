"""Colour images: read as (H, W, 3) uint8 RGB, whatever the file's own mode."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sim2real.core.errors import InputError

COLOR_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff")


def read_rgb(path: str | Path) -> np.ndarray:
    """(H, W, 3) uint8 RGB of an image file (grey or RGBA converted; 16-bit colour scaled to
    8 bits); InputError for a missing or unreadable file."""
    from PIL import Image, UnidentifiedImageError

    path = Path(path)
    if not path.is_file():
        raise InputError(path, None, "colour image not found")
    try:
        with Image.open(path) as im:
            if im.mode in ("I;16", "I;16B", "I"):
                raise InputError(
                    path, "mode", f"a single-channel {im.mode} image is no colour image"
                )
            rgb = np.asarray(im.convert("RGB"))
    except (OSError, UnidentifiedImageError) as exc:
        raise InputError(path, None, f"cannot read image ({exc})") from None
    return np.ascontiguousarray(rgb, dtype=np.uint8)
