"""Calibrate a depth sensor's noise profile from real frames (``sim2real depth calibrate``).

Against the reference geometry of each frame (planes found in it, known parts), the terms are
estimated one by one (``fit_terms``); the statistics that quantization, dropouts and the
median window bias are then matched by simulation: frames simulated from the same reference
with the candidate profile, their statistics computed exactly as on the real frames, and the
parameters adjusted until both agree. Uncertainties: bootstrap over regions.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from sim2real.core.errors import InputError
from sim2real.sensors import fit_terms
from sim2real.sensors.frame import RenderedFrame
from sim2real.sensors.noise import apply_noise
from sim2real.sensors.profile import (
    AxialNoise,
    DepthDistortion,
    DisparityNoise,
    EdgeDropout,
    FittedValue,
    IncidenceDropout,
    MissingBlobs,
    NoiseProfile,
    OutputQuantization,
)
from sim2real.sensors.reference_frame import ReferenceFrame
from sim2real.sensors.statistics import (
    DEPTH_BIN_M,
    PixelTables,
    depth_bins,
    incidence_bins,
    noise_sample_pixels,
    pixel_tables,
    trimmed_std,
)

FAR_FROM_EDGE_PX = 15.0
LOW_INCIDENCE_DEG = 45.0
MIN_BIN_PIXELS = 200
MIN_DEPTH_SPAN_M = 0.4
"""Depth spread of the noise bins needed to fit the depth shape of sigma (b, c) and not only
its level."""
DEFAULT_WARP_CELL_PX = 64.0
"""Correlation length of the warp when the frames show its size but not its scale."""
BLOB_AREA_FACTOR = math.pi * (1.5**3 - 0.5**3) / 3
"""Expected disc area / radius_px^2 with radii uniform in [0.5, 1.5] radius_px."""


@dataclass
class CalibrationResult:
    profile: NoiseProfile
    references: list[ReferenceFrame]
    real: PixelTables
    simulated: PixelTables
    shadows: list[np.ndarray]
    timings_ms: dict[str, float] = field(default_factory=dict)


def reference_frame_for_simulation(ref: ReferenceFrame, shadow: np.ndarray) -> RenderedFrame:
    """The ideal frame of the reference geometry: true depth on the regions (0 elsewhere, and in
    the predicted shadow), true normals and incidence, the scene's edges."""
    depth = np.where(shadow, np.float32(0), ref.ref_depth_m).astype(np.float32)
    return RenderedFrame(
        ref.camera, depth, ref.normal_cam, ref.incidence_rad, ref.region_id, ref.edge, shadow
    )


def simulate_reference(
    ref: ReferenceFrame, profile: NoiseProfile, seed: int, shadow: np.ndarray | None = None
) -> np.ndarray:
    """What a sensor with ``profile`` would measure of ``ref``'s geometry: (H, W) float32 m.
    Lateral jitter needs ray casting and is not applied here."""
    if shadow is None:
        shadow = fit_terms.predicted_shadow(ref, profile.shadow_baseline_m)
    return apply_noise(
        reference_frame_for_simulation(ref, shadow), profile, np.random.default_rng(seed)
    )


def simulated_tables(
    refs: list[ReferenceFrame],
    profile: NoiseProfile,
    shadows: list[np.ndarray],
    samples: list[tuple[np.ndarray, np.ndarray]],
    seeds: tuple[int, ...],
    exclude_shadow: bool = True,
) -> PixelTables:
    """Per-pixel tables of simulations of ``refs`` (one per seed), regions numbered as in the
    real tables. ``exclude_shadow`` leaves the predicted shadow out of the dropout statistics."""
    tables, offset = [], 0
    for ref, shadow, sample in zip(refs, shadows, samples, strict=True):
        for seed in seeds:
            depth = simulate_reference(ref, profile, seed, shadow)
            tables.append(
                pixel_tables(ref, depth, offset, shadow if exclude_shadow else None, sample)
            )
        offset += len(ref.regions)
    return PixelTables.concatenate(tables)


def _noise_bins(
    t: PixelTables, weights: np.ndarray | None = None
) -> dict[tuple[int, int], tuple[float, float, float, int]]:
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


def _base_axial_params(base: NoiseProfile, fx: float) -> np.ndarray:
    """The base profile's sigma(z, theta) in the axial form (a, b, c, d)."""
    if base.axial is not None:
        a = base.axial
        return np.array([a.a_m, a.b_per_m, a.c_m, a.d_m_sqrt_m], dtype=np.float64)
    if base.disparity is not None and base.disparity.sigma_px > 0 and base.baseline_m != 0:
        return np.array([0.0, base.disparity.sigma_px / (fx * abs(base.baseline_m)), 0.0, 0.0])
    return np.array([0.001, 0.0, 0.0, 0.0])


def _fit_sigma(bins: dict, targets: dict, start: np.ndarray, mode: str) -> np.ndarray:
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
    free = np.array([True, True, True, mode == "full"])
    return fit_terms.fit_axial_formula(z, th, s, n, start, free)


def _axial_mode(bins: dict) -> tuple[str, str]:
    z = [v[0] for v in bins.values()]
    steep = [k for k, v in bins.items() if math.degrees(v[1]) > 40]
    if max(z) - min(z) < MIN_DEPTH_SPAN_M:
        return "scale", f"depths {min(z):.2f}-{max(z):.2f} m too narrow for its depth shape"
    if len(steep) < 2:
        return "depth", "too few pixels beyond 40 deg incidence for the angle term"
    return "full", ""


def _term(model, est: fit_terms.Estimate, base_term):
    """The fitted term; the base's when the data cannot say; None when it says 'absent'."""
    if est.value is not None:
        return model(**est.value)
    return base_term if not est.supported else None


def _assemble(base: NoiseProfile, name: str, p: dict) -> NoiseProfile:
    """The base profile with the terms in ``p`` replaced."""
    data = base.model_dump()
    data.update(name=name, calibration=None)
    data.update(p)
    return NoiseProfile.model_validate(data)


def calibrate_profile(
    refs: list[ReferenceFrame],
    base: NoiseProfile,
    *,
    name: str | None = None,
    seed: int = 0,
    iterations: int = 4,
    bootstrap: int = 20,
) -> CalibrationResult:
    """Fit ``base``'s terms to the real frames of ``refs``; see the module doc."""
    if not refs:
        raise InputError(None, "--frames", "no frame to calibrate from")
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    fx = refs[0].camera.fx
    fits: dict[str, FittedValue] = {}

    def note(
        key: str,
        value: float,
        est: fit_terms.Estimate | None,
        std: float | None = None,
        status: str = "fitted",
    ) -> None:
        fits[key] = FittedValue(
            value=float(value),
            std=std if std is not None else (est.std if est else None),
            pixels=est.pixels if est else 0,
            status=status,
        )

    # 1. emitter baseline from shadow bands
    b_est = fit_terms.fit_baseline(refs)
    baseline, shadow_on = base.baseline_m, base.emitter_shadow
    if b_est.value is not None:
        baseline, shadow_on = b_est.value, True
        note("baseline_m", baseline, b_est)
    elif b_est.supported:
        shadow_on = False
        note("baseline_m", baseline, b_est, status=f"base; shadow off: {b_est.reason}")
    else:
        note("baseline_m", baseline, b_est, status=f"base: {b_est.reason}")
    shadows = [fit_terms.predicted_shadow(r, baseline if shadow_on else 0.0) for r in refs]
    samples = [noise_sample_pixels(r, seed) for r in refs]
    offsets = np.cumsum([0] + [len(r.regions) for r in refs])
    real = PixelTables.concatenate(
        [
            pixel_tables(r, r.depth_m, int(o), s, smp)
            for r, o, s, smp in zip(refs, offsets[:-1], shadows, samples, strict=True)
        ]
    )
    n_regions = int(offsets[-1])
    timings["baseline"] = (time.perf_counter() - t0) * 1e3

    # 2. depth levels: output unit and disparity steps
    unit_est, step_est = fit_terms.fit_quantization(refs, baseline if baseline else None)
    unit = (
        unit_est.value
        if unit_est.value is not None
        else (base.quantization.unit_m if base.quantization else None)
    )
    if unit is not None:
        note(
            "quantization.unit_m",
            unit,
            unit_est,
            status="fitted" if unit_est.value is not None else f"base: {unit_est.reason}",
        )
    base_step = base.disparity.step_px if base.disparity is not None else 0.0
    if step_est.value is not None:
        step, status = step_est.value, "fitted"
    elif step_est.supported:  # the levels are evenly spaced: no disparity steps
        step, status = 0.0, f"off: {step_est.reason}"
    else:
        step, status = base_step, f"base: {step_est.reason}"
    note("disparity.step_px", step, step_est, status=status)

    # 3. dropouts, direct estimates (refined by simulation below)
    keep = ~real.excluded
    far_masks = [
        r.in_region
        & (r.edge_distance_px > FAR_FROM_EDGE_PX)
        & (np.degrees(r.incidence_rad) < LOW_INCIDENCE_DEG)
        & ~s
        for r, s in zip(refs, shadows, strict=True)
    ]
    p0, blob_area, n0 = fit_terms.random_dropout_blobs(refs, far_masks)
    theta_deg = np.degrees(real.theta_rad)
    far = keep & (real.edge_distance_px > FAR_FROM_EDGE_PX)
    inc_est = fit_terms.fit_incidence_ramp(theta_deg[far], ~real.valid[far], p0)
    low = keep & (theta_deg < 60)
    edge_est = fit_terms.fit_edge_dropout(real.edge_distance_px[low], ~real.valid[low], p0)
    dist_est = fit_terms.fit_distortion(refs)
    timings["direct"] = (time.perf_counter() - t0) * 1e3 - sum(timings.values())

    radius = max(0.5, math.sqrt(blob_area / BLOB_AREA_FACTOR))
    blob_rate = (
        -math.log(max(1 - p0, 1e-6)) * 1e6 / (BLOB_AREA_FACTOR * radius**2) if p0 > 1e-4 else 0.0
    )
    params: dict = {
        "baseline_m": baseline,
        "emitter_shadow": shadow_on,
        "disparity": DisparityNoise(sigma_px=0.0, step_px=step) if step > 0 else None,
        "quantization": OutputQuantization(unit_m=unit) if unit else base.quantization,
        "incidence_dropout": _term(IncidenceDropout, inc_est, base.incidence_dropout),
        "edge_dropout": _term(EdgeDropout, edge_est, base.edge_dropout),
        "missing_blobs": MissingBlobs(rate_per_mpx=blob_rate, radius_px=radius)
        if blob_rate > 0
        else None,
        "distortion": base.distortion,
    }
    if dist_est.value is not None:
        cell = max(1.0, dist_est.value["correlation_px"] / _correlation_per_cell())
        std = min(dist_est.value["relative_std"], 0.5)
        params["distortion"] = DepthDistortion(relative_std=std, cell_px=cell, field_seed=0)

    # 4. sigma(z, theta): fit, simulate, correct the per-bin targets, refit
    real_bins = _noise_bins(real)
    if not real_bins:
        raise InputError(
            refs[0].source,
            "regions",
            "no reference region with enough interior pixels to measure the noise",
        )
    mode, why = _axial_mode(real_bins)
    start = _base_axial_params(base, fx)
    targets = {k: v[2] for k, v in real_bins.items()}
    axial = _fit_sigma(real_bins, targets, start, mode)
    name = name or f"{base.name}-calibrated"
    for _ in range(iterations):
        profile = _assemble(
            base,
            name,
            {
                **params,
                "axial": AxialNoise(
                    a_m=axial[0], b_per_m=axial[1], c_m=axial[2], d_m_sqrt_m=axial[3]
                ),
            },
        )
        sim_bins = _noise_bins(simulated_tables(refs, profile, shadows, samples, (seed, seed + 1)))
        for k in targets:
            if k in sim_bins and sim_bins[k][2] > 0:
                targets[k] *= real_bins[k][2] / sim_bins[k][2]
        axial = _fit_sigma(real_bins, targets, start, mode)
    timings["noise"] = (time.perf_counter() - t0) * 1e3 - sum(timings.values())

    # 5. dropouts and the slow warp: match the simulated rates and spread to the real ones
    profile = _assemble(
        base,
        name,
        {
            **params,
            "axial": AxialNoise(a_m=axial[0], b_per_m=axial[1], c_m=axial[2], d_m_sqrt_m=axial[3]),
        },
    )
    for _ in range(3):
        sim = simulated_tables(refs, profile, shadows, samples, (seed + 7,))
        profile = _match_warp(profile, real, sim, dist_est)
        sim_far = (
            ~sim.excluded
            & (sim.edge_distance_px > FAR_FROM_EDGE_PX)
            & (np.degrees(sim.theta_rad) < LOW_INCIDENCE_DEG)
        )
        real_far = (
            keep & (real.edge_distance_px > FAR_FROM_EDGE_PX) & (theta_deg < LOW_INCIDENCE_DEG)
        )
        p0_real = 1 - float(real.valid[real_far].mean()) if real_far.any() else 0.0
        p0_sim = 1 - float(sim.valid[sim_far].mean()) if sim_far.any() else 0.0
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
    timings["dropouts"] = (time.perf_counter() - t0) * 1e3 - sum(timings.values())

    # 6. uncertainty: bootstrap over regions of the noise level and the random dropout rate
    rng = np.random.default_rng(seed)
    correction = {k: targets[k] / real_bins[k][2] for k in targets if real_bins[k][2] > 0}
    boot_axial, boot_p0 = [], []
    boot_terms: dict[str, list[dict]] = {}  # direct estimates of the dropout terms per round
    for _ in range(bootstrap):
        w = rng.multinomial(n_regions, np.full(n_regions, 1 / n_regions))
        bins = _noise_bins(real, w)
        tg = {k: v[2] * correction[k] for k, v in bins.items() if k in correction}
        if len(tg) >= 1:
            boot_axial.append(_fit_sigma(bins, tg, start, mode))
        wr = w[real.region][real_far]
        if wr.sum():
            boot_p0.append(1 - float((wr * real.valid[real_far]).sum() / wr.sum()))
        if inc_est.value is not None:
            wf = w[real.region][far]
            est = fit_terms.fit_incidence_ramp(
                np.repeat(theta_deg[far], wf), np.repeat(~real.valid[far], wf), p0
            )
            if est.value is not None:
                boot_terms.setdefault("incidence_dropout", []).append(est.value)
        if edge_est.value is not None:
            near = low & (real.edge_distance_px <= 16)
            wn = w[real.region][near]
            est = fit_terms.fit_edge_dropout(
                np.repeat(real.edge_distance_px[near], wn), np.repeat(~real.valid[near], wn), p0
            )
            if est.value is not None:
                boot_terms.setdefault("edge_dropout", []).append(est.value)
    axial_std = np.std(boot_axial, axis=0) if len(boot_axial) > 1 else np.full(4, np.nan)
    noise_pixels = int(real.noise_residual_m.size)
    labels = ("a_m", "b_per_m", "c_m", "d_m_sqrt_m")
    fixed = {"scale": {"c_m"}, "depth": {"d_m_sqrt_m"}, "full": set()}[mode]
    for i, label in enumerate(labels):
        status = "fitted" if label not in fixed else f"base shape: {why}"
        fits[f"axial.{label}"] = FittedValue(
            value=float(axial[i]),
            std=None if np.isnan(axial_std[i]) else float(axial_std[i]),
            pixels=noise_pixels,
            status=status,
        )
    p0_std = float(np.std(boot_p0)) if len(boot_p0) > 1 else None
    if profile.missing_blobs is not None:
        fits["missing_blobs.rate_per_mpx"] = FittedValue(
            value=profile.missing_blobs.rate_per_mpx,
            std=None
            if p0_std is None or p0 <= 0
            else profile.missing_blobs.rate_per_mpx * p0_std / p0,
            pixels=n0,
            status="fitted",
        )
    else:
        fits["missing_blobs.rate_per_mpx"] = FittedValue(
            value=0.0, pixels=n0, status="fitted: no random dropouts"
        )
    for key, est, term in (
        ("incidence_dropout", inc_est, profile.incidence_dropout),
        ("edge_dropout", edge_est, profile.edge_dropout),
        ("distortion", dist_est, profile.distortion),
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
    timings["bootstrap"] = (time.perf_counter() - t0) * 1e3 - sum(timings.values())

    frames = ", ".join(r.source for r in refs)
    source = (
        f"calibrated by sim2real from {len(refs)} frame(s): {frames}; base profile: {base.name}"
    )
    profile = profile.model_copy(update={"source": source, "calibration": fits})
    profile = NoiseProfile.model_validate(profile.model_dump())  # re-validate every field
    _check_finite(profile)
    simulated = simulated_tables(refs, profile, shadows, samples, (seed + 100, seed + 101))
    timings["total"] = (time.perf_counter() - t0) * 1e3
    return CalibrationResult(profile, refs, real, simulated, shadows, timings)


def _match_warp(
    profile: NoiseProfile, real: PixelTables, sim: PixelTables, est: fit_terms.Estimate
) -> NoiseProfile:
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


def _check_finite(profile: NoiseProfile) -> None:
    def walk(value, path):
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{path}.{k}" if path else k)
        elif isinstance(value, float) and not math.isfinite(value):
            raise InputError(
                None, path, "calibration produced a non-finite value: the frames cannot support it"
            )

    walk(profile.model_dump(), "")


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


__all__ = ["DEPTH_BIN_M", "CalibrationResult", "calibrate_profile", "simulate_reference"]
