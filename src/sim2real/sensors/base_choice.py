"""Which preset a calibration starts from, chosen by evidence: each preset's simulation of the
planes found in the frames is compared with the frames, and the closest one is the base.

Closeness (lower is better) = the mean |log(simulated / real)| of the local-noise spread over
the 10 cm depth bins, plus the mean |simulated - real| valid rate over the regions (as a
fraction). The base matters for what the frames cannot pin down (lateral jitter, a range
limit the scene does not reach, the shape of sigma over depths it does not span...), so it
should be the sensor the frames look most like.

The technology comes first: frames whose depth levels widen with depth (disparity steps) or
that show an emitter shadow come from a triangulating sensor (structured light, stereo), so
only presets with a baseline compete; otherwise every preset does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim2real.sensors import fit_terms
from sim2real.sensors.presets import get_preset, preset_names
from sim2real.sensors.profile import NoiseProfile
from sim2real.sensors.reference_frame import ReferenceFrame
from sim2real.sensors.simulate import real_tables, simulated_tables
from sim2real.sensors.statistics import (
    noise_sample_pixels,
    noise_spread_by_bin,
    valid_rate_by_region,
)

CHOICE_SEED = 1234
CHOICE_FRAMES = 2
CHOICE_SAMPLES = 20_000
"""The choice reads at most 2 frames and 20,000 noise pixels per frame: it ranks presets
that differ by tens of percent, which needs no more."""


@dataclass
class BaseChoice:
    name: str
    profile: NoiseProfile
    scores: dict[str, dict[str, float]]
    """preset -> {'noise_log': ..., 'valid': ..., 'score': ...}, best first."""
    chosen_by: str
    """'evidence' or 'user'."""
    technology: str = ""
    """What the frames say about the technology, as used to pick the candidates."""

    def reason(self) -> str:
        if self.chosen_by == "user":
            return f"base profile '{self.name}' (given)"
        ranked = list(self.scores.items())
        best = ranked[0][1]
        text = (
            f"base profile '{self.name}' chosen by evidence: its simulation of the found planes "
            f"is closest to the frames (noise spread off by {100 * (np.exp(best['noise_log']) - 1):.0f} % "
            f"per depth bin, valid rate by {100 * best['valid']:.1f} pp per region"
        )
        if len(ranked) > 1:
            name, s = ranked[1]
            text += f"; next: '{name}', score {s['score']:.3f} vs {best['score']:.3f}"
        return text + f"; {self.technology})"


def preset_closeness(
    refs: list[ReferenceFrame], profile: NoiseProfile, real, samples
) -> dict[str, float]:
    shadows = [fit_terms.predicted_shadow(r, profile.shadow_baseline_m) for r in refs]
    sim = simulated_tables(refs, profile, shadows, samples, (CHOICE_SEED,), exclude_shadow=False)
    rs, ss = noise_spread_by_bin(real), noise_spread_by_bin(sim, min_pixels=1)
    logs = []
    for key, (spread, _) in rs.items():
        sim_spread = ss.get(key, (0.0, 0))[0]
        # a bin the simulation loses entirely (out of its range) counts as a factor-10 miss
        logs.append(abs(np.log(max(sim_spread, 1e-9) / spread)) if sim_spread > 0 else np.log(10))
    rv, sv = valid_rate_by_region(real), valid_rate_by_region(sim)
    valid = [abs(sv.get(r, (0.0, 0))[0] - rate) for r, (rate, _) in rv.items()]
    noise_log = float(np.mean(logs)) if logs else float(np.log(10))
    valid_mean = float(np.mean(valid)) if valid else 1.0
    return {"noise_log": noise_log, "valid": valid_mean, "score": noise_log + valid_mean}


def technology(refs: list[ReferenceFrame]) -> tuple[bool, str]:
    """(triangulating, why): whether the frames show disparity steps or an emitter shadow."""
    steps = fit_terms.fit_quantization(refs, 1.0)[1]  # any baseline: only "seen or not" counts
    if steps.value is not None:
        return (
            True,
            "the depth levels widen with depth (disparity steps): triangulating presets only",
        )
    shadow = fit_terms.fit_baseline(refs)
    if shadow.value is not None:
        return True, "the frames show an emitter shadow: triangulating presets only"
    return False, "neither disparity steps nor an emitter shadow seen: every preset competes"


def choose_base(refs: list[ReferenceFrame], candidates: list[str] | None = None) -> BaseChoice:
    """The preset (of ``candidates``, default all but 'ideal', narrowed by ``technology``)
    whose simulation of ``refs`` is closest to them."""
    names = candidates or [n for n in preset_names() if n != "ideal"]
    triangulating, why = technology(refs)
    if triangulating:
        names = [n for n in names if get_preset(n).profile.baseline_m != 0] or names
    refs = refs[:CHOICE_FRAMES]
    samples = [noise_sample_pixels(r, CHOICE_SEED, CHOICE_SAMPLES) for r in refs]
    real = real_tables(refs, None, samples)
    scores = {n: preset_closeness(refs, get_preset(n).profile, real, samples) for n in names}
    ranked = dict(sorted(scores.items(), key=lambda kv: kv[1]["score"]))
    best = next(iter(ranked))
    return BaseChoice(best, get_preset(best).profile, ranked, "evidence", why)
