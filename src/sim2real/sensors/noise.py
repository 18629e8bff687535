"""Depth-sensor noise: one pure, vectorised function per term of a NoiseProfile.

Per-pixel terms take the depths of the pixels that return, as a flat (N,) float32 array in
metres (every entry > 0), and give back the same shape with 0 where the pixel no longer
returns. Image terms take (H, W) arrays. Every random draw comes from the ``rng`` passed in
(a seeded ``np.random.Generator``) and is made only where it can matter, so a term that is
off, or a dropout whose probability is 0 everywhere, costs nothing.

:func:`apply_noise` chains the terms in a fixed, physically motivated order:

1. axial noise (along the ray, in depth), then disparity noise and disparity quantization
   (stereo matching errors and the sub-pixel step, in disparity space);
2. distortion (the device's fixed multiplicative depth error);
3. flying pixels (mixing of the near and far surface at depth edges);
4. dropouts: incidence angle, edge band, missing blobs;
5. range limits (the firmware drops returns outside the working range);
6. output quantization (the integer depth unit of the sensor's images).

Lateral noise is the renderer's job (it jitters the rays); it is not applied here.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.interpolate import RectBivariateSpline

from sim2real.sensors.frame import RenderedFrame
from sim2real.sensors.profile import (
    AxialNoise,
    DepthDistortion,
    DisparityNoise,
    EdgeDropout,
    FlyingPixels,
    IncidenceDropout,
    MissingBlobs,
    NoiseProfile,
    OutputQuantization,
    RangeLimits,
)

F32 = np.float32
MAX_INCIDENCE_RAD = F32(math.radians(89.0))
"""The axial term's incidence angle is clamped here: theta^2 / (pi/2 - theta)^2 diverges."""


# ----------------------------------------------------------------------------- per-pixel terms
def axial_sigma_m(z_m: np.ndarray, incidence_rad: np.ndarray, cfg: AxialNoise) -> np.ndarray:
    """sigma(z, theta) = a + b (z - c)^2 + d / sqrt(z) * theta^2 / (pi/2 - theta)^2
    (Nguyen, Izadi & Lovell 2012), theta clamped to 89 deg.

    z_m: float metres (> 0), incidence_rad: same shape, radians -> float32 metres, same shape.
    """
    z = np.asarray(z_m, dtype=F32)
    sigma = z - F32(cfg.c_m)
    sigma *= sigma
    sigma *= F32(cfg.b_per_m)
    sigma += F32(cfg.a_m)
    if cfg.d_m_sqrt_m > 0:
        theta = np.minimum(np.asarray(incidence_rad, dtype=F32), MAX_INCIDENCE_RAD)
        ratio = theta / (F32(math.pi / 2) - theta)
        sigma += F32(cfg.d_m_sqrt_m) * ratio * ratio / np.sqrt(z)
    return sigma


def disparity_sigma_m(
    z_m: np.ndarray | float, fx_px: float, baseline_m: float, sigma_px: float
) -> np.ndarray:
    """First-order depth sigma of a disparity sigma: z^2 sigma_px / (f |B|) (Intel's D400 RMS
    error formula). z_m: float metres -> float64 metres, same shape."""
    z = np.asarray(z_m, dtype=np.float64)
    return z * z * sigma_px / (fx_px * abs(baseline_m))


def apply_axial_noise(
    z_m: np.ndarray, incidence_rad: np.ndarray, cfg: AxialNoise, rng: np.random.Generator
) -> np.ndarray:
    """z + N(0, sigma(z, theta)^2) along the ray (see :func:`axial_sigma_m`).

    z_m: (N,) float32 metres > 0; incidence_rad: (N,) float32 radians -> (N,) float32 metres,
    0 where the noise would make the depth <= 0 (no return).
    """
    noise = rng.standard_normal(z_m.shape, dtype=F32)
    noise *= axial_sigma_m(z_m, incidence_rad, cfg)
    noise += z_m
    np.maximum(noise, F32(0), out=noise)
    return noise


def apply_disparity_noise(
    z_m: np.ndarray,
    fx_px: float,
    baseline_m: float,
    cfg: DisparityNoise,
    rng: np.random.Generator,
) -> np.ndarray:
    """Stereo / structured-light error in disparity space: d = f |B| / z [px];
    d += N(0, sigma_px^2); d = step_px * round(d / step_px); z = f |B| / d.

    Depth sigma is about z^2 sigma_px / (f |B|) (:func:`disparity_sigma_m`); with quantization
    the depths lie on the levels f |B| / (k step_px), k = 1, 2, ...
    z_m: (N,) float32 metres, 0 = no return -> (N,) float32 metres, 0 where d <= 0.
    """
    if cfg.sigma_px == 0 and cfg.step_px == 0:
        return z_m
    fb = F32(fx_px * abs(baseline_m))
    with np.errstate(divide="ignore"):
        d = fb / z_m  # no return (z = 0) -> d = inf -> z = 0 again below
    if cfg.sigma_px > 0:
        noise = rng.standard_normal(d.shape, dtype=F32)
        noise *= F32(cfg.sigma_px)
        d += noise
    if cfg.step_px > 0:
        d *= F32(1.0 / cfg.step_px)
        np.rint(d, out=d)
        d *= F32(cfg.step_px)
    d[d <= 0] = np.inf  # matched at zero or negative disparity: no return
    np.divide(fb, d, out=d)
    return d


@functools.lru_cache(maxsize=16)
def _distortion_field(
    height: int, width: int, relative_std: float, cell_px: float, seed: int
) -> np.ndarray:
    ny = math.ceil((height - 1) / cell_px) + 4
    nx = math.ceil((width - 1) / cell_px) + 4
    values = np.random.default_rng(seed).standard_normal((ny, nx))
    # grid nodes at -1.5 cells .. beyond the far edge, so the cubic spline covers the image
    gy = (np.arange(ny) - 1.5) * cell_px
    gx = (np.arange(nx) - 1.5) * cell_px
    spline = RectBivariateSpline(gy, gx, values, kx=3, ky=3)
    field = spline(np.arange(height, dtype=np.float64), np.arange(width, dtype=np.float64))
    field -= field.mean()
    std = field.std()
    field = field * (relative_std / std) if std > 0 else np.zeros_like(field)
    out = field.astype(F32)
    out.flags.writeable = False
    return out


def distortion_field(shape: tuple[int, int], cfg: DepthDistortion) -> np.ndarray:
    """The device's relative depth error e(v, u): zero mean and std exactly cfg.relative_std
    over the image, correlation length cfg.cell_px (bicubic spline through Gaussian values on
    a grid of cell_px spacing), from cfg.field_seed only: the same for every frame of one
    device. Cached; read-only. shape: (H, W) -> (H, W) float32, unitless."""
    height, width = shape
    return _distortion_field(
        int(height), int(width), float(cfg.relative_std), float(cfg.cell_px), int(cfg.field_seed)
    )


def apply_distortion(z_m: np.ndarray, field: np.ndarray) -> np.ndarray:
    """z (1 + e): z_m and field (the distortion field at the same pixels), same shape, float32
    -> float32 metres; 0 where 1 + e <= 0."""
    factor = field + F32(1)
    np.maximum(factor, F32(0), out=factor)
    return z_m * factor


def incidence_dropout_index(
    incidence_rad: np.ndarray, cfg: IncidenceDropout, rng: np.random.Generator
) -> np.ndarray:
    """Which pixels drop at grazing incidence: p = clip((theta - start) / (end - start), 0, 1).

    incidence_rad: (N,) float32 radians -> (K,) int64 indices into it of the dropped pixels.
    Uniform numbers are drawn only for theta > start (where p > 0).
    """
    start, end = math.radians(cfg.start_deg), math.radians(cfg.end_deg)
    candidates = np.flatnonzero(incidence_rad > F32(start))
    p = (incidence_rad[candidates] - F32(start)) * F32(1.0 / (end - start))
    return candidates[rng.random(candidates.size, dtype=F32) < p]


def apply_range(z_m: np.ndarray, cfg: RangeLimits) -> np.ndarray:
    """Returns outside [min_m, max_m] dropped: float32 metres, any shape, in place."""
    z_m[(z_m < F32(cfg.min_m)) | (z_m > F32(cfg.max_m))] = 0
    return z_m


def apply_quantization(z_m: np.ndarray, cfg: OutputQuantization) -> np.ndarray:
    """z rounded to a multiple of unit_m: float32 metres, any shape, in place (0 stays 0)."""
    z_m *= F32(1.0 / cfg.unit_m)
    np.rint(z_m, out=z_m)
    z_m *= F32(cfg.unit_m)
    return z_m


# ------------------------------------------------------------------------------- image terms
def edge_band(edge: np.ndarray, width_px: int) -> np.ndarray:
    """Pixels within width_px (square neighbourhood, Chebyshev distance) of an edge pixel: the
    binary dilation of the (H, W) bool edge map by a (2w+1)^2 box -> (H, W) bool.

    Same result as ``scipy.ndimage.binary_dilation(edge, np.ones((2w+1, 2w+1)))``, done as
    two 1-D passes of shifted ORs: about 0.2 ms at 640x480 for w = 2, against 1.4 ms for
    ``ndimage.maximum_filter`` and 5.6 ms for ``ndimage.binary_dilation``.
    """
    edge = np.asarray(edge, dtype=bool)
    if width_px == 0:
        return edge
    rows = edge.copy()
    for s in range(1, min(int(width_px), edge.shape[0] - 1) + 1):
        rows[s:] |= edge[:-s]
        rows[:-s] |= edge[s:]
    band = rows.copy()
    for s in range(1, min(int(width_px), edge.shape[1] - 1) + 1):
        band[:, s:] |= rows[:, :-s]
        band[:, :-s] |= rows[:, s:]
    return band


def edge_dropout_index(
    band_valid: np.ndarray, cfg: EdgeDropout, rng: np.random.Generator
) -> np.ndarray:
    """Which band pixels drop: each independently with cfg.probability.

    band_valid: (K,) int64 indices of the valid pixels in the edge band -> (M,) subset.
    """
    if cfg.probability == 0:
        return band_valid[:0]
    if cfg.probability == 1:
        return band_valid
    return band_valid[rng.random(band_valid.size, dtype=F32) < F32(cfg.probability)]


def flying_pixel_depths(
    depth_m: np.ndarray, flat_index: np.ndarray, width_px: int, rng: np.random.Generator
) -> np.ndarray:
    """Mixed depths: for each chosen pixel, lo + u (hi - lo), u ~ U(0, 1), with lo / hi the
    smallest / largest valid depth in its (2w+1)^2 window (clipped at the image border).

    depth_m: (H, W) float32 metres, 0 = no return; flat_index: (K,) int64 indices of valid
    pixels into depth_m.ravel() -> (K,) float32 metres.
    """
    height, width = depth_m.shape
    offsets = np.arange(-width_px, width_px + 1)
    rows = np.clip(flat_index // width, 0, height - 1)
    cols = flat_index - rows * width
    nr = np.clip(rows[:, None] + offsets[None, :], 0, height - 1)  # (K, 2w+1)
    nc = np.clip(cols[:, None] + offsets[None, :], 0, width - 1)
    window = depth_m[nr[:, :, None], nc[:, None, :]].reshape(flat_index.size, offsets.size**2)
    hi = window.max(axis=1)
    lo = np.where(window > 0, window, np.inf).min(axis=1)
    return lo + rng.random(flat_index.size, dtype=F32) * (hi - lo)


def apply_flying_pixels(
    depth_m: np.ndarray, edge: np.ndarray, cfg: FlyingPixels, rng: np.random.Generator
) -> np.ndarray:
    """Valid pixels within cfg.width_px of an edge take, with cfg.probability, a depth mixed
    between the near and far side (:func:`flying_pixel_depths`).

    depth_m: (H, W) float32 metres, 0 = no return; edge: (H, W) bool -> new (H, W) float32.
    """
    flat = depth_m.ravel()
    band = np.flatnonzero(edge_band(edge, cfg.width_px).ravel())
    band = band[flat[band] > 0]
    chosen = band[rng.random(band.size, dtype=F32) < F32(cfg.probability)]
    out = depth_m.copy()
    out.ravel()[chosen] = flying_pixel_depths(depth_m, chosen, cfg.width_px, rng)
    return out


def sample_missing_blobs(
    shape: tuple[int, int], cfg: MissingBlobs, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Blobs of no return for one frame: count ~ Poisson(rate_per_mpx * H W / 1e6), centres
    uniform over the image, radii uniform in [0.5, 1.5] x radius_px.

    shape: (H, W) -> centres (K, 2) float32 pixel (u, v), radii (K,) float32 px.
    """
    height, width = shape
    count = rng.poisson(cfg.rate_per_mpx * height * width / 1e6)
    if count == 0:
        return np.zeros((0, 2), F32), np.zeros(0, F32)
    centres = rng.random((count, 2), dtype=F32) * F32([width, height]) - F32(0.5)
    radii = (rng.random(count, dtype=F32) + F32(0.5)) * F32(cfg.radius_px)
    return centres, radii


def blob_pixels(shape: tuple[int, int], centres: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """Flat indices (into an (H, W) image) of the pixels inside the discs
    (u - cu)^2 + (v - cv)^2 <= r^2; duplicates where discs overlap. -> (M,) int64.
    A loop over blobs (a few per frame), each vectorised over its bounding box."""
    height, width = shape
    parts = [np.zeros(0, np.int64)]
    for (cu, cv), r in zip(centres.tolist(), radii.tolist(), strict=True):
        u0, u1 = max(math.ceil(cu - r), 0), min(math.floor(cu + r), width - 1)
        v0, v1 = max(math.ceil(cv - r), 0), min(math.floor(cv + r), height - 1)
        if u0 > u1 or v0 > v1:
            continue
        u = np.arange(u0, u1 + 1)
        v = np.arange(v0, v1 + 1)
        inside = (u[None, :] - cu) ** 2 + (v[:, None] - cv) ** 2 <= r * r
        vv, uu = np.nonzero(inside)
        parts.append((vv + v0) * width + (uu + u0))
    return np.concatenate(parts)


def missing_blobs_mask(
    shape: tuple[int, int], cfg: MissingBlobs, rng: np.random.Generator
) -> np.ndarray:
    """(H, W) bool, True inside this frame's blobs of no return (see sample_missing_blobs)."""
    mask = np.zeros(shape, bool)
    mask.ravel()[blob_pixels(shape, *sample_missing_blobs(shape, cfg, rng))] = True
    return mask


# ---------------------------------------------------------------------------------- pipeline
def _positions(valid_index: np.ndarray, flat_index: np.ndarray) -> np.ndarray:
    """Positions in valid_index (sorted flat indices of the valid pixels) of those entries of
    flat_index that are valid pixels."""
    if valid_index.size == 0:
        return flat_index[:0]
    pos = np.searchsorted(valid_index, flat_index)
    pos[pos == valid_index.size] = 0
    return pos[valid_index[pos] == flat_index]


def apply_noise(
    frame: RenderedFrame, profile: NoiseProfile, rng: np.random.Generator
) -> np.ndarray:
    """The sensor's depth image for an ideal render: every active term of ``profile``, in the
    order of this module's docstring, computed on the valid pixels only.

    frame: ideal render, (H, W) arrays; rng: seeded generator (same seed -> same image)
    -> (H, W) float32 metres, 0 = no return.
    """
    depth = np.asarray(frame.depth_m, dtype=F32)
    shape = depth.shape
    flat = depth.ravel()
    mask = flat > 0
    z = flat[mask]  # a copy: the terms below work on it in place
    theta = None
    if profile.axial is not None or profile.incidence_dropout is not None:
        theta = np.asarray(frame.incidence_rad, dtype=F32).ravel()[mask]
    valid_index: np.ndarray | None = None  # flat indices of z's pixels, made when needed
    bands: dict[int, np.ndarray] = {}

    def band_positions(width_px: int) -> np.ndarray:
        """Positions in z of the valid pixels within width_px of an edge."""
        nonlocal valid_index
        if valid_index is None:
            valid_index = np.flatnonzero(mask)
        if width_px not in bands:
            band = np.flatnonzero(edge_band(frame.edge, width_px).ravel())
            bands[width_px] = _positions(valid_index, band)
        return bands[width_px]

    # 1. noise along the ray, then in disparity space (noise, then sub-pixel steps)
    if profile.axial is not None:
        z = apply_axial_noise(z, theta, profile.axial, rng)
    if profile.disparity is not None:
        z = apply_disparity_noise(z, frame.camera.fx, profile.baseline_m, profile.disparity, rng)
    # 2. the device's systematic error field
    if profile.distortion is not None:
        z = apply_distortion(z, distortion_field(shape, profile.distortion).ravel()[mask])
    # 3. flying pixels, mixed from the noisy image before any dropout
    fly = profile.flying_pixels
    if fly is not None and fly.probability > 0:
        pos = band_positions(fly.width_px)
        pos = pos[z[pos] > 0]
        pos = pos[rng.random(pos.size, dtype=F32) < F32(fly.probability)]
        if pos.size:
            noisy = np.zeros(flat.size, F32)
            noisy[mask] = z
            z[pos] = flying_pixel_depths(noisy.reshape(shape), valid_index[pos], fly.width_px, rng)
    # 4. dropouts
    if profile.incidence_dropout is not None:
        z[incidence_dropout_index(theta, profile.incidence_dropout, rng)] = 0
    if profile.edge_dropout is not None:
        pos = band_positions(profile.edge_dropout.width_px)
        z[edge_dropout_index(pos, profile.edge_dropout, rng)] = 0
    if profile.missing_blobs is not None:
        centres, radii = sample_missing_blobs(shape, profile.missing_blobs, rng)
        if radii.size:
            if valid_index is None:
                valid_index = np.flatnonzero(mask)
            z[_positions(valid_index, blob_pixels(shape, centres, radii))] = 0
    # 5. working range, 6. output depth unit
    if profile.range is not None:
        apply_range(z, profile.range)
    if profile.quantization is not None:
        apply_quantization(z, profile.quantization)

    out = np.zeros(flat.size, F32)
    out[mask] = z
    return out.reshape(shape)
