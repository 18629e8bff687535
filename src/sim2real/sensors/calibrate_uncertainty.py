"""Calibration stage that closes the record: a bootstrap over regions for the uncertainty of
the noise level and of the dropout terms, and each value's status in the ``calibration:``
block (fitted, kept from the base and why, or off and why)."""

from __future__ import annotations

import numpy as np

from sim2real.sensors import fit_terms
from sim2real.sensors.calibrate_dropouts import DropoutEstimates
from sim2real.sensors.calibrate_noise import (
    AXIAL_LABELS,
    FIXED_BY_MODE,
    NoiseFit,
    fit_sigma,
    noise_bins,
)
from sim2real.sensors.calibrate_state import CalibrationState
from sim2real.sensors.profile import FittedValue, NoiseProfile


def bootstrap_and_record(
    state: CalibrationState,
    profile: NoiseProfile,
    noise: NoiseFit,
    drops: DropoutEstimates,
    rounds: int,
) -> None:
    """Resample the regions ``rounds`` times, refit the noise level and the direct dropout
    estimates, and write every value's record into ``state.fits``."""
    real, n_regions = state.real, state.n_regions
    theta_deg = np.degrees(real.theta_rad)
    rng = np.random.default_rng(state.seed)
    correction = noise.correction
    boot_axial, boot_p0 = [], []
    boot_terms: dict[str, list[dict]] = {}  # direct estimates of the dropout terms per round
    for _ in range(rounds):
        w = rng.multinomial(n_regions, np.full(n_regions, 1 / n_regions))
        bins = noise_bins(real, w)
        tg = {k: v[2] * correction[k] for k, v in bins.items() if k in correction}
        if len(tg) >= 1:
            # started from the fit itself (its fixed entries are the base's, as in the fit)
            boot_axial.append(fit_sigma(bins, tg, noise.axial, noise.mode, noise.slopes))
        wr = w[real.region][drops.real_far]
        if wr.sum():
            boot_p0.append(1 - float((wr * real.valid[drops.real_far]).sum() / wr.sum()))
        if drops.incidence.value is not None:
            wf = w[real.region][drops.far]
            est = fit_terms.fit_incidence_ramp(
                np.repeat(theta_deg[drops.far], wf), np.repeat(~real.valid[drops.far], wf), drops.p0
            )
            if est.value is not None:
                boot_terms.setdefault("incidence_dropout", []).append(est.value)
        if drops.edge.value is not None:
            near = drops.low & (real.edge_distance_px <= 16)
            wn = w[real.region][near]
            est = fit_terms.fit_edge_dropout(
                np.repeat(real.edge_distance_px[near], wn),
                np.repeat(~real.valid[near], wn),
                drops.p0,
            )
            if est.value is not None:
                boot_terms.setdefault("edge_dropout", []).append(est.value)
    axial_std = np.std(boot_axial, axis=0) if len(boot_axial) > 1 else np.full(4, np.nan)
    noise_pixels = int(real.noise_residual_m.size)
    for i, label in enumerate(AXIAL_LABELS):
        fixed = label in FIXED_BY_MODE[noise.mode]
        state.fits[f"axial.{label}"] = FittedValue(
            value=float(noise.axial[i]),
            std=None if np.isnan(axial_std[i]) else float(axial_std[i]),
            pixels=noise_pixels,
            status=f"base shape: {noise.why}" if fixed else "fitted",
        )
    _record_dropouts(state, profile, drops, boot_p0, boot_terms)
    state.lap("bootstrap")


def _record_dropouts(
    state: CalibrationState,
    profile: NoiseProfile,
    drops: DropoutEstimates,
    boot_p0: list[float],
    boot_terms: dict[str, list[dict]],
) -> None:
    fits, base = state.fits, state.base
    p0_std = float(np.std(boot_p0)) if len(boot_p0) > 1 else None
    if profile.missing_blobs is not None:
        rate = profile.missing_blobs.rate_per_mpx
        fits["missing_blobs.rate_per_mpx"] = FittedValue(
            value=rate,
            std=None if p0_std is None or drops.p0 <= 0 else rate * p0_std / drops.p0,
            pixels=drops.p0_pixels,
            status="fitted",
        )
    else:
        fits["missing_blobs.rate_per_mpx"] = FittedValue(
            value=0.0, pixels=drops.p0_pixels, status="fitted: no random dropouts"
        )
    for key, est, term in (
        ("incidence_dropout", drops.incidence, profile.incidence_dropout),
        ("edge_dropout", drops.edge, profile.edge_dropout),
        ("distortion", drops.distortion, profile.distortion),
    ):
        if term is None:
            fits[key] = FittedValue(
                value=0.0,
                pixels=est.pixels,
                status=f"off: {est.reason}" if est.value is None else "off",
            )
        else:
            status = "fitted" if est.value is not None else f"base: {est.reason}"
            for fname, value in term.model_dump().items():
                fits[f"{key}.{fname}"] = FittedValue(
                    value=float(value),
                    std=_bootstrap_std(boot_terms.get(key, []), fname, float(value), est),
                    pixels=est.pixels,
                    status=status,
                )
    fits["lateral.sigma_px"] = FittedValue(
        value=base.lateral.sigma_px if base.lateral else 0.0,
        status="base: lateral jitter is not estimated from frames yet",
    )
    if base.flying_pixels is None:
        fits["flying_pixels"] = FittedValue(
            value=0.0, status="base (off): flying pixels are not estimated from frames yet"
        )
    for fname, value in (base.flying_pixels.model_dump() if base.flying_pixels else {}).items():
        fits[f"flying_pixels.{fname}"] = FittedValue(
            value=float(value), status="base: flying pixels are not estimated from frames yet"
        )


def _bootstrap_std(
    rounds: list[dict], field: str, value: float, est: fit_terms.Estimate
) -> float | None:
    """Std of a term's field over the bootstrap rounds of its direct estimate, scaled to the
    final (simulation-matched) value for probabilities and rates."""
    samples = [r[field] for r in rounds if field in r]
    if len(samples) < 2 or est.value is None:
        return None
    std = float(np.std(samples))
    direct = float(est.value.get(field, 0.0))
    return std * value / direct if field == "probability" and direct > 0 else std
