"""The gap metrics of ``sensors.gap`` between hand-made real and simulated pixel tables: a
Wasserstein distance of a known shift, valid-rate differences overall, by incidence, by edge
distance and by region, and the noise-spread bins against the issue-14 targets."""

from __future__ import annotations

import numpy as np
import pytest
from sensors.reference_frames import tables

from sim2real.sensors.gap import GapResult, ProfileGap, compare_tables


def shares(n: int, valid: float) -> np.ndarray:
    return np.arange(n) < round(valid * n)


def pair():
    """(real, simulated): reference residuals 0 vs +1 mm in two depth bins; region 0 (3000
    px) returning 90 % vs 80 %, region 1 (1000 px, under the 2000 a region needs) 50 % vs
    100 %; local noise of +-1 mm real vs +-1.2 mm (bin 10) and +-1.5 mm (bin 20) simulated."""
    z = np.repeat([0.55, 1.25], 500)
    region = np.repeat([0, 1], [3000, 1000])
    noise_z = np.repeat([1.05, 2.05], 400)
    real = tables(
        ref_z_m=z, ref_residual_m=np.zeros(1000),
        valid=np.concatenate([shares(3000, 0.9), shares(1000, 0.5)]), region=region,
        noise_z_m=noise_z, noise_residual_m=np.tile([-0.001, 0.001], 400),
    )  # fmt: skip
    sim = tables(
        ref_z_m=z, ref_residual_m=np.full(1000, 0.001),
        valid=np.concatenate([shares(3000, 0.8), np.ones(1000, bool)]), region=region,
        noise_z_m=noise_z,
        noise_residual_m=np.concatenate([np.tile([-0.0012, 0.0012], 200), np.tile([-0.0015, 0.0015], 200)]),
    )  # fmt: skip
    return real, sim


def test_metrics_by_hand():
    real, sim = pair()
    # bin 10 has 5000 usable real pixels (counted for the target), bin 20 only 1000
    m, by_depth, by_region = compare_tables(real, sim, {10: 5000, 20: 1000}, ["wall", "box"])
    # every residual moved by 1 mm: W1 = 1 mm, overall and in both depth bins
    assert m["w1_mm"] == pytest.approx(1.0)
    assert by_depth["0.5-0.6 m"]["w1_mm"] == pytest.approx(1.0)
    assert by_depth["1.2-1.3 m"]["w1_mm"] == pytest.approx(1.0)
    # valid: real (2700 + 500) / 4000 = 0.8, simulated (2400 + 1000) / 4000 = 0.85: 5 pp
    assert (m["valid_rate_real"], m["valid_rate_sim"]) == pytest.approx((0.8, 0.85))
    assert m["valid_rate_pp"] == pytest.approx(5.0)
    # all pixels at incidence 0 and 50 px from edges: one incidence bin, no edge profile
    assert m["valid_rate_by_incidence_pp"] == pytest.approx(5.0)
    assert np.isnan(m["edge_profile_pp"])
    # regions: only the wall has 2000 px: 90 % vs 80 %
    assert by_region == {
        "wall": {"valid_rate_real": 0.9, "valid_rate_sim": 0.8, "pp": pytest.approx(10.0),
                 "pixels": 3000}
    }  # fmt: skip
    assert m["valid_rate_region_pp_max"] == pytest.approx(10.0)
    # noise spread: bin 10 off by 20 % (within 25 %), bin 20 by 50 % (not counted: 1000 px)
    assert by_depth["1.0-1.1 m"]["noise_spread_rel"] == pytest.approx(0.2)
    assert m["noise_spread_rel_max"] == pytest.approx(0.5)
    assert m["noise_spread_rel_mean"] == pytest.approx(0.35)
    assert (m["noise_bins_counted"], m["noise_bins_within_25pct"]) == (1.0, 1.0)


def test_edge_profile_and_too_few_residuals():
    # 100 pixels at each distance 0..15 px from an edge: the real frame loses 50 % on the
    # edge, the simulation 30 %: |20| pp at distance 0, 0 beyond: mean 20 / 16 = 1.25 pp
    distance = np.repeat(np.arange(16.0), 100)
    real = tables(valid=np.concatenate([shares(100, 0.5), np.ones(1500, bool)]),
                  edge_distance_px=distance)  # fmt: skip
    sim = tables(valid=np.concatenate([shares(100, 0.7), np.ones(1500, bool)]),
                 edge_distance_px=distance)  # fmt: skip
    m, _, _ = compare_tables(real, sim)
    assert m["edge_profile_pp"] == pytest.approx(1.25)
    assert "w1_mm" not in m  # no reference residuals (fewer than 200)
    assert np.isnan(m["noise_spread_rel_max"]) and np.isnan(m["noise_bins_within_25pct"])


def test_targets_and_table():
    real, sim = pair()
    m, _, _ = compare_tables(real, sim, {10: 5000, 20: 1000})
    gap = ProfileGap("calibrated", m, judged_on="frame_1")
    # noise: 1 of 1 counted bin within 25 % (>= 0.8); regions: 10 pp > 5
    assert gap.targets_met() == {"noise_bins_within_25pct": True, "valid_rate_region_pp_max": False}
    # both noise bins counted (5000 px each): 1 of 2 within 25 %, under the 0.8 share
    both, _, _ = compare_tables(real, sim, {10: 5000, 20: 5000})
    assert both["noise_bins_within_25pct"] == 0.5
    assert not ProfileGap("both", both).targets_met()["noise_bins_within_25pct"]
    assert ProfileGap("none", {}).targets_met() == {
        "noise_bins_within_25pct": False, "valid_rate_region_pp_max": False,
    }  # fmt: skip
    rows = GapResult(real, [gap], {}).table()
    assert rows[0][:3] == ["profile", "judged on", "w1_mm"]
    assert rows[1][:4] == ["calibrated", "frame_1", "1.000", "5.000"]
