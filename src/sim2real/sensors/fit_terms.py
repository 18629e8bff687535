"""Estimators of single noise-profile terms from real frames and their reference geometry.

Each returns what it found, with the pixels behind it, or None with the reason the data
cannot support it. ``calibrate.py`` chains them and refines the biased ones by simulation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import ndimage
from scipy.optimize import least_squares

from sim2real.sensors.reference_frame import ReferenceFrame
from sim2real.sensors.render import shadow_candidates

FIT_PIXEL_CAP = 1000
"""A noise bin weighs as sqrt(its pixels) up to 1000 pixels: the large bins (a wall facing
the camera) cannot outweigh the sparse ones, and every bin is to be right."""
MIN_SHADOW_PIXELS = 200
SHADOW_PROBE_BASELINE_M = 0.05
"""A typical stereo / structured-light baseline: if the shadows it would cast are not dark,
the frames show no emitter shadow."""
MIN_SHADOW_PRECISION = 0.5
"""A wider baseline is kept while most of the pixels it adds to the predicted shadow are dark."""


@dataclass
class Estimate:
    value: float | dict | None
    pixels: int
    reason: str = ""
    std: float | None = None
    supported: bool = True
    """False: too little data to say anything (keep the base profile's value); True with value
    None: the data says the term is absent."""


def predicted_shadow(ref: ReferenceFrame, baseline_m: float) -> np.ndarray:
    """(H, W) bool: where an emitter at ``baseline_m`` cannot see the surfaces the camera saw,
    predicted from the real frame itself (gaps filled with the farther side: shadow bands lie
    on the background), by the renderer's image-space visibility scan."""
    from sim2real.sensors.reference import fill_gaps_along_rows

    if baseline_m == 0:
        return np.zeros(ref.depth_m.shape, dtype=bool)
    filled = fill_gaps_along_rows(ref.depth_m)
    return shadow_candidates(filled, ref.camera.fx, baseline_m, margin_px=0.0)


def fit_baseline(refs: list[ReferenceFrame]) -> Estimate:
    """Signed emitter baseline from the bands of no return beside foreground edges.

    A wider baseline predicts wider shadows (the renderer's image-space visibility scan on the
    real frame, gaps filled with the farther side). Every pixel of a true shadow is dark, so
    the baseline is the widest one for which most of the pixels each widening adds are dark
    (beyond it they spill onto surfaces that return); 5 mm steps, then 1 mm, on each side,
    keeping the side that explains more dark pixels (edge dropouts darken both sides, the
    shadow one). Uncertainty: the 5 mm step."""
    from sim2real.sensors.reference import fill_gaps_along_rows

    filled = [
        (fill_gaps_along_rows(r.depth_m), r.depth_m == 0, r.camera.fx, _readable(r)) for r in refs
    ]

    def score(b: float) -> tuple[int, int]:
        tp = predicted = 0
        for depth, invalid, fx, readable in filled:
            s = shadow_candidates(depth, fx, b, margin_px=0.0) & readable
            tp += int((s & invalid).sum())
            predicted += int(s.sum())
        return tp, predicted

    def marginal(a: tuple[int, int], b: tuple[int, int]) -> float | None:
        """Share of dark pixels among those a wider baseline adds (None: too few added)."""
        added = b[1] - a[1]
        return (b[0] - a[0]) / added if added >= 20 else None

    def widest(sign: float) -> tuple[float, int, int, int]:
        """(baseline, dark pixels explained, pixels predicted, pixels predicted at the probe)."""
        last, last_score, probe = 0.0, (0, 0), score(sign * SHADOW_PROBE_BASELINE_M)[1]
        for b in np.arange(0.005, 0.2001, 0.005):
            sc = score(sign * b)
            m = marginal(last_score, sc)
            if m is not None and m < MIN_SHADOW_PRECISION:
                break
            last, last_score = float(b), sc
        if last == 0.0:
            return 0.0, 0, 0, probe
        best, best_score = last, last_score
        for b in np.arange(last + 0.001, last + 0.0049, 0.001):
            sc = score(sign * b)
            m = marginal(best_score, sc)  # what this 1 mm widening adds, not the sum since last
            if m is not None and m < MIN_SHADOW_PRECISION:
                break
            best, best_score = float(b), sc
        return sign * best, best_score[0], best_score[1], probe

    candidates = [widest(1.0), widest(-1.0)]
    best, tp, _, _ = max(candidates, key=lambda c: c[1])
    if tp < MIN_SHADOW_PIXELS:
        probed = min(c[3] for c in candidates)
        if probed >= MIN_SHADOW_PIXELS:  # edges enough to cast shadows, but none is dark
            return Estimate(None, probed, "the frames show no emitter shadow beside their edges")
        return Estimate(
            None, tp, "too few foreground edges to see an emitter shadow", supported=False
        )
    return Estimate(round(best, 4), tp, std=0.005)


def _readable(ref: ReferenceFrame) -> np.ndarray:
    """(H, W) bool: pixels a calibration may read (not withheld for a spatial hold-out)."""
    return np.ones(ref.depth_m.shape, bool) if ref.withheld is None else ~ref.withheld


def fit_quantization(
    refs: list[ReferenceFrame], baseline_m: float | None
) -> tuple[Estimate, Estimate]:
    """(output unit [m], disparity step [px]) from the depth levels present in the frames.

    The smallest spacing of neighbouring levels is the output unit. Where the spacing grows
    as k z^2 (structured light and stereo quantize disparity, d = f B / z), the step is
    k f |B| px; it needs the baseline."""
    gaps_by_z: list[tuple[float, float, int]] = []
    for ref in refs:
        z = ref.depth_m[ref.fit_valid].astype(np.float64)
        for k in np.unique(np.floor(z / 0.1)):
            zb = z[(z >= k * 0.1) & (z < (k + 1) * 0.1)]
            if zb.size < 2000:
                continue
            levels, counts = np.unique(np.round(zb, 6), return_counts=True)
            levels = levels[counts >= 3]
            if levels.size < 4:
                continue
            gaps_by_z.append(
                (float(np.median(levels)), float(np.median(np.diff(levels))), int(zb.size))
            )
    if not gaps_by_z:
        none = Estimate(
            None, 0, "too few returns per 10 cm depth bin to see the depth levels", supported=False
        )
        return none, none
    z_c, gap, n = (np.array(c) for c in zip(*gaps_by_z, strict=True))
    unit = float(np.min(gap))
    unit_est = Estimate(unit, int(n.sum()))
    coarse = gap > 1.5 * unit
    if coarse.sum() < 3:
        return unit_est, Estimate(
            None,
            int(n[coarse].sum()),
            "depth levels do not widen with depth: no disparity steps seen",
        )
    k = float(np.median(gap[coarse] / z_c[coarse] ** 2))
    k_std = float(np.std(gap[coarse] / z_c[coarse] ** 2) / math.sqrt(coarse.sum()))
    if baseline_m is None or baseline_m == 0:
        return unit_est, Estimate(
            None,
            int(n[coarse].sum()),
            f"disparity steps seen (k = {k:.3g}/m) but no baseline to scale them",
            supported=False,
        )
    fx = refs[0].camera.fx
    return unit_est, Estimate(
        k * fx * abs(baseline_m), int(n[coarse].sum()), std=k_std * fx * abs(baseline_m)
    )


def axial_sigma_formula(params: np.ndarray, z: np.ndarray, theta: np.ndarray) -> np.ndarray:
    a, b, c, d = params
    theta = np.minimum(theta, math.radians(89.0))
    return a + b * (z - c) ** 2 + d / np.sqrt(z) * theta**2 / (math.pi / 2 - theta) ** 2


def fit_axial_formula(
    z: np.ndarray,
    theta: np.ndarray,
    sigma: np.ndarray,
    pixels: np.ndarray,
    start: np.ndarray,
    free: np.ndarray,
    gain: np.ndarray | None = None,
) -> np.ndarray:
    """Weighted least squares of a + b (z - c)^2 + d / sqrt(z) theta^2 / (pi/2 - theta)^2 to
    per-bin sigmas (relative error, weight sqrt(pixels) up to FIT_PIXEL_CAP, times ``gain``:
    how strongly a bin's statistic responds to its sigma); ``free`` masks the fitted params,
    the others stay at ``start``."""
    weights = np.sqrt(np.minimum(pixels, FIT_PIXEL_CAP)) / np.maximum(sigma, 1e-6)
    if gain is not None:
        weights = weights * gain

    def residual(p_free: np.ndarray) -> np.ndarray:
        p = start.copy()
        p[free] = p_free
        return (axial_sigma_formula(p, z, theta) - sigma) * weights

    lower = np.array([0.0, 0.0, -2.0, 0.0])[free]
    upper = np.array([1.0, 1.0, 10.0, 1.0])[free]
    x0 = np.clip(start[free], lower + 1e-12, upper - 1e-12)
    result = least_squares(residual, x0, bounds=(lower, upper), x_scale="jac")
    out = start.copy()
    out[free] = result.x
    return out


def fit_incidence_ramp(theta_deg: np.ndarray, invalid: np.ndarray, p0: float) -> Estimate:
    """Linear ramp of extra dropout from start_deg (0) to end_deg (1), over the pixels away
    from edges; needs pixels beyond 45 deg."""
    steep = theta_deg > 45
    if steep.sum() < 500:
        return Estimate(
            None, int(steep.sum()), "fewer than 500 reference pixels beyond 45 deg incidence"
        )
    hist_all, edges = np.histogram(theta_deg, bins=90, range=(0, 90))
    hist_bad, _ = np.histogram(theta_deg[invalid], bins=90, range=(0, 90))
    centres = (edges[:-1] + edges[1:]) / 2
    observed = np.where(hist_all > 0, hist_bad / np.maximum(hist_all, 1), 0)
    excess = np.clip((observed - p0) / max(1 - p0, 1e-9), 0, 1)
    best, best_err = None, np.inf
    for start in range(20, 90):
        for end in range(start + 1, 91):
            ramp = np.clip((centres - start) / (end - start), 0, 1)
            err = float(np.sum(hist_all * (ramp - excess) ** 2))
            if err < best_err:
                best, best_err = (float(start), float(end)), err
    no_ramp_err = float(np.sum(hist_all * excess**2))
    if best is None or best_err > 0.9 * no_ramp_err:
        return Estimate(None, int(steep.sum()), "no rise of dropouts with incidence angle")
    return Estimate({"start_deg": best[0], "end_deg": best[1]}, int(steep.sum()))


def fit_edge_dropout(distance_px: np.ndarray, invalid: np.ndarray, p0: float) -> Estimate:
    """Band of extra dropout next to depth edges: the widest distance d (px) up to which every
    distance shows a significant excess over p0, and the mean excess within it."""
    d = np.round(distance_px).astype(int)
    width, excesses, total = -1, [], 0
    for k in range(0, 16):
        sel = d == k
        n = int(sel.sum())
        if n < 100:
            break
        p = float(invalid[sel].mean())
        excess = (p - p0) / max(1 - p0, 1e-9)
        if excess <= 3 * math.sqrt(max(p * (1 - p), 1e-6) / n) + 0.01:
            break
        width, total = k, total + n
        excesses.append((excess, n))
    if width < 0:
        n_near = int((d == 0).sum())
        return Estimate(
            None, n_near, "no excess of dropouts next to edges", supported=n_near >= 100
        )
    prob = sum(e * n for e, n in excesses) / sum(n for _, n in excesses)
    return Estimate({"width_px": width, "probability": float(min(prob, 1.0))}, total)


def random_dropout_blobs(
    refs: list[ReferenceFrame], masks: list[np.ndarray]
) -> tuple[float, float, int]:
    """(rate of invalid pixels, mean area of connected no-return blobs [px], pixels) over the
    pixels of ``masks`` (region interiors far from edges)."""
    invalid_n = total = 0
    areas = []
    for ref, mask in zip(refs, masks, strict=True):
        bad = mask & (ref.depth_m == 0)
        invalid_n += int(bad.sum())
        total += int(mask.sum())
        labels, count = ndimage.label(bad)
        if count:
            areas.append(np.bincount(labels.ravel())[1:])
    area = float(np.mean(np.concatenate(areas))) if areas else 1.0
    return (invalid_n / total if total else 0.0), area, total


def fit_distortion(refs: list[ReferenceFrame], window_px: int = 31) -> Estimate:
    """Slow relative warp of the surfaces: depth - reference, averaged over a window (the
    random noise averages out), divided by depth; its std over region interiors, and the lag
    where its autocorrelation along rows falls to 1/e (correlation length)."""
    fields, lags = [], []
    for ref in refs:
        valid = ref.in_region & (ref.depth_m > 0)
        r = np.where(valid, ref.depth_m - ref.ref_depth_m, 0).astype(np.float64)
        num = ndimage.uniform_filter(r, window_px)
        den = ndimage.uniform_filter(valid.astype(np.float64), window_px)
        inner = ndimage.binary_erosion(ref.in_region, iterations=window_px // 2) & (den > 0.5)
        if inner.sum() < 5000:
            continue
        e = np.zeros_like(r)
        e[inner] = num[inner] / den[inner] / ref.ref_depth_m[inner]
        for region in np.unique(ref.region_id[inner]):  # zero mean per region (its fit absorbed it)
            sel = inner & (ref.region_id == region)
            e[sel] -= e[sel].mean()
        fields.append(e[inner])
        lags.append(_correlation_length_px(e, inner))
    if not fields:
        return Estimate(None, 0, "no region large enough to see a slow warp", supported=False)
    values = np.concatenate(fields)
    return Estimate(
        {"relative_std": float(values.std()), "correlation_px": float(np.median(lags))},
        int(values.size),
    )


def _correlation_length_px(e: np.ndarray, mask: np.ndarray) -> float:
    var = float((e[mask] ** 2).mean())
    if var <= 0:
        return 1.0
    for lag in range(1, min(256, e.shape[1] // 2)):
        both = mask[:, lag:] & mask[:, :-lag]
        if both.sum() < 1000:
            return float(lag)
        if float((e[:, lag:] * e[:, :-lag])[both].mean()) / var < math.exp(-1):
            return float(lag)
    return float(min(256, e.shape[1] // 2))
