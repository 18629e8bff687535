"""The linearized block bootstrap (``sysid.uncertainty``) on a problem where one Gauss-Newton
step is the exact refit: each segment's residual is x - y_s (a mean), so a resample's x is the
mean of the drawn segments' y, whose bootstrap spread is known in closed form."""

from __future__ import annotations

import numpy as np
import pytest

from sim2real.params.space import Param, ParamSpace
from sim2real.sysid.identifiability import Identifiability, Sensitivity
from sim2real.sysid.uncertainty import segment_bootstrap

S = 40
Y = 0.5 + 0.1 * np.random.default_rng(7).standard_normal(S)
"""Each segment's datum, in unit coordinates of the first parameter."""


def space() -> ParamSpace:
    """mass_kg free on [0, 10] (value = 10 u), arm_m fixed at 0.3, damping free on [0, 2]."""
    return ParamSpace(
        params=[
            Param(name="mass_kg", target="body.mass:a", nominal=5.0, bounds=(0.0, 10.0)),
            Param(name="arm_m", target="body.com_z:a", nominal=0.3, bounds=(0.3, 0.3)),
            Param(name="damping", target="joint.damping:j", nominal=1.0, bounds=(0.0, 2.0)),
        ]
    )


def mean_problem(y: np.ndarray = Y, block: np.ndarray | None = None, ok=None, w: float = 1.0):
    """Sensitivity of r_s = (x0 - y_s, 0) at the least-squares optimum x0 = mean(y) (of the
    segments that did not diverge), damping's unit coordinate at 0.25 and no residual seeing it:
    jac (S, 1, 2) = [1, 0]."""
    ok = np.ones(len(y), bool) if ok is None else ok
    x = np.array([y[ok].mean(), 0.25])
    r = (x[0] - y)[:, None]
    jac = np.zeros((len(y), 1, 2))
    jac[:, 0, 0] = 1.0
    block = np.arange(len(y)) if block is None else block
    return Sensitivity(x, jac, r, np.full_like(r, w), r, block, ok)


def identified_first() -> Identifiability:
    """Direction 0 (mass) identified, direction 1 (damping) not."""
    return Identifiability(
        ["mass_kg", "damping"], np.eye(2), np.array([1.0, 0.0]), np.array([0.01, np.inf]),
        np.array([False, True]),
    )  # fmt: skip


def test_each_resample_is_the_mean_of_the_drawn_segments():
    # one Gauss-Newton step from the optimum of a linear problem is the refit: x_b = the mean
    # of y over the blocks drawn (counts from the same generator, drawn as the bootstrap does)
    sp = space()
    unc = segment_bootstrap(sp, sp.nominal(), mean_problem(), identified_first(), n=50, seed=3)
    rng = np.random.default_rng(3)
    for b in range(50):
        counts = np.bincount(rng.integers(0, S, S), minlength=S)
        assert unc.samples[b, 0] == pytest.approx(10 * (counts @ Y) / counts.sum(), abs=1e-9)


def test_spread_is_the_bootstrap_spread_of_a_mean():
    # the bootstrap std of a mean of S values: sqrt(mean((y - ybar)^2) / S), times the 10 kg
    # of the unit range; 4000 resamples estimate it to ~1 %
    sp = space()
    unc = segment_bootstrap(sp, sp.nominal(), mean_problem(), identified_first(), n=4000, seed=0)
    expected = 10 * np.sqrt(np.mean((Y - Y.mean()) ** 2) / S)
    assert unc.std[0] == pytest.approx(expected, rel=0.05)
    assert unc.cov[0, 0] == pytest.approx(unc.std[0] ** 2, rel=1e-3)  # ddof 1 vs 0 of 4000
    assert unc.cov_unit[0, 0] == pytest.approx(unc.cov[0, 0] / 100, rel=1e-9)
    # a normal 95 % interval around the fit: 10 ybar +- 1.96 std
    lo, hi = unc.ci95[0]
    assert lo == pytest.approx(10 * Y.mean() - 1.96 * expected, abs=0.2 * expected)
    assert hi == pytest.approx(10 * Y.mean() + 1.96 * expected, abs=0.2 * expected)
    assert "40 blocks" in unc.method and "4000 resamples" in unc.method


def test_fixed_and_unidentified_parameters_do_not_move():
    # arm_m is fixed (its base value 0.3 in every sample); damping is free but along the
    # unidentified direction: it stays where the fit put it, u = 0.25 -> 0.5
    sp = space()
    unc = segment_bootstrap(sp, sp.nominal(), mean_problem(), identified_first(), n=200, seed=1)
    assert np.all(unc.samples[:, 1] == 0.3) and unc.std[1] == pytest.approx(0.0, abs=1e-12)
    assert unc.samples[:, 2] == pytest.approx(np.full(200, 0.5), abs=1e-12)
    assert unc.std[2] == pytest.approx(0.0, abs=1e-12)
    assert unc.cov_unit.shape == (2, 2)
    assert unc.cov_unit[1, 1] == pytest.approx(0.0, abs=1e-20)
    assert "1 identified directions" in unc.method


def test_resamples_spread_around_the_fit_even_off_the_optimum():
    # a fit stopped 0.05 (unit) above the optimum: the gradient is centred, so the full sample
    # stays at the fit and a resample moves by its own mean's deviation, x* + mean_b(y) - ybar
    # (an uncentred step would pull every resample back to ybar)
    sp = space()
    sens = mean_problem()
    sens.x = sens.x + np.array([0.05, 0.0])
    sens.r = sens.psi = (sens.x[0] - Y)[:, None]
    unc = segment_bootstrap(sp, sp.nominal(), sens, identified_first(), n=50, seed=3)
    rng = np.random.default_rng(3)
    for b in range(50):
        counts = np.bincount(rng.integers(0, S, S), minlength=S)
        expected = sens.x[0] + (counts @ Y) / counts.sum() - Y.mean()
        assert unc.samples[b, 0] == pytest.approx(10 * expected, abs=1e-9)


def test_blocks_are_resampled_whole():
    # segments in pairs (0, 1), (2, 3), ...: a resample draws 20 blocks, each bringing both
    # of its segments, and its x is the mean of the y of the segments it brought
    sp = space()
    blocks = np.arange(S) // 2
    sens = mean_problem(block=blocks)
    unc = segment_bootstrap(sp, sp.nominal(), sens, identified_first(), n=30, seed=5)
    pair_sums = Y.reshape(-1, 2).sum(axis=1)
    rng = np.random.default_rng(5)
    for b in range(30):
        counts = np.bincount(rng.integers(0, S // 2, S // 2), minlength=S // 2)
        assert unc.samples[b, 0] == pytest.approx(10 * (counts @ pair_sums) / (2 * counts.sum()))
    assert "20 blocks" in unc.method


def test_diverged_segments_carry_no_weight():
    # a diverged segment (ok False) with an absurd datum, the fit 0.05 off the optimum: the
    # resamples are x* + mean_b(y) - ybar over the others only, as if it were not there (it
    # is neither in the Gauss-Newton matrix, nor in the gradient, nor in its centring)
    sp = space()
    y = np.append(Y, 50.0)
    ok = np.append(np.ones(S, bool), False)
    sens = mean_problem(y, ok=ok)
    sens.x = sens.x + np.array([0.05, 0.0])
    sens.r = sens.psi = (sens.x[0] - y)[:, None]
    unc = segment_bootstrap(sp, sp.nominal(), sens, identified_first(), 20, 2)
    rng = np.random.default_rng(2)
    for b in range(20):
        counts = np.bincount(rng.integers(0, S + 1, S + 1), minlength=S + 1)[:S]
        expected = sens.x[0] + (counts @ Y) / counts.sum() - Y.mean()
        assert unc.samples[b, 0] == pytest.approx(10 * expected, abs=1e-9)


def test_samples_are_clipped_to_the_bounds():
    # data near the upper bound (u = 0.99 +- 0.05): samples beyond u = 1 are 10 kg exactly
    sp = space()
    y = 0.99 + 0.05 * np.random.default_rng(4).standard_normal(S)
    unc = segment_bootstrap(sp, sp.nominal(), mean_problem(y), identified_first(), 300, 0)
    assert unc.samples[:, 0].max() == 10.0
    assert (unc.samples[:, 0] <= 10.0).all() and (unc.samples[:, 0] < 10.0).any()


def test_a_single_resample_has_zero_covariance():
    sp = space()
    unc = segment_bootstrap(sp, sp.nominal(), mean_problem(), identified_first(), n=1, seed=0)
    assert unc.samples.shape == (1, 3)
    assert not unc.cov.any() and not unc.cov_unit.any() and not unc.std.any()
