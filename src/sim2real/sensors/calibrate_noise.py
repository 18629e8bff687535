"""Calibration stage for the random noise sigma(z, theta): the spread of depth minus its local
9x9 median per (10 cm, 15 deg) bin, the Nguyen form fitted to it, then matched by simulation
(frames simulated from the same reference with the candidate profile, the statistic computed
identically, the per-bin targets corrected by real / simulated, refitted)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sim2real.core.errors import InputError
from sim2real.sensors import fit_terms
from sim2real.sensors.calibrate_state import CalibrationState
from sim2real.sensors.profile import AxialNoise, NoiseProfile
from sim2real.sensors.simulate import simulated_tables
from sim2real.sensors.statistics import PixelTables, depth_bins, incidence_bins, trimmed_std

MIN_BIN_PIXELS = 200
MIN_DEPTH_SPAN_M = 0.4
"""Depth spread of the noise bins needed to fit the depth shape of sigma (b, c) and not only
its level."""
AXIAL_LABELS = ("a_m", "b_per_m", "c_m", "d_m_sqrt_m")
FIXED_BY_MODE = {
    "scale": {"c_m"},
    "depth": {"d_m_sqrt_m"},
    "full": set(),
    "depth_base_c": {"c_m", "d_m_sqrt_m"},
    "full_base_c": {"c_m"},
}
"""Parameters each fitting mode keeps at the base profile's value."""
FREE_GAIN = 0.75
"""The angle term d and the depth of least noise c are fitted only when freeing each cuts
the weighted squared error of the fit to 75 % or less: otherwise the frames do not pin it,
the base's value stays, and sigma extrapolates to other depths and angles with the base's
shape, not an arbitrary one."""

MIN_SLOPE, MAX_SLOPE = 0.3, 2.0
"""Clip of the measured d log(statistic) / d log(sigma) of a bin in the matching."""
MAX_LOG_STEP = 1.0
"""A bin's sigma moves by at most a factor e per round."""

NoiseBins = dict[tuple[int, int], tuple[float, float, float, int]]


@dataclass
class NoiseFit:
    axial: np.ndarray
    """(a, b, c, d) of the fitted sigma(z, theta)."""
    mode: str
    why: str
    """Why a mode other than 'full' was used."""
    start: np.ndarray
    real_bins: NoiseBins
    targets: dict[tuple[int, int], float]
    """Per-bin sigma targets after the simulation corrections."""
    slopes: dict[tuple[int, int], float] | None = None
    """Per-bin d log(statistic) / d log(sigma) measured by the matching."""

    def term(self) -> AxialNoise:
        a = self.axial
        return AxialNoise(a_m=a[0], b_per_m=a[1], c_m=a[2], d_m_sqrt_m=a[3])

    @property
    def correction(self) -> dict[tuple[int, int], float]:
        """Per-bin target / real spread (what simulation says the statistic's bias is)."""
        return {
            k: self.targets[k] / self.real_bins[k][2]
            for k in self.targets
            if self.real_bins[k][2] > 0
        }


def noise_bins(t: PixelTables, weights: np.ndarray | None = None) -> NoiseBins:
    """{(depth bin, incidence bin): (mean z, mean theta, spread, pixels)} with enough pixels."""
    zb, ib = depth_bins(t.noise_z_m), incidence_bins(t.noise_theta_rad)
    key = zb * 100 + ib
    w = None if weights is None else weights[t.noise_region]
    out = {}
    for k in np.unique(key):
        sel = key == k
        n = int(sel.sum() if w is None else w[sel].sum())
        if n < MIN_BIN_PIXELS:
            continue
        values = (
            t.noise_residual_m[sel] if w is None else np.repeat(t.noise_residual_m[sel], w[sel])
        )
        zs = t.noise_z_m[sel] if w is None else np.repeat(t.noise_z_m[sel], w[sel])
        ths = t.noise_theta_rad[sel] if w is None else np.repeat(t.noise_theta_rad[sel], w[sel])
        out[(int(k // 100), int(k % 100))] = (
            float(zs.mean()),
            float(ths.mean()),
            trimmed_std(values),
            n,
        )
    return out


def base_axial_params(base: NoiseProfile, fx: float) -> np.ndarray:
    """The base profile's sigma(z, theta) in the axial form (a, b, c, d)."""
    if base.axial is not None:
        a = base.axial
        return np.array([a.a_m, a.b_per_m, a.c_m, a.d_m_sqrt_m], dtype=np.float64)
    if base.disparity is not None and base.disparity.sigma_px > 0 and base.baseline_m != 0:
        return np.array([0.0, base.disparity.sigma_px / (fx * abs(base.baseline_m)), 0.0, 0.0])
    return np.array([0.001, 0.0, 0.0, 0.0])


def fit_sigma(
    bins: NoiseBins, targets: dict, start: np.ndarray, mode: str, slopes: dict | None = None
) -> np.ndarray:
    """(a, b, c, d) fitted to the per-bin ``targets``; ``mode`` says which are free. With
    ``slopes`` (d log statistic / d log sigma per bin) a bin's sigma error weighs as the
    statistic's error it causes (a Gauss-Newton weighting)."""
    keys = [k for k in bins if k in targets]
    z = np.array([bins[k][0] for k in keys])
    th = np.array([bins[k][1] for k in keys])
    n = np.array([bins[k][3] for k in keys], dtype=np.float64)
    s = np.array([targets[k] for k in keys])
    if mode == "scale":  # narrow depth range: keep the base's shape, fit its level
        shape = fit_terms.axial_sigma_formula(start, z, th)
        w = n / np.maximum(s, 1e-9) ** 2
        k = float(np.sum(w * shape * s) / np.sum(w * shape * shape))
        return np.array([start[0] * k, start[1] * k, start[2], start[3] * k])
    free = np.array([True, True, not mode.endswith("_base_c"), mode.startswith("full")])
    gain = None if slopes is None else np.array([slopes.get(k, 1.0) for k in keys])
    return fit_terms.fit_axial_formula(z, th, s, n, start, free, gain)


def axial_mode(bins: NoiseBins) -> tuple[str, str]:
    """'full', 'depth' (no angle term) or 'scale' (the base's shape, its level fitted)."""
    z = [v[0] for v in bins.values()]
    steep = [k for k, v in bins.items() if math.degrees(v[1]) > 40]
    if max(z) - min(z) < MIN_DEPTH_SPAN_M:
        return "scale", f"depths {min(z):.2f}-{max(z):.2f} m too narrow for its depth shape"
    if len(steep) < 2:
        return "depth", "too few pixels beyond 40 deg incidence for the angle term"
    return "full", ""


def _weighted_error(params: np.ndarray, bins: NoiseBins, targets: dict) -> float:
    model = _model_sigma(params, bins)
    return float(
        sum(
            min(bins[k][3], fit_terms.FIT_PIXEL_CAP) * (model[k] / targets[k] - 1) ** 2
            for k in targets
        )
    )


def _pin(bins: NoiseBins, targets: dict, start: np.ndarray, mode: str, why: str):
    """``mode`` narrowed to the parameters the bins pin down: the angle term d, then the
    depth of least noise c, each kept from the base unless freeing it cuts the weighted
    squared error of the fit to FREE_GAIN or less."""
    z = [v[0] for v in bins.values()]
    narrower = []
    if mode == "full":
        narrower.append(("depth", "the incidence angles seen do not pin the angle term"))
    narrower.append(
        (None, f"depths {min(z):.2f}-{max(z):.2f} m do not pin the depth of least noise")
    )
    for target, reason in narrower:
        simpler = target or f"{mode}_base_c"
        e_free = _weighted_error(fit_sigma(bins, targets, start, mode), bins, targets)
        e_kept = _weighted_error(fit_sigma(bins, targets, start, simpler), bins, targets)
        if e_free <= FREE_GAIN * e_kept:
            continue
        gain = 100 * (1 - e_free / max(e_kept, 1e-12))
        reason = f"{reason} (freeing it cuts the fit's error by {gain:.0f} %, < {100 * (1 - FREE_GAIN):.0f} %)"
        mode, why = simpler, f"{why}; {reason}" if why else reason
    return mode, why


def _model_sigma(params: np.ndarray, bins: NoiseBins) -> dict[tuple[int, int], float]:
    """sigma of the axial form at each bin's mean depth and incidence."""
    keys = list(bins)
    z = np.array([bins[k][0] for k in keys])
    th = np.array([bins[k][1] for k in keys])
    sigma = np.maximum(fit_terms.axial_sigma_formula(params, z, th), 1e-7)
    return dict(zip(keys, sigma.tolist(), strict=True))


def fit_noise(state: CalibrationState, iterations: int) -> NoiseFit:
    """sigma(z, theta) fitted, then ``iterations`` rounds of simulation matching."""
    real_bins = noise_bins(state.real)
    if not real_bins:
        raise InputError(
            state.refs[0].source,
            "regions",
            "no reference region with enough interior pixels to measure the noise",
        )
    mode, why = axial_mode(real_bins)
    start = base_axial_params(state.base, state.fx)
    targets = {k: v[2] for k, v in real_bins.items()}
    if mode != "scale":
        mode, why = _pin(real_bins, targets, start, mode, why)
    fit = NoiseFit(fit_sigma(real_bins, targets, start, mode), mode, why, start, real_bins, targets)
    seeds = (state.seed,)
    previous: dict[tuple[int, int], tuple[float, float]] = {}
    slopes: dict[tuple[int, int], float] = {}
    for _ in range(iterations):
        profile = state.assemble(axial=fit.term())
        sim_bins = noise_bins(
            simulated_tables(state.refs, profile, state.shadows, state.samples, seeds)
        )
        modelled = _model_sigma(fit.axial, real_bins)
        for k in targets:
            if k not in sim_bins or sim_bins[k][2] <= 0:
                continue
            now = (np.log(modelled[k]), np.log(sim_bins[k][2]))
            if k in previous and abs(now[0] - previous[k][0]) > 0.02:
                slope = (now[1] - previous[k][1]) / (now[0] - previous[k][0])
                slopes[k] = float(np.clip(slope, MIN_SLOPE, MAX_SLOPE))
            slope = slopes.get(k, 1.0)
            # a secant step in log-log: the statistic's response to sigma, measured per bin
            # (quantization makes it flatter than 1:1), sets how far to move sigma there
            step = (np.log(real_bins[k][2]) - now[1]) / slope
            targets[k] = float(modelled[k] * np.exp(np.clip(step, -MAX_LOG_STEP, MAX_LOG_STEP)))
            previous[k] = now
        fit.axial = fit_sigma(real_bins, targets, start, mode, slopes)
    fit.slopes = slopes
    state.lap("noise")
    return fit
