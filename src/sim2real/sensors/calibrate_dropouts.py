"""Calibration stages for what is not per-pixel Gaussian noise: dropouts (random blobs, at
grazing incidence, beside edges) and the slow warp of the surfaces. Estimated directly from
the frames first, then matched by simulation (the dropout rates and the warp's spread of the
simulated frames made equal to the real ones)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sim2real.sensors import fit_terms
from sim2real.sensors.calibrate_state import CalibrationState
from sim2real.sensors.profile import (
    DepthDistortion,
    EdgeDropout,
    IncidenceDropout,
    MissingBlobs,
    NoiseProfile,
)
from sim2real.sensors.simulate import simulated_tables
from sim2real.sensors.statistics import PixelTables, trimmed_std

FAR_FROM_EDGE_PX = 15.0
LOW_INCIDENCE_DEG = 45.0
DEFAULT_WARP_CELL_PX = 64.0
"""Correlation length of the warp when the frames show its size but not its scale."""
BLOB_AREA_FACTOR = math.pi * (1.5**3 - 0.5**3) / 3
"""Expected disc area / radius_px^2 with radii uniform in [0.5, 1.5] radius_px."""
MATCH_ROUNDS = 2


@dataclass
class DropoutEstimates:
    """The direct estimates (before simulation matching) and the pixel selections behind them."""

    p0: float
    """No-return rate far from edges at low incidence (random dropouts)."""
    p0_pixels: int
    incidence: fit_terms.Estimate
    edge: fit_terms.Estimate
    distortion: fit_terms.Estimate
    far: np.ndarray
    """Rows of the real tables far from edges (incidence statistics)."""
    low: np.ndarray
    """Rows below 60 deg incidence (edge statistics)."""
    real_far: np.ndarray
    """Rows far from edges below LOW_INCIDENCE_DEG (random dropouts)."""


def _term(model, est: fit_terms.Estimate, base_term):
    """The fitted term; the base's when the data cannot say; None when it says 'absent'."""
    if est.value is not None:
        return model(**est.value)
    return base_term if not est.supported else None


def estimate_dropouts(state: CalibrationState) -> DropoutEstimates:
    """Direct estimates of the dropout terms and the warp; sets them in ``state.params``."""
    refs, real, base = state.refs, state.real, state.base
    keep = ~real.excluded
    far_masks = [
        r.in_region
        & (r.edge_distance_px > FAR_FROM_EDGE_PX)
        & (np.degrees(r.incidence_rad) < LOW_INCIDENCE_DEG)
        & ~s
        for r, s in zip(refs, state.shadows, strict=True)
    ]
    p0, blob_area, n0 = fit_terms.random_dropout_blobs(refs, far_masks)
    theta_deg = np.degrees(real.theta_rad)
    far = keep & (real.edge_distance_px > FAR_FROM_EDGE_PX)
    inc_est = fit_terms.fit_incidence_ramp(theta_deg[far], ~real.valid[far], p0)
    low = keep & (theta_deg < 60)
    edge_est = fit_terms.fit_edge_dropout(real.edge_distance_px[low], ~real.valid[low], p0)
    dist_est = fit_terms.fit_distortion(refs)
    state.lap("direct")

    radius = max(0.5, math.sqrt(blob_area / BLOB_AREA_FACTOR))
    blob_rate = (
        -math.log(max(1 - p0, 1e-6)) * 1e6 / (BLOB_AREA_FACTOR * radius**2) if p0 > 1e-4 else 0.0
    )
    state.params.update(
        incidence_dropout=_term(IncidenceDropout, inc_est, base.incidence_dropout),
        edge_dropout=_term(EdgeDropout, edge_est, base.edge_dropout),
        missing_blobs=MissingBlobs(rate_per_mpx=blob_rate, radius_px=radius)
        if blob_rate > 0
        else None,
        distortion=base.distortion,
    )
    if dist_est.value is not None:
        cell = max(1.0, dist_est.value["correlation_px"] / _correlation_per_cell())
        std = min(dist_est.value["relative_std"], 0.5)
        state.params["distortion"] = DepthDistortion(relative_std=std, cell_px=cell, field_seed=0)
    real_far = keep & (real.edge_distance_px > FAR_FROM_EDGE_PX) & (theta_deg < LOW_INCIDENCE_DEG)
    return DropoutEstimates(p0, n0, inc_est, edge_est, dist_est, far, low, real_far)


def no_return_rate(t: PixelTables, rows: np.ndarray) -> float:
    return 1 - float(t.valid[rows].mean()) if rows.any() else 0.0


def match_dropouts(
    state: CalibrationState, profile: NoiseProfile, est: DropoutEstimates
) -> NoiseProfile:
    """Rescale the random-blob rate, the edge dropout probability and the warp so that the
    simulated frames show the real rates and spread (MATCH_ROUNDS rounds)."""
    real = state.real
    keep = ~real.excluded
    theta_deg = np.degrees(real.theta_rad)
    for _ in range(MATCH_ROUNDS):
        sim = simulated_tables(state.refs, profile, state.shadows, state.samples, (state.seed + 7,))
        profile = _match_warp(profile, real, sim)
        sim_far = (
            ~sim.excluded
            & (sim.edge_distance_px > FAR_FROM_EDGE_PX)
            & (np.degrees(sim.theta_rad) < LOW_INCIDENCE_DEG)
        )
        p0_real = no_return_rate(real, est.real_far)
        p0_sim = no_return_rate(sim, sim_far)
        if profile.missing_blobs is not None and p0_sim > 0 and p0_real > 0:
            scale = math.log(max(1 - p0_real, 1e-6)) / math.log(max(1 - p0_sim, 1e-6))
            profile = profile.model_copy(
                update={
                    "missing_blobs": MissingBlobs(
                        rate_per_mpx=profile.missing_blobs.rate_per_mpx * scale,
                        radius_px=profile.missing_blobs.radius_px,
                    )
                }
            )
        if profile.edge_dropout is not None:
            w = profile.edge_dropout.width_px
            near_real = keep & (real.edge_distance_px <= w + 0.5) & (theta_deg < 60)
            near_sim = (
                ~sim.excluded & (sim.edge_distance_px <= w + 0.5) & (np.degrees(sim.theta_rad) < 60)
            )
            ex_real = 1 - float(real.valid[near_real].mean()) - p0_real
            ex_sim = 1 - float(sim.valid[near_sim].mean()) - p0_sim
            if ex_sim > 0 and ex_real > 0:
                prob = min(1.0, profile.edge_dropout.probability * ex_real / ex_sim)
                profile = profile.model_copy(
                    update={"edge_dropout": EdgeDropout(width_px=w, probability=prob)}
                )
    state.lap("dropouts")
    return profile


def _match_warp(profile: NoiseProfile, real: PixelTables, sim: PixelTables) -> NoiseProfile:
    """Set the distortion's std so that depth - reference, relative to depth, spreads as much in
    simulation as in the real frames (the warp is what the per-pixel noise leaves unexplained)."""
    var_real = trimmed_std(real.ref_residual_m / real.ref_z_m) ** 2
    var_sim = trimmed_std(sim.ref_residual_m / sim.ref_z_m) ** 2
    if not (np.isfinite(var_real) and np.isfinite(var_sim)):
        return profile
    current = profile.distortion.relative_std if profile.distortion is not None else 0.0
    std = math.sqrt(max(current**2 + var_real - var_sim, 0.0))
    if std < 1e-5:
        return profile.model_copy(update={"distortion": None})
    cell = profile.distortion.cell_px if profile.distortion is not None else DEFAULT_WARP_CELL_PX
    return profile.model_copy(
        update={
            "distortion": DepthDistortion(relative_std=min(std, 0.5), cell_px=cell, field_seed=0)
        }
    )


_CORRELATION_PER_CELL: float | None = None


def _correlation_per_cell() -> float:
    """Correlation length (1/e lag along rows) of the distortion field per unit of cell_px,
    measured once on a generated field."""
    global _CORRELATION_PER_CELL
    if _CORRELATION_PER_CELL is None:
        from sim2real.sensors.noise import distortion_field

        cell = 32.0
        e = distortion_field(
            (240, 640), DepthDistortion(relative_std=0.01, cell_px=cell, field_seed=1)
        ).astype(np.float64)
        _CORRELATION_PER_CELL = fit_terms._correlation_length_px(e, np.ones(e.shape, bool)) / cell
    return _CORRELATION_PER_CELL
