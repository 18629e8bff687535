"""Calibrate a depth sensor's noise profile from real frames (``sim2real depth calibrate``).

Against the reference geometry of each frame (planes found in it, known parts), the terms are
estimated one by one (``fit_terms``); the statistics that quantization, dropouts and the
median window bias are then matched by simulation: frames simulated from the same reference
with the candidate profile, their statistics computed exactly as on the real frames, and the
parameters adjusted until both agree. Uncertainties: bootstrap over regions.

``calibrate_profile`` is a short pipeline over stage functions, each in its own module:

1. ``calibrate_geometry.fit_emitter``: emitter baseline and shadow (then the real statistics);
2. ``calibrate_geometry.fit_levels``, ``fit_working_range``: output depth unit, disparity
   steps (no steps and no shadow: time of flight, baseline 0), working range;
3. ``calibrate_dropouts.estimate_dropouts``: direct dropout and warp estimates;
4. ``calibrate_noise.fit_noise``: sigma(z, theta), matched by simulation;
5. ``calibrate_dropouts.match_dropouts``: dropout rates and warp matched by simulation;
6. ``calibrate_uncertainty.bootstrap_and_record``: bootstrap, and each value's record.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from sim2real.core.errors import InputError
from sim2real.sensors.calibrate_dropouts import estimate_dropouts, match_dropouts
from sim2real.sensors.calibrate_geometry import fit_emitter, fit_levels, fit_working_range
from sim2real.sensors.calibrate_noise import fit_noise
from sim2real.sensors.calibrate_state import CalibrationState
from sim2real.sensors.calibrate_uncertainty import bootstrap_and_record
from sim2real.sensors.profile import NoiseProfile
from sim2real.sensors.reference_frame import ReferenceFrame
from sim2real.sensors.simulate import simulate_reference, simulated_tables
from sim2real.sensors.statistics import DEPTH_BIN_M, PixelTables


@dataclass
class CalibrationResult:
    profile: NoiseProfile
    references: list[ReferenceFrame]
    real: PixelTables
    simulated: PixelTables
    shadows: list[np.ndarray]
    timings_ms: dict[str, float] = field(default_factory=dict)


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
    state = CalibrationState(refs, base, name or f"{base.name}-calibrated", seed)
    fit_emitter(state)
    fit_levels(state)
    fit_working_range(state)
    dropouts = estimate_dropouts(state)
    noise = fit_noise(state, iterations)
    profile = match_dropouts(state, state.assemble(axial=noise.term()), dropouts)
    bootstrap_and_record(state, profile, noise, dropouts, bootstrap)

    frames = ", ".join(r.source for r in refs)
    source = (
        f"calibrated by sim2real from {len(refs)} frame(s): {frames}; base profile: {base.name}"
    )
    profile = profile.model_copy(update={"source": source, "calibration": _with_provenance(state)})
    profile = NoiseProfile.model_validate(profile.model_dump())  # re-validate every field
    _check_finite(profile)
    simulated = simulated_tables(refs, profile, state.shadows, state.samples, (seed + 100,))
    state.lap("final")
    state.timings_ms["total"] = sum(state.timings_ms.values())
    return CalibrationResult(profile, refs, state.real, simulated, state.shadows, state.timings_ms)


def _with_provenance(state: CalibrationState) -> dict:
    """The fits, each value kept from the base followed by where the base's value came from
    (a preset's 'data sheet' / 'assumption' marks)."""
    marks = state.base.calibration or {}
    out = {}
    for key, fit in state.fits.items():
        origin = marks.get(key)
        if fit.status.startswith("base") and origin is not None and origin.status:
            fit = fit.model_copy(update={"status": f"{fit.status} [base value: {origin.status}]"})
        out[key] = fit
    return out


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


__all__ = [
    "DEPTH_BIN_M",
    "CalibrationResult",
    "calibrate_profile",
    "simulate_reference",
    "simulated_tables",
]
