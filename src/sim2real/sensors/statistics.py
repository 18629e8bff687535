"""Statistics of a depth frame against its reference geometry, computed the same way on real
frames and on frames simulated from the same reference (so calibration can match them and the
gap can compare them without one side's estimator bias favouring it).

- **local noise**: depth minus the median of its 9×9 window (valid pixels of the window),
  at interior pixels of the reference regions (whose 9×9 window lies in their own region):
  the random per-pixel noise without the slow warps of the surface, and whatever the dropout
  pattern (the median is over the window's returns, at pixels whose window mostly returns).
  Its spread is the standard deviation of the residuals between their 1st and 99th
  percentiles (robust to the odd flying pixel, and exact enough under quantization, where a
  MAD collapses to 0).
- **reference residual**: depth minus the reference depth, at region pixels more than 3 px from
  an edge: noise, warps and bias together.
- **valid rate**: returns among region pixels, overall, per region (plane or part), per
  incidence-angle bin and per distance to the nearest depth edge.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from sim2real.sensors.reference_frame import NOISE_WINDOW_PX, ReferenceFrame

DEPTH_BIN_M = 0.10
INCIDENCE_BIN_EDGES_DEG = np.array([0, 15, 30, 45, 60, 75, 90], dtype=np.float64)
EDGE_DISTANCES_PX = np.arange(0, 16)
"""Edge-dropout profile: invalid rate at distance 0, 1, ..., 15 px from the nearest edge."""
MIN_VALID_IN_WINDOW = (NOISE_WINDOW_PX * NOISE_WINDOW_PX) // 2 + 1
NOISE_SAMPLES_PER_FRAME = 40_000
REFERENCE_EDGE_CLEARANCE_PX = 3.0
TRIM_PERCENT = 1.0


def trimmed_std(values: np.ndarray) -> float:
    """Std of the values between their 1st and 99th percentiles (nan for < 2 values)."""
    if values.size < 2:
        return float("nan")
    lo, hi = np.percentile(values, [TRIM_PERCENT, 100 - TRIM_PERCENT])
    kept = values[(values >= lo) & (values <= hi)]
    return float(kept.std()) if kept.size >= 2 else float("nan")


def local_median_residuals(
    depth_m: np.ndarray, v: np.ndarray, u: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """depth - median of the valid depths of the 9×9 window, at pixels (v, u) that return and
    whose window has a majority of returns. -> (residuals float32 metres, mask over the input
    pixels telling which got one)."""
    h = NOISE_WINDOW_PX // 2
    offsets = np.arange(-h, h + 1)
    height, width = depth_m.shape
    vv = np.clip(v[:, None, None] + offsets[None, :, None], 0, height - 1)
    uu = np.clip(u[:, None, None] + offsets[None, None, :], 0, width - 1)
    windows = depth_m[vv, uu].reshape(len(v), -1)
    centre = depth_m[v, u]
    count = (windows > 0).sum(axis=1)
    ok = (centre > 0) & (count >= MIN_VALID_IN_WINDOW)
    windows = windows[ok]
    count = count[ok]
    windows[windows <= 0] = np.inf  # no return sorts last
    windows.sort(axis=1)
    rows = np.arange(len(windows))
    median = 0.5 * (windows[rows, (count - 1) // 2] + windows[rows, count // 2])
    return (centre[ok] - median).astype(np.float32), ok


@dataclass
class PixelTables:
    """Per-pixel samples of one or more frames, with the region (global index) each came from,
    so statistics can be pooled, binned and bootstrapped by region."""

    noise_z_m: np.ndarray
    noise_theta_rad: np.ndarray
    noise_residual_m: np.ndarray
    noise_region: np.ndarray
    ref_z_m: np.ndarray
    ref_residual_m: np.ndarray
    ref_region: np.ndarray
    valid: np.ndarray
    """bool per region pixel: did it return."""
    theta_rad: np.ndarray
    edge_distance_px: np.ndarray
    excluded: np.ndarray
    """bool per region pixel: predicted to lie in the emitter's shadow (left out of dropout
    statistics, which the shadow explains)."""
    region: np.ndarray

    @staticmethod
    def concatenate(tables: list[PixelTables]) -> PixelTables:
        return PixelTables(
            **{
                k: np.concatenate([getattr(t, k) for t in tables])
                for k in PixelTables.__annotations__
            }
        )


def noise_sample_pixels(
    ref: ReferenceFrame, seed: int = 0, limit: int = NOISE_SAMPLES_PER_FRAME
) -> tuple[np.ndarray, np.ndarray]:
    """A fixed random subset of the interior pixels (at most ``limit``), the same for the real
    frame and every simulation of it."""
    v, u = np.nonzero(ref.interior)
    if v.size > limit:
        pick = np.sort(np.random.default_rng(seed).choice(v.size, limit, replace=False))
        v, u = v[pick], u[pick]
    return v, u


def pixel_tables(
    ref: ReferenceFrame,
    depth_m: np.ndarray,
    region_offset: int = 0,
    excluded: np.ndarray | None = None,
    samples: tuple[np.ndarray, np.ndarray] | None = None,
) -> PixelTables:
    """The per-pixel samples of ``depth_m`` (the real frame or a simulation of it) against
    ``ref``. ``region_offset`` makes region indices unique across frames; ``excluded`` marks
    pixels left out of the dropout statistics (predicted shadow)."""
    v, u = samples if samples is not None else noise_sample_pixels(ref)
    residual, ok = local_median_residuals(depth_m, v, u)
    v, u = v[ok], u[ok]
    in_region = ref.in_region
    far_from_edge = in_region & (ref.edge_distance_px > REFERENCE_EDGE_CLEARANCE_PX) & (depth_m > 0)
    excluded = np.zeros(depth_m.shape, bool) if excluded is None else excluded
    return PixelTables(
        noise_z_m=ref.ref_depth_m[v, u],
        noise_theta_rad=ref.incidence_rad[v, u],
        noise_residual_m=residual,
        noise_region=ref.region_id[v, u] + region_offset,
        ref_z_m=ref.ref_depth_m[far_from_edge],
        ref_residual_m=(depth_m - ref.ref_depth_m)[far_from_edge],
        ref_region=ref.region_id[far_from_edge] + region_offset,
        valid=depth_m[in_region] > 0,
        theta_rad=ref.incidence_rad[in_region],
        edge_distance_px=ref.edge_distance_px[in_region],
        excluded=excluded[in_region],
        region=ref.region_id[in_region] + region_offset,
    )


def noise_pixels_by_bin(ref: ReferenceFrame, depth_m: np.ndarray) -> dict[int, int]:
    """{10 cm depth bin: interior pixels of ``ref`` that the local-noise statistic can use in
    ``depth_m``} (a return whose 9×9 window mostly returns): the bin's size, whatever share of
    it a sample draws."""
    valid = depth_m > 0
    count = ndimage.uniform_filter(valid.astype(np.float32), NOISE_WINDOW_PX, mode="constant")
    usable = ref.interior & valid & (count * NOISE_WINDOW_PX**2 >= MIN_VALID_IN_WINDOW - 0.5)
    bins, n = np.unique(depth_bins(ref.ref_depth_m[usable]), return_counts=True)
    return {int(b): int(k) for b, k in zip(bins, n, strict=True)}


def region_weights(region: np.ndarray, weights_by_region: np.ndarray | None) -> np.ndarray | None:
    """Per-row weights from per-region weights (bootstrap multiplicities); None = all 1."""
    return None if weights_by_region is None else weights_by_region[region]


def depth_bins(z_m: np.ndarray) -> np.ndarray:
    """Index of the 10 cm depth bin of each depth: bin k covers [k/10, (k+1)/10) m."""
    return np.floor(z_m / DEPTH_BIN_M).astype(np.int64)


def incidence_bins(theta_rad: np.ndarray) -> np.ndarray:
    return np.clip(
        np.digitize(np.degrees(theta_rad), INCIDENCE_BIN_EDGES_DEG) - 1,
        0,
        len(INCIDENCE_BIN_EDGES_DEG) - 2,
    )


def _repeat(values: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    return values if weights is None else np.repeat(values, weights)


def noise_spread_by_bin(
    t: PixelTables,
    weights_by_region: np.ndarray | None = None,
    min_pixels: int = 200,
    by_incidence: bool = False,
) -> dict[tuple[int, ...], tuple[float, int]]:
    """{(depth bin[, incidence bin]): (spread of the local residual [m], pixels)} for bins with
    at least ``min_pixels``."""
    w = region_weights(t.noise_region, weights_by_region)
    keys = [depth_bins(t.noise_z_m)]
    if by_incidence:
        keys.append(incidence_bins(t.noise_theta_rad))
    key = np.stack(keys, axis=1)
    out = {}
    for k in np.unique(key, axis=0):
        sel = np.all(key == k, axis=1)
        values = _repeat(t.noise_residual_m[sel], None if w is None else w[sel])
        if values.size >= min_pixels:
            out[tuple(int(x) for x in k)] = (trimmed_std(values), int(values.size))
    return out


def rate(valid: np.ndarray, weights: np.ndarray | None) -> tuple[float, int]:
    n = int(valid.size if weights is None else weights.sum())
    if n == 0:
        return float("nan"), 0
    k = int(valid.sum() if weights is None else weights[valid].sum())
    return k / n, n


def valid_rates(
    t: PixelTables, weights_by_region: np.ndarray | None = None, min_pixels: int = 200
) -> dict:
    """Valid rate overall, per incidence bin and per edge distance (pixels predicted in the
    emitter's shadow left out), each as (rate, pixels)."""
    w = region_weights(t.region, weights_by_region)
    keep = ~t.excluded
    out: dict = {"overall": rate(t.valid[keep], None if w is None else w[keep])}
    ib = incidence_bins(t.theta_rad)
    out["incidence"] = {}
    far = keep & (t.edge_distance_px > EDGE_DISTANCES_PX[-1])
    for b in range(len(INCIDENCE_BIN_EDGES_DEG) - 1):
        sel = far & (ib == b)
        r = rate(t.valid[sel], None if w is None else w[sel])
        if r[1] >= min_pixels:
            out["incidence"][b] = r
    out["edge"] = {}
    low_incidence = keep & (np.degrees(t.theta_rad) < 60)
    dist = np.round(t.edge_distance_px).astype(np.int64)
    for d in EDGE_DISTANCES_PX:
        sel = low_incidence & (dist == d)
        r = rate(t.valid[sel], None if w is None else w[sel])
        if r[1] >= min_pixels // 4:
            out["edge"][int(d)] = r
    return out


def valid_rate_by_region(t: PixelTables, min_pixels: int = 1) -> dict[int, tuple[float, int]]:
    """{region: (share of its pixels that return, pixels)}, every pixel counted (the emitter's
    shadow included), for regions with at least ``min_pixels``."""
    regions, n = np.unique(t.region, return_counts=True)
    returned = np.bincount(t.region, weights=t.valid, minlength=int(regions.max(initial=0)) + 1)
    return {
        int(r): (float(returned[r] / k), int(k))
        for r, k in zip(regions, n, strict=True)
        if k >= min_pixels
    }


def reference_residuals_by_bin(t: PixelTables) -> dict[int, np.ndarray]:
    """{depth bin: residuals depth - reference [m]} at region pixels away from edges."""
    bins = depth_bins(t.ref_z_m)
    return {int(b): t.ref_residual_m[bins == b] for b in np.unique(bins)}
