"""The colour camera's response to a linear-radiance image: exposure, white balance, clipping,
gamma, blur and sensor noise, then 8-bit quantization."""

from __future__ import annotations

import functools

import numpy as np

from sim2real.detect.scene_draw import ImageDraw


def camera_response(
    linear: np.ndarray, draw: ImageDraw, gamma: float, rng: np.random.Generator
) -> np.ndarray:
    """(H, W, 3) float linear radiance -> (H, W, 3) uint8:
    ``clip(linear * 2^ev * wb)^(1/gamma)``, blurred by N(0, sigma) px, plus N(0, noise_sigma)
    per channel (``standard_normal_16bit``), times 255, rounded. An identity draw and gamma 1
    give round(255 * clip(x))."""
    img = linear * np.asarray(draw.white_balance, np.float32) * np.float32(2.0**draw.exposure_ev)
    np.clip(img, 0, 1, out=img)
    if gamma != 1:
        np.power(img, np.float32(1 / gamma), out=img)
    if draw.blur_sigma_px > 0:
        from scipy.ndimage import gaussian_filter

        img = gaussian_filter(
            img, sigma=(draw.blur_sigma_px, draw.blur_sigma_px, 0), mode="nearest"
        )
    if draw.noise_sigma > 0:
        img += standard_normal_16bit(rng, img.shape) * np.float32(draw.noise_sigma)
    return np.clip(np.rint(img * 255), 0, 255).astype(np.uint8)


@functools.cache
def _normal_quantiles() -> np.ndarray:
    from scipy.special import ndtri

    return ndtri((np.arange(65536) + 0.5) / 65536).astype(np.float32)


def standard_normal_16bit(rng: np.random.Generator, shape) -> np.ndarray:
    """float32 N(0, 1) samples as the normal quantiles of 16-bit uniform integers: 3x faster
    than ``rng.standard_normal`` (3.7 ms for a 320x240x3 image here), tails cut at 4.3 sigma
    (an 8-bit image's noise does not see beyond)."""
    return np.take(_normal_quantiles(), rng.integers(0, 65536, shape, dtype=np.uint16))
