"""The smooth joint-friction law of ``sim.friction`` (the BAM budgets of the same module are
checked beside the actuator models, tests/actuators/test_models.py): values worked by hand,
its symmetry, broadcasting, and the published DFKI form it reproduces."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sim2real.sim.friction import smooth_friction_torque, stribeck_coeff


def test_smooth_law_by_hand():
    # at qd = v_s the smooth sign is (2/pi) atan(1) = 0.5; with Fc 0.2, Fv 0.1, Fs 0.3 and
    # v_st = 0.02 (s = exp(-(0.01/0.02)^2) = exp(-0.25)):
    # -(0.2 * 0.5 + 0.1 * 0.01 + 0.3 * exp(-0.25) * 0.5) N m
    tau = smooth_friction_torque(0.01, 0.2, 0.1, 0.3, 0.02, 0.01)
    assert tau == pytest.approx(-(0.1 + 0.001 + 0.15 * math.exp(-0.25)), rel=1e-12)
    # at rest no torque (the smooth sign is 0: no stiction force without motion)
    assert smooth_friction_torque(0.0, 0.2, 0.1, 0.3, 0.02, 0.01) == 0.0


def test_fast_motion_leaves_coulomb_and_viscous():
    # at 5 rad/s the sign is ~1 (atan(500)) and the Stribeck bump exp(-(5/0.1)^2) ~ 0
    tau = smooth_friction_torque(5.0, 0.2, 0.1, 0.3, 0.1, 0.01)
    sgn = 2 / math.pi * math.atan(500)
    assert tau == pytest.approx(-(0.2 * sgn + 0.5), rel=1e-12)
    assert tau == pytest.approx(-0.7, abs=3e-4)


def test_opposes_motion_and_is_odd():
    qd = np.linspace(-3, 3, 61)
    tau = smooth_friction_torque(qd, 0.2, 0.05, 0.1, 0.2, 0.01)
    assert np.all(tau[qd > 0] < 0) and np.all(tau[qd < 0] > 0)
    assert tau == pytest.approx(-tau[::-1], abs=1e-15)


def test_published_dfki_form():
    # the DFKI pendulum model's friction Fc_pub atan(100 qd) is this law's Coulomb term with
    # v_s = 0.01 rad/s and Fc = Fc_pub pi / 2
    qd = np.linspace(-1, 1, 21)
    fc_pub = 0.06
    tau = smooth_friction_torque(qd, fc_pub * math.pi / 2, 0.0, 0.0, 0.1, 0.01)
    assert tau == pytest.approx(-fc_pub * np.arctan(100 * qd), abs=1e-15)


def test_broadcasts_per_dof_and_environment():
    # (envs, dofs) velocities against per-dof coefficients: each column its own law
    qd = np.array([[0.5, -0.5], [1.0, 2.0], [0.0, 0.1]])
    fc, fv = np.array([0.1, 0.3]), np.array([0.01, 0.02])
    tau = smooth_friction_torque(qd, fc, fv, 0.0, 0.1, 0.01)
    assert tau.shape == (3, 2)
    for j in range(2):
        expected = smooth_friction_torque(qd[:, j], fc[j], fv[j], 0.0, 0.1, 0.01)
        assert tau[:, j] == pytest.approx(expected, abs=1e-15)


def test_a_zero_stribeck_velocity_is_no_bump():
    # v_st = 0 would divide by zero: it is floored at 1e-9 rad/s, so any motion has s = 0
    tau = smooth_friction_torque(0.01, 0.0, 0.0, 0.3, 0.0, 0.01)
    assert np.isfinite(tau) and tau == pytest.approx(0.0, abs=1e-300)


def test_stribeck_coefficient_shape():
    # exp(-|qd / v|^alpha): 1 at rest, e^-1 at qd = v, e^-(2^alpha) at 2 v, even in qd
    assert stribeck_coeff(0.0, 0.1, 2.0) == 1.0
    assert stribeck_coeff(-0.1, 0.1, 2.0) == pytest.approx(math.exp(-1))
    assert stribeck_coeff(0.2, 0.1, 1.5) == pytest.approx(math.exp(-(2**1.5)))
