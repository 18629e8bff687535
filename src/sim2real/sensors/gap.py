"""The sim-to-real gap of a depth sensor (``sim2real depth gap``): the same reference geometry
simulated with each profile (several seeds), compared with the real frames on the statistics
of ``statistics.py``.

Metrics (lower is better, 0 = indistinguishable):
- ``w1_mm``: Wasserstein-1 distance between the distributions of depth - reference, overall
  (pooled) and per 10 cm depth bin;
- ``valid_rate_pp``: |simulated - real| valid-pixel rate on the regions [percentage points],
  overall and per incidence bin (``valid_rate_by_incidence_pp``, their mean);
- ``edge_profile_pp``: mean |simulated - real| invalid rate at 0..15 px from an edge;
- ``noise_spread_rel``: per 10 cm depth bin, |simulated / real - 1| of the local-noise spread
  (depth minus its 9×9 median, away from edges), and its worst bin (``noise_spread_rel_max``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.stats import wasserstein_distance

from sim2real.sensors import fit_terms
from sim2real.sensors.profile import NoiseProfile
from sim2real.sensors.reference_frame import ReferenceFrame
from sim2real.sensors.simulate import simulated_tables
from sim2real.sensors.statistics import (
    PixelTables,
    noise_sample_pixels,
    noise_spread_by_bin,
    pixel_tables,
    reference_residuals_by_bin,
    valid_rates,
)

GAP_SEEDS = (0, 1, 2)
MIN_W1_PIXELS = 200


@dataclass
class ProfileGap:
    profile: str
    metrics: dict[str, float]
    by_depth: dict[str, dict[str, float]] = field(default_factory=dict)
    """per depth-bin metrics, keyed by the bin's range ('0.8-0.9 m')."""
    simulated: PixelTables | None = None


@dataclass
class GapResult:
    real: PixelTables
    gaps: list[ProfileGap]
    real_summary: dict[str, float]

    def table(self) -> list[list[str]]:
        """Rows (profile, metric values...) for printing."""
        names = [
            "w1_mm",
            "valid_rate_pp",
            "valid_rate_by_incidence_pp",
            "edge_profile_pp",
            "noise_spread_rel_max",
        ]
        rows = [["profile", *names]]
        for g in self.gaps:
            rows.append([g.profile, *(f"{g.metrics.get(n, float('nan')):.3f}" for n in names)])
        return rows

    def to_json(self) -> dict:
        return {
            "real": self.real_summary,
            "profiles": {
                g.profile: {"metrics": g.metrics, "by_depth": g.by_depth} for g in self.gaps
            },
            "definitions": __doc__,
        }


def _bin_label(b: int) -> str:
    return f"{b / 10:.1f}-{(b + 1) / 10:.1f} m"


def compare_tables(
    real: PixelTables, sim: PixelTables
) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """The gap metrics of a simulation against the real frames (see the module doc)."""
    metrics: dict[str, float] = {}
    by_depth: dict[str, dict[str, float]] = {}
    real_res, sim_res = reference_residuals_by_bin(real), reference_residuals_by_bin(sim)
    r_all = real.ref_residual_m[real.ref_residual_m == real.ref_residual_m]
    if r_all.size >= MIN_W1_PIXELS and sim.ref_residual_m.size >= MIN_W1_PIXELS:
        metrics["w1_mm"] = 1e3 * wasserstein_distance(real.ref_residual_m, sim.ref_residual_m)
    for b, values in real_res.items():
        if values.size >= MIN_W1_PIXELS and b in sim_res and sim_res[b].size >= MIN_W1_PIXELS:
            by_depth.setdefault(_bin_label(b), {})["w1_mm"] = 1e3 * wasserstein_distance(
                values, sim_res[b]
            )
    rv, sv = valid_rates(real), valid_rates(sim)
    metrics["valid_rate_real"] = rv["overall"][0]
    metrics["valid_rate_sim"] = sv["overall"][0]
    metrics["valid_rate_pp"] = 100 * abs(sv["overall"][0] - rv["overall"][0])
    inc = [
        100 * abs(sv["incidence"][b][0] - r[0])
        for b, r in rv["incidence"].items()
        if b in sv["incidence"]
    ]
    metrics["valid_rate_by_incidence_pp"] = float(np.mean(inc)) if inc else float("nan")
    edge = [100 * abs(sv["edge"][d][0] - r[0]) for d, r in rv["edge"].items() if d in sv["edge"]]
    metrics["edge_profile_pp"] = float(np.mean(edge)) if edge else float("nan")
    rs, ss = noise_spread_by_bin(real), noise_spread_by_bin(sim)
    rel = []
    for (b,), (spread, n) in rs.items():
        if (b,) in ss and spread > 0:
            err = abs(ss[(b,)][0] / spread - 1)
            rel.append(err)
            entry = by_depth.setdefault(_bin_label(b), {})
            entry.update(
                noise_spread_real_mm=1e3 * spread,
                noise_spread_sim_mm=1e3 * ss[(b,)][0],
                noise_spread_rel=err,
                pixels=n,
            )
    metrics["noise_spread_rel_max"] = float(max(rel)) if rel else float("nan")
    metrics["noise_spread_rel_mean"] = float(np.mean(rel)) if rel else float("nan")
    return metrics, by_depth


def measure_gap(
    refs: list[ReferenceFrame],
    profiles: dict[str, NoiseProfile],
    seeds: tuple[int, ...] = GAP_SEEDS,
) -> GapResult:
    """Simulate ``refs``' geometry with each profile and compare with the real frames."""
    samples = [noise_sample_pixels(r) for r in refs]
    offsets = np.cumsum([0] + [len(r.regions) for r in refs])
    # every pixel of the regions counts, the emitter's shadow included: a profile that does
    # not model it pays for it in the valid rate
    real = PixelTables.concatenate(
        [
            pixel_tables(r, r.depth_m, int(o), None, smp)
            for r, o, smp in zip(refs, offsets[:-1], samples, strict=True)
        ]
    )
    gaps = []
    for name, profile in profiles.items():
        shadows = [fit_terms.predicted_shadow(r, profile.shadow_baseline_m) for r in refs]
        sim = simulated_tables(refs, profile, shadows, samples, seeds, exclude_shadow=False)
        metrics, by_depth = compare_tables(real, sim)
        gaps.append(ProfileGap(name, metrics, by_depth, sim))
    summary = {
        "frames": len(refs),
        "region_pixels": int(real.valid.size),
        "valid_rate": float(real.valid.mean()),
    }
    return GapResult(real, gaps, summary)
