"""The frame statistics of ``sensors.statistics`` on hand-made pixels: a trimmed spread of
consecutive integers, local medians of windows whose sorted values are known, binning edges,
weighted rates and per-bin tables built row by row."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sensors.reference_frames import reference, tables

from sim2real.sensors import statistics as st


def test_trimmed_std_drops_the_outer_percent():
    # 0..100: the 1st and 99th percentiles are 1 and 99, leaving the 99 integers 1..99, whose
    # std is sqrt((99^2 - 1) / 12) = 28.5774; a huge outlier replacing 100 changes nothing
    values = np.arange(101, dtype=float)
    assert st.trimmed_std(values) == pytest.approx(math.sqrt((99**2 - 1) / 12), rel=1e-12)
    values[-1] = 1e6
    assert st.trimmed_std(values) == pytest.approx(math.sqrt((99**2 - 1) / 12), rel=1e-12)
    assert math.isnan(st.trimmed_std(np.array([1.0])))


def test_local_median_residual_is_against_the_median_of_the_returns():
    # the 9x9 window around (10, 10): 40 pixels at 1.0 m, 40 at 1.1 m (the centre one of them)
    # and one without return. Median of the 80 returns: (1.0 + 1.1) / 2, residual 0.05 m
    # (counting the hole as 0 would give 1.0 and 0.1; the upper middle alone 1.1 and 0)
    depth = np.full((21, 21), 1.1, np.float32)
    depth[6:15, 6:10] = 1.0  # 36 pixels
    depth[6:10, 10] = 1.0  # 4 more
    depth[14, 14] = 0.0  # a hole among the 1.1 m
    residual, ok = st.local_median_residuals(depth, np.array([10]), np.array([10]))
    assert ok.tolist() == [True]
    assert residual.dtype == np.float32
    assert residual[0] == pytest.approx(0.05, abs=1e-6)


def first_of_window(n: int) -> np.ndarray:
    """(9, 9) bool: the first ``n`` pixels of a 9x9 window in raster order."""
    return (np.arange(81) < n).reshape(9, 9)


def test_local_median_skips_holes_and_windows_mostly_empty():
    # (5, 5) has no return; (15, 15)'s window holds 40 returns of 81 (< 41, a majority);
    # (15, 5)'s window 41: it gets a residual, 1.02 - 1.0 (the median of 40 x 1.0 and 1.02)
    depth = np.full((21, 21), 1.0, np.float32)
    depth[5, 5] = 0.0
    depth[11:20, 11:20][first_of_window(42)] = 0.0  # the first 42 (raster order) of the window
    depth[15, 15] = 1.0  # ... but the centre (the 41st): 41 holes, 40 returns
    depth[11:20, 1:10][first_of_window(40)] = 0.0  # 41 returns left around (15, 5)
    depth[15, 5] = 1.02
    v, u = np.array([5, 15, 15]), np.array([5, 15, 5])
    residual, ok = st.local_median_residuals(depth, v, u)
    assert ok.tolist() == [False, False, True]
    assert residual == pytest.approx([0.02], abs=1e-6)


def test_depth_and_incidence_bins():
    # 10 cm depth bins: [0.3, 0.4) is bin 3; incidence bins of 15 deg, 90 deg in the last one
    z = np.array([0.05, 0.35, 0.99, 1.05, 2.549], np.float32)
    assert st.depth_bins(z).tolist() == [0, 3, 9, 10, 25]
    theta = np.radians([0.0, 14.9, 15.1, 44.0, 46.0, 89.0, 90.0])
    assert st.incidence_bins(theta).tolist() == [0, 0, 1, 2, 3, 5, 5]


def test_rate_with_and_without_weights():
    valid = np.array([True, False, True])
    assert st.rate(valid, None) == (pytest.approx(2 / 3), 3)
    # multiplicities 1, 2, 3: 4 returns of 6
    assert st.rate(valid, np.array([1, 2, 3])) == (pytest.approx(4 / 6), 6)
    r, n = st.rate(np.array([], bool), None)
    assert math.isnan(r) and n == 0


def test_noise_spread_by_depth_bin_and_region_weights():
    # bin 10 (1.0-1.1 m): residuals -100..100 um (201 values); trimmed to -98..98 um, the std
    # of 197 consecutive integers is sqrt((197^2 - 1) / 12) um. Bin 20: 150 values < 200 px
    r10 = np.arange(-100, 101) * 1e-6
    t = tables(
        noise_z_m=np.concatenate([np.full(201, 1.05), np.full(150, 2.05)]),
        noise_residual_m=np.concatenate([r10, np.zeros(150)]),
        noise_region=np.concatenate([np.zeros(201, np.int64), np.ones(150, np.int64)]),
    )
    out = st.noise_spread_by_bin(t)
    assert list(out) == [(10,)]
    spread, n = out[(10,)]
    assert spread == pytest.approx(math.sqrt((197**2 - 1) / 12) * 1e-6, rel=1e-9)
    assert n == 201
    # a bootstrap drawing region 1 twice and region 0 never: bin 10 is empty, bin 20 has 300
    weighted = st.noise_spread_by_bin(t, weights_by_region=np.array([0, 2]))
    assert list(weighted) == [(20,)] and weighted[(20,)] == (0.0, 300)


def test_noise_spread_split_by_incidence():
    t = tables(
        noise_residual_m=np.tile([-0.001, 0.001], 200),
        noise_theta_rad=np.radians(np.repeat([10.0, 50.0], 200)),
    )
    out = st.noise_spread_by_bin(t, by_incidence=True)
    # depth bin 10 with incidence bins 0 (0-15 deg) and 3 (45-60 deg), each +-1 mm: std 1 mm
    assert sorted(out) == [(10, 0), (10, 3)]
    assert out[(10, 3)] == (pytest.approx(0.001), 200)


def test_valid_rates_overall_by_incidence_and_edge_distance():
    # 1000 far pixels at 10 deg, 90 % returning; 1000 far at 70 deg, 50 %; 100 pixels at each
    # edge distance 0..15 px (10 deg), returning 10 % at 0 px and all beyond; 100 more on the
    # edge at 70 deg, none returning (grazing: left out of the edge profile); 100 shadow pixels
    # (excluded from everything), none returning
    far10 = np.arange(1000) < 900
    far70 = np.arange(1000) < 500
    edge = np.concatenate([np.arange(100) < 10] + [np.ones(100, bool)] * 15)
    valid = np.concatenate([far10, far70, edge, np.zeros(200, bool)])
    theta_deg = [np.full(1000, 10.0), np.full(1000, 70.0), np.full(1600, 10.0)]
    theta = np.radians(np.concatenate([*theta_deg, np.full(100, 70.0), np.full(100, 10.0)]))
    distance = np.concatenate(
        [np.full(2000, 40.0), np.repeat(np.arange(16.0), 100), np.zeros(100), np.full(100, 40.0)]
    )
    excluded = np.zeros(valid.size, bool)
    excluded[-100:] = True
    t = tables(valid=valid, theta_rad=theta, edge_distance_px=distance, excluded=excluded)
    out = st.valid_rates(t)
    returned = 900 + 500 + 10 + 1500
    assert out["overall"] == (pytest.approx(returned / 3700), 3700)
    assert out["incidence"] == {0: (pytest.approx(0.9), 1000), 4: (pytest.approx(0.5), 1000)}
    assert out["edge"][0] == (pytest.approx(0.1), 100)
    assert all(out["edge"][d] == (1.0, 100) for d in range(1, 16))


def test_valid_rate_by_region_counts_every_pixel():
    # region 0: 3 of 4 return; region 2: 1 of 2, one of them in the shadow (counted here)
    t = tables(
        valid=np.array([True, True, False, True, True, False]),
        region=np.array([0, 0, 0, 0, 2, 2]),
        excluded=np.array([False, False, False, False, False, True]),
    )
    assert st.valid_rate_by_region(t) == {0: (0.75, 4), 2: (0.5, 2)}
    assert st.valid_rate_by_region(t, min_pixels=3) == {0: (0.75, 4)}


def test_reference_residuals_by_bin():
    t = tables(ref_z_m=np.array([0.55, 0.58, 1.21]), ref_residual_m=np.array([0.001, -0.002, 0.01]))
    out = st.reference_residuals_by_bin(t)
    assert sorted(out) == [5, 12]
    assert out[5].tolist() == [0.001, -0.002] and out[12].tolist() == [0.01]


def test_concatenate_keeps_every_column_in_order():
    a = tables(valid=np.array([True]), noise_residual_m=np.array([0.1]))
    b = tables(valid=np.array([False, True]), noise_residual_m=np.array([0.2, 0.3]))
    c = st.PixelTables.concatenate([a, b])
    assert c.valid.tolist() == [True, False, True]
    assert c.noise_residual_m.tolist() == [0.1, 0.2, 0.3]
    assert c.region.size == 3 and c.noise_region.size == 3


def two_planes(depth_m: np.ndarray | None = None):
    """A 40 x 60 frame: plane 0 at 1.05 m in columns 0-29, plane 1 at 2.05 m in 30-59; the
    interior (whole 9x9 window in one plane, off the border) is 32 x 22 px per plane."""
    ref = np.full((40, 60), 1.05, np.float32)
    ref[:, 30:] = 2.05
    region = np.zeros((40, 60), np.int32)
    region[:, 30:] = 1
    return reference(ref if depth_m is None else depth_m, ref, region)


def test_noise_sample_pixels_is_a_fixed_subset_of_the_interior():
    ref = two_planes()
    assert int(ref.interior.sum()) == 2 * 32 * 22
    v, u = st.noise_sample_pixels(ref)
    assert v.size == 2 * 32 * 22  # under the limit: every interior pixel
    v, u = st.noise_sample_pixels(ref, seed=3, limit=100)
    assert v.size == 100 and ref.interior[v, u].all()
    assert np.all(np.diff(v * 60 + u) > 0)  # in raster order, no repeat
    v2, u2 = st.noise_sample_pixels(ref, seed=3, limit=100)
    assert np.array_equal(v, v2) and np.array_equal(u, u2)


def test_pixel_tables_of_a_frame_against_its_reference():
    # measured = reference + 1 mm on plane 1, a hole at (20, 10) on plane 0; pixels within
    # 3 px of an edge (columns 29, 30 at 0 and 1 px, by hand) leave the reference residuals
    ref = two_planes()
    depth = ref.ref_depth_m.copy()
    depth[:, 30:] += 0.001
    depth[20, 10] = 0.0
    distance = np.abs(np.arange(60) - 29.5)[None, :].repeat(40, axis=0) - 0.5
    ref.edge_distance_px[:] = distance
    excluded = np.zeros((40, 60), bool)
    excluded[0, :5] = True
    t = st.pixel_tables(ref, depth, region_offset=10, excluded=excluded)
    # noise: every interior pixel but the hole, the flat planes leave residual 0
    assert t.noise_residual_m.size == 2 * 32 * 22 - 1
    assert np.allclose(t.noise_residual_m, 0, atol=1e-6)
    assert set(t.noise_region.tolist()) == {10, 11}
    # reference residual: 0 on plane 0 and 1 mm on plane 1, at distances > 3 px and returns
    far = distance > 3
    assert t.ref_residual_m.size == int(far.sum()) - 1
    assert np.allclose(t.ref_residual_m[t.ref_region == 11], 0.001, atol=1e-6)
    assert np.allclose(t.ref_residual_m[t.ref_region == 10], 0.0, atol=1e-6)
    # region pixels: all 2400, one not returning, 5 excluded
    assert t.valid.size == 2400 and int((~t.valid).sum()) == 1
    assert int(t.excluded.sum()) == 5


def test_noise_pixels_by_bin_counts_the_usable_interior():
    # plane 0 (bin 10) loses 41 pixels of one 9x9 block to no return (its first 42 but its
    # centre (14, 9), whose window then holds 40 returns, one short of a majority): the
    # interior pixels without a return or with < 41 in their window are not usable; the count
    # matches the pixels local_median_residuals gives a residual
    ref = two_planes()
    depth = ref.ref_depth_m.copy()
    depth[10:19, 5:14][first_of_window(42)] = 0.0
    depth[14, 9] = 1.05
    counts = st.noise_pixels_by_bin(ref, depth)
    v, u = np.nonzero(ref.interior)
    _, ok = st.local_median_residuals(depth, v, u)
    on0 = ref.region_id[v, u] == 0
    assert counts[20] == 32 * 22  # plane 1 untouched
    assert counts[10] == int(ok[on0].sum()) < 32 * 22
