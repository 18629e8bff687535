"""Calibration stages that read the geometry of the sensor from the frames: the emitter
baseline (from shadow bands), the depth levels (output unit, disparity steps) and the working
range (where the returns start and stop)."""

from __future__ import annotations

from sim2real.sensors import fit_terms
from sim2real.sensors.calibrate_state import CalibrationState
from sim2real.sensors.fit_range import fit_range
from sim2real.sensors.profile import DisparityNoise, FittedValue, OutputQuantization
from sim2real.sensors.simulate import real_tables, region_offsets
from sim2real.sensors.statistics import noise_sample_pixels


def fit_emitter(state: CalibrationState) -> None:
    """Emitter baseline and whether its shadow shows; then the predicted shadows, the pixel
    samples and the real frames' tables that every later stage uses."""
    base, refs = state.base, state.refs
    b_est = fit_terms.fit_baseline(refs)
    baseline, shadow_on = base.baseline_m, base.emitter_shadow
    if b_est.value is not None:
        baseline, shadow_on = b_est.value, True
        state.note("baseline_m", baseline, b_est)
    elif b_est.supported:
        shadow_on = False
        state.note("baseline_m", baseline, b_est, status=f"base; shadow off: {b_est.reason}")
    else:
        state.note("baseline_m", baseline, b_est, status=f"base: {b_est.reason}")
    state.params.update(baseline_m=baseline, emitter_shadow=shadow_on)
    state.shadows = [fit_terms.predicted_shadow(r, baseline if shadow_on else 0.0) for r in refs]
    state.samples = [noise_sample_pixels(r, state.seed) for r in refs]
    state.real = real_tables(refs, state.shadows, state.samples)
    state.n_regions = int(region_offsets(refs)[-1])
    state.lap("baseline")


def fit_levels(state: CalibrationState) -> None:
    """The output depth unit and the disparity steps, from the depth levels of the frames."""
    base = state.base
    baseline = state.params["baseline_m"]
    unit_est, step_est = fit_terms.fit_quantization(state.refs, baseline if baseline else None)
    unit = (
        unit_est.value
        if unit_est.value is not None
        else (base.quantization.unit_m if base.quantization else None)
    )
    if unit is not None:
        state.note(
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
    state.note("disparity.step_px", step, step_est, status=status)
    state.params["disparity"] = DisparityNoise(sigma_px=0.0, step_px=step) if step > 0 else None
    state.params["quantization"] = OutputQuantization(unit_m=unit) if unit else base.quantization
    shadow_off = state.fits["baseline_m"].status.startswith("base; shadow off")
    if shadow_off and step == 0 and step_est.supported and baseline != 0:
        # neither a shadow beside the edges nor disparity steps: no baseline acts
        state.params["baseline_m"] = 0.0
        state.note(
            "baseline_m",
            0.0,
            step_est,
            status="fitted: 0 (time of flight): no emitter shadow beside the edges and no "
            "disparity steps in the depth levels",
        )


def fit_working_range(state: CalibrationState) -> None:
    """min/max depth from the frames' returns (see ``fit_range``)."""
    found = fit_range(state.refs, state.base.range)
    state.params["range"] = found.limits
    for end in ("min_m", "max_m"):
        value = getattr(found.limits, end) if found.limits is not None else 0.0
        state.fits[f"range.{end}"] = FittedValue(
            value=float(value),
            pixels=found.cutoff_pixels.get(end, 0),
            status=found.status[end],
        )
