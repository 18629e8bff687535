"""How well the evidence pins a pose: ``pose_spread_m`` against a Monte Carlo estimate."""

import numpy as np

from sim2real.tracking.fused_align import pose_spread_m


def test_pose_spread_matches_sampled_twists():
    rng = np.random.default_rng(0)
    points = rng.normal([0.02, -0.01, 0.6], 0.03, size=(300, 3))
    L = rng.normal(size=(6, 6))
    information = L @ L.T + np.diag([1e4, 2e4, 5e3, 1e6, 3e6, 2e5])
    cov = np.linalg.inv(information)
    x = rng.multivariate_normal(np.zeros(6), cov, size=20000)
    # each sampled twist (omega, v) moves every point by omega x p + v
    moved = np.cross(x[:, None, :3], points[None]) + x[:, None, 3:]
    sampled = np.sqrt((moved**2).sum(axis=2).mean())
    assert abs(pose_spread_m(information, points) - sampled) < 0.02 * sampled


def test_a_direction_no_evidence_constrains_is_an_infinite_spread():
    points = np.array([[0.0, 0.0, 0.5], [0.01, 0.0, 0.5], [0.0, 0.01, 0.5]])
    information = np.diag([1e4, 1e4, 1e4, 1e6, 1e6, 0.0])  # nothing says the depth
    assert pose_spread_m(information, points) == float("inf")
    information[5, 5] = 1e6
    assert np.isfinite(pose_spread_m(information, points))
