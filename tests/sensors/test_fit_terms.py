"""The single-term estimators of ``sensors.fit_terms`` on hand-made frames whose answer is
known: a box in front of a wall with a dark band of known width beside it (the emitter
baseline), depth levels of known spacing (output unit and disparity step), dropout rates that
rise with incidence or near edges, blobs of known area, a sinusoidal warp of known amplitude
and period."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sensors.reference_frames import reference

from sim2real.sensors import fit_terms as ft

FX = 500.0


# --- emitter baseline from shadow bands -----------------------------------------------------


def box_before_wall(shadow_px: int, rows: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """(frame, wall-only ideal depth): a wall at 1.0 m and a box at 0.5 m in columns 60-89,
    with the ``shadow_px`` wall columns just left of the box returning nothing."""
    depth = np.full((rows, 120), 1.0, np.float32)
    depth[:, 60:90] = 0.5
    dark = depth.copy()
    dark[:, 60 - shadow_px : 60] = 0.0
    return dark, depth


def test_predicted_shadow_is_the_band_that_the_disparity_jump_hides():
    # an emitter at B = 4.15 cm (+x) hides the wall over fx B (1/0.5 - 1/1.0) = 20.75 px left
    # of the box's edge: the 20 whole columns 40..59 (their centres lie within 20.75 px)
    frame, _ = box_before_wall(shadow_px=20)
    ref = reference(frame, fx=FX)
    shadow = ft.predicted_shadow(ref, 0.0415)
    expected = np.zeros(frame.shape, bool)
    expected[:, 40:60] = True
    assert np.array_equal(shadow, expected)
    # on the other side for an emitter on -x: 20.75 px right of the box's right edge (90..109)
    mirrored = ft.predicted_shadow(ref, -0.0415)
    assert np.flatnonzero(mirrored[0]).tolist() == list(range(90, 110))
    assert not ft.predicted_shadow(ref, 0.0).any()


def test_baseline_is_the_widest_whose_predicted_band_is_dark():
    # a 20 px dark band: fx B (1/0.5 - 1/1) = 500 B covers exactly 20 whole columns for
    # B in (0.040, 0.042] m, and 21 from 0.043 on: the 1 mm search ends at 0.042 m
    frame, _ = box_before_wall(shadow_px=20)
    est = ft.fit_baseline([reference(frame, fx=FX)])
    assert est.value == pytest.approx(0.042, abs=1e-9)
    assert est.pixels == 20 * 40  # every dark pixel explained
    assert est.std == 0.005 and est.supported
    # the same scene mirrored (emitter on the other side): the baseline's sign flips
    mirrored = ft.fit_baseline([reference(frame[:, ::-1], fx=FX)])
    assert mirrored.value == pytest.approx(-0.042, abs=1e-9)


def test_edges_without_dark_bands_say_no_shadow_and_no_edges_say_nothing():
    _, no_band = box_before_wall(shadow_px=0)
    est = ft.fit_baseline([reference(no_band, fx=FX)])
    # the 5 cm probe predicts 500 * 0.05 = 25 -> 24 whole columns x 40 rows on each side = 960
    assert est.value is None and est.supported
    assert est.pixels == 960
    assert "no emitter shadow" in est.reason
    flat = ft.fit_baseline([reference(np.full((40, 120), 1.0, np.float32), fx=FX)])
    assert flat.value is None and not flat.supported  # nothing can cast a shadow


def test_withheld_pixels_are_not_read_by_the_baseline_search():
    # the same 20 px band, but its pixels withheld (a spatial hold-out): nothing dark to
    # explain any more, only the edges, so no shadow is seen
    frame, _ = box_before_wall(shadow_px=20)
    withheld = np.zeros(frame.shape, bool)
    withheld[:, 30:60] = True
    est = ft.fit_baseline([reference(frame, fx=FX, withheld=withheld)])
    assert est.value is None


# --- depth levels: output unit and disparity step -------------------------------------------


def levelled_frame(k_per_m: float = 0.004) -> np.ndarray:
    """A frame whose depths sit on levels: 1 mm apart in 0.31-0.39 m (the output unit), and
    k z^2 apart around 1.05, 1.55 and 2.05 m (disparity quantization), each 10 cm bin with
    over 2000 pixels and every level repeated; plus 60 stray depths seen twice each, halfway
    between the 1 mm levels (noise, not levels: a level is seen at least 3 times)."""
    values = [
        np.repeat(0.31 + 0.001 * np.arange(80), 30),
        np.repeat(0.3105 + 0.001 * np.arange(60), 2),
    ]
    for zc in (1.05, 1.55, 2.05):
        gap = k_per_m * zc**2
        m = int(0.049 // gap)
        levels = zc + gap * np.arange(-m, m + 1)  # centred on zc: median level = zc
        values.append(np.repeat(levels, 2100 // levels.size + 1))
    z = np.concatenate(values)
    flat = np.zeros(-(-z.size // 100) * 100)
    flat[: z.size] = z
    return flat.reshape(-1, 100)


def test_quantization_finds_the_unit_and_the_disparity_step():
    # unit: the 1 mm spacing of the near bin; step: k fx |B| = 0.004 * 500 * 0.05 = 0.1 px
    ref = reference(levelled_frame(), fx=FX)
    unit, step = ft.fit_quantization([ref], baseline_m=-0.05)
    assert unit.value == pytest.approx(0.001, rel=1e-3)
    assert step.value == pytest.approx(0.1, rel=1e-3)
    assert step.std == pytest.approx(0.0, abs=1e-4)  # exact k z^2 in every coarse bin
    assert unit.pixels == int((ref.depth_m > 0).sum())


def test_disparity_steps_without_a_baseline_are_seen_but_not_scaled():
    ref = reference(levelled_frame(), fx=FX)
    unit, step = ft.fit_quantization([ref], baseline_m=None)
    assert unit.value == pytest.approx(0.001, rel=1e-3)
    assert step.value is None and not step.supported
    assert "k = 0.004/m" in step.reason


def test_levels_that_do_not_widen_give_no_disparity_step():
    # the same 1 mm levels at every depth: a time-of-flight sensor's output unit, no steps
    z = np.concatenate([np.repeat(zc + 0.001 * np.arange(-40, 40), 30) for zc in (0.35, 1.05)])
    unit, step = ft.fit_quantization([reference(z.reshape(-1, 80), fx=FX)], 0.05)
    assert unit.value == pytest.approx(0.001, rel=1e-3)
    assert step.value is None and step.supported
    assert "do not widen" in step.reason


def test_too_few_returns_per_bin_support_no_quantization():
    # 1999 pixels in one 10 cm bin: below the 2000 a bin needs
    z = np.full((1, 1999), 1.05, np.float32)
    unit, step = ft.fit_quantization([reference(z, fx=FX)], 0.05)
    assert unit.value is None and not unit.supported and not step.supported


# --- axial noise formula --------------------------------------------------------------------


def test_axial_sigma_formula_by_hand():
    # a + b (z - c)^2 + d / sqrt(z) theta^2 / (pi/2 - theta)^2 with (a, b, c, d) =
    # (0.001, 0.002, 0.5, 0.0001): at z = 1 m, 45 deg: 0.001 + 0.0005 + 0.0001 * 1 = 0.0016 m;
    # at z = 4 m, 45 deg: 0.001 + 0.002 * 12.25 + 0.0001 / 2 = 0.02555 m
    p = np.array([0.001, 0.002, 0.5, 0.0001])
    sigma = ft.axial_sigma_formula(p, np.array([1.0, 4.0]), np.full(2, math.pi / 4))
    assert sigma == pytest.approx([0.0016, 0.02555], rel=1e-12)
    # grazing rays are capped at 89 deg (the term would be infinite at 90): at z = 1 m,
    # 0.0015 + 0.0001 * 89^2 / 1^2 = 0.7936 m
    capped = ft.axial_sigma_formula(p, np.array([1.0]), np.array([math.pi / 2]))
    assert capped[0] == pytest.approx(0.0015 + 0.0001 * 89**2, rel=1e-9)


def test_axial_fit_recovers_the_parameters_that_made_the_sigmas():
    truth = np.array([0.0012, 0.0019, 0.4, 0.0001])
    z, theta = (
        g.ravel() for g in np.meshgrid(np.linspace(0.5, 3.5, 7), np.radians([0, 30, 60, 75]))
    )
    sigma = ft.axial_sigma_formula(truth, z, theta)
    start = np.array([0.003, 0.0005, 1.0, 0.001])
    fitted = ft.fit_axial_formula(z, theta, sigma, np.full(z.size, 5000), start, np.ones(4, bool))
    assert fitted == pytest.approx(truth, rel=1e-4)


def test_axial_fit_weighs_relative_errors_by_capped_pixels_and_gain():
    # only a free (b = c = d = 0): a constant fitted to sigma 1 mm (10^6 px) and 2 mm (1000 px).
    # Weights sqrt(min(n, 1000)) / sigma make the two bins count as 1000 px each on a
    # relative scale: a = (1/s1 + 1/s2) / (1/s1^2 + 1/s2^2) = 1500 / 1.25e6 = 1.2 mm; a gain
    # of 2 on the second bin weighs it 4 x: (1000 + 4 * 500) / (1e6 + 4 * 2.5e5) = 1.5 mm
    z, theta = np.array([1.0, 2.0]), np.zeros(2)
    sigma, pixels = np.array([0.001, 0.002]), np.array([1_000_000, 1000])
    start, free = np.array([0.005, 0.0, 0.0, 0.0]), np.array([True, False, False, False])
    plain = ft.fit_axial_formula(z, theta, sigma, pixels, start, free)
    assert plain[0] == pytest.approx(0.0012, rel=1e-6)
    gained = ft.fit_axial_formula(z, theta, sigma, pixels, start, free, gain=np.array([1, 2]))
    assert gained[0] == pytest.approx(0.0015, rel=1e-6)


def test_axial_fit_keeps_the_fixed_parameters_at_their_start():
    # c held at its true 0.4, the others free: they come back, c is untouched
    truth = np.array([0.0012, 0.0019, 0.4, 0.0001])
    z, theta = (g.ravel() for g in np.meshgrid(np.linspace(0.5, 3.5, 7), np.radians([0, 45, 70])))
    sigma = ft.axial_sigma_formula(truth, z, theta)
    start = np.array([0.003, 0.0005, 0.4, 0.001])
    free = np.array([True, True, False, True])
    fitted = ft.fit_axial_formula(z, theta, sigma, np.full(z.size, 300), start, free)
    assert fitted[2] == 0.4
    assert fitted == pytest.approx(truth, rel=1e-4)


# --- dropouts -------------------------------------------------------------------------------


def _fraction_invalid(groups: list[tuple[float, int, float]]) -> tuple[np.ndarray, np.ndarray]:
    """(value, count, invalid share) per group -> (values, invalid) with exactly
    round(share * count) of each group invalid."""
    values, invalid = [], []
    for value, count, share in groups:
        values.append(np.full(count, value))
        bad = np.zeros(count, bool)
        bad[: round(share * count)] = True
        invalid.append(bad)
    return np.concatenate(values), np.concatenate(invalid)


def test_incidence_ramp_found_where_it_was_put():
    # dropout p0 = 0.1 everywhere, plus the ramp clip((theta - 50) / (79 - 50), 0, 1) of the
    # rest: observed = p0 + (1 - p0) ramp in each 1-degree bin (evaluated at the bin centre)
    p0 = 0.1
    groups = []
    for k in range(90):
        ramp = min(max((k + 0.5 - 50) / 29, 0.0), 1.0)
        groups.append((k + 0.5, 1000, p0 + (1 - p0) * ramp))
    theta, invalid = _fraction_invalid(groups)
    est = ft.fit_incidence_ramp(theta, invalid, p0)
    assert est.value == {"start_deg": 50.0, "end_deg": 79.0}
    assert est.pixels == 45 * 1000  # the bins beyond 45 deg


def test_no_rise_with_incidence_and_too_few_steep_pixels():
    theta, invalid = _fraction_invalid([(k + 0.5, 1000, 0.1) for k in range(90)])
    flat = ft.fit_incidence_ramp(theta, invalid, 0.1)
    assert flat.value is None and "no rise" in flat.reason
    shallow, bad = _fraction_invalid([(10.0, 5000, 0.1), (50.0, 499, 0.9)])
    few = ft.fit_incidence_ramp(shallow, bad, 0.1)
    assert few.value is None and few.pixels == 499 and "fewer than 500" in few.reason


def test_edge_dropout_band_width_and_probability():
    # p0 = 0.05; on the edge 80 % of the rest drop too (p = 0.05 + 0.95 * 0.8 = 0.81), at 1..3 px
    # 40 % (p = 0.43); from 4 px on, p0 only: width 3, mean excess (0.8 + 3 * 0.4) / 4 = 0.5
    p0 = 0.05
    groups = [(0.0, 1000, 0.81)] + [(float(d), 1000, 0.43 if d <= 3 else p0) for d in range(1, 20)]
    distance, invalid = _fraction_invalid(groups)
    est = ft.fit_edge_dropout(distance, invalid, p0)
    assert est.value["width_px"] == 3
    assert est.value["probability"] == pytest.approx(0.5, abs=1e-9)
    assert est.pixels == 4 * 1000


def test_no_edge_excess_is_absent_with_data_and_unsupported_without():
    distance, invalid = _fraction_invalid([(float(d), 1000, 0.05) for d in range(20)])
    est = ft.fit_edge_dropout(distance, invalid, 0.05)
    assert est.value is None and est.supported and est.pixels == 1000
    few, bad = _fraction_invalid([(0.0, 99, 0.5), (1.0, 1000, 0.05)])
    sparse = ft.fit_edge_dropout(few, bad, 0.05)
    assert sparse.value is None and not sparse.supported  # 99 < 100 pixels at the edge


def test_random_dropout_blobs_rate_and_area():
    # frame A: a 2x2 hole and a 1-pixel hole inside its mask, one hole outside it (not
    # counted); frame B: one 3-pixel hole. Rate (4 + 1 + 3) / (400 + 100) = 0.016; mean blob
    # area (4 + 1 + 3) / 3 blobs
    a = np.full((20, 20), 1.0, np.float32)
    a[5:7, 5:7] = 0
    a[12, 12] = 0
    a[0, 19] = 0
    mask_a = np.ones((20, 20), bool)
    mask_a[0, 19] = False
    b = np.full((10, 10), 1.0, np.float32)
    b[3, 2:5] = 0
    rate, area, total = ft.random_dropout_blobs(
        [reference(a), reference(b)], [mask_a, np.ones((10, 10), bool)]
    )
    assert rate == pytest.approx(8 / 499)
    assert area == pytest.approx(8 / 3)
    assert total == 499


# --- slow warp ------------------------------------------------------------------------------


def test_distortion_of_a_sinusoidal_warp():
    # depth = z (1 + bias + A cos(2 pi u / L)), z = 2 m, bias 0.5 % (the region's fit absorbs
    # it), A = 0.2 %, L = 120 px, one plane filling 60 x 270 px: the 31 px window keeps
    # sin(31 pi / L) / (31 sin(pi / L)) = 0.8939 of the wave, whose std over whole periods (the
    # 240 interior columns) is A / sqrt(2): 0.001264; the autocorrelation cos(2 pi lag / L)
    # falls below 1/e between lag 22 (0.407) and 23 (0.359)
    L, A = 120, 0.002
    u = np.arange(270)
    ref_depth = np.full((60, 270), 2.0)
    depth = ref_depth * (1.005 + A * np.cos(2 * np.pi * u / L))[None, :]
    est = ft.fit_distortion([reference(depth, ref_depth)])
    gain = math.sin(31 * math.pi / L) / (31 * math.sin(math.pi / L))
    assert est.value["relative_std"] == pytest.approx(A * gain / math.sqrt(2), rel=1e-3)
    assert est.value["correlation_px"] == 23.0
    assert est.pixels == 30 * 240  # the interior after a 15 px erosion


def test_distortion_needs_a_large_region():
    small = np.ones((40, 60))  # 10 x 30 interior pixels < 5000
    est = ft.fit_distortion([reference(small, small)])
    assert est.value is None and not est.supported
