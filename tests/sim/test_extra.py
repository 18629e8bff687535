"""The per-step terms MuJoCo lacks (``sim.extra``): defaults, copies, observation noise, the
sidecar round trip, and the edges of the delayed controls (their shifts themselves are
checked in tests/sim/test_batch.py)."""

from __future__ import annotations

import numpy as np
import pytest

from sim2real.sim.extra import PER_DOF_TERMS, ExtraTerms, delayed_controls


def test_defaults_are_no_terms():
    e = ExtraTerms(3)
    for name in PER_DOF_TERMS:
        assert getattr(e, name).shape == (3,)
    assert not e.state_dependent
    assert e.stribeck_vel_rad_s.tolist() == [0.1] * 3  # a velocity scale, never 0 by default
    assert e.friction_torque(np.array([1.0, -2.0, 0.5])) == pytest.approx([0.0, 0.0, 0.0])


@pytest.mark.parametrize("term", ["coulomb_Nm", "viscous_Nm_s", "stribeck_Nm"])
def test_any_friction_term_makes_the_step_state_dependent(term):
    e = ExtraTerms(2)
    getattr(e, term)[1] = 0.1
    assert e.state_dependent
    offset_only = ExtraTerms(2, offset_Nm=np.array([0.0, 0.3]))
    assert not offset_only.state_dependent  # a constant torque: the open-loop path applies


def test_friction_torque_is_per_dof():
    # dof 0 viscous 0.1 N m s at 2 rad/s: -0.2; dof 1 Coulomb 0.2 at qd = v_s = 0.01: -0.1
    e = ExtraTerms(2, viscous_Nm_s=np.array([0.1, 0.0]), coulomb_Nm=np.array([0.0, 0.2]))
    assert e.friction_torque(np.array([2.0, 0.01])) == pytest.approx([-0.2, -0.1])


def test_copy_is_independent():
    e = ExtraTerms(2, delay_s=0.01, coulomb_Nm=np.array([0.1, 0.2]))
    c = e.copy()
    c.coulomb_Nm[0] = 5.0
    c.delay_s = 0.0
    assert e.coulomb_Nm.tolist() == [0.1, 0.2] and e.delay_s == 0.01
    assert all(np.array_equal(getattr(e, n), getattr(e.copy(), n)) for n in PER_DOF_TERMS)


def test_observation_noise_has_the_set_spread():
    e = ExtraTerms(2, pos_noise_rad=np.array([0.001, 0.0]), vel_noise_rad_s=np.array([0.0, 0.05]))
    q, v = np.zeros((20000, 2)), np.ones((20000, 2))
    noisy_q, noisy_v = e.observe(q, v, np.random.default_rng(0))
    # 20000 draws: the std within ~1 % of the set one; zero where none is set
    assert noisy_q.std(axis=0) == pytest.approx([0.001, 0.0], rel=0.03, abs=1e-15)
    assert noisy_v.std(axis=0) == pytest.approx([0.0, 0.05], rel=0.03, abs=1e-15)
    assert noisy_v.mean(axis=0) == pytest.approx([1.0, 1.0], abs=2e-3)
    # no generator, or no noise: the state itself
    assert e.observe(q, v, None)[0] is q
    assert ExtraTerms(2).observe(q, v, np.random.default_rng(0))[1] is v


def test_sidecar_round_trip_by_joint_name():
    e = ExtraTerms(2, delay_s=0.012, smooth_vel_rad_s=0.02,
                   coulomb_Nm=np.array([0.1, 0.0]), offset_Nm=np.array([0.0, -0.05]))  # fmt: skip
    data = e.to_dict(["shoulder", "elbow"])
    assert data["coulomb_Nm"] == {"shoulder": 0.1, "elbow": 0.0}
    assert data["delay_s"] == 0.012
    # read back onto a model whose dofs come in another order, one of them unknown to it
    back = ExtraTerms.from_dict(data, ["elbow", "wrist", "shoulder"])
    assert back.coulomb_Nm.tolist() == [0.0, 0.0, 0.1]
    assert back.offset_Nm.tolist() == [-0.05, 0.0, 0.0]
    assert (back.delay_s, back.smooth_vel_rad_s) == (0.012, 0.02)
    assert back.stribeck_vel_rad_s.tolist() == [0.1, 0.1, 0.1]
    # a joint the model lacks is left out
    fewer = ExtraTerms.from_dict(data, ["elbow"])
    assert fewer.coulomb_Nm.tolist() == [0.0] and fewer.offset_Nm.tolist() == [-0.05]
    empty = ExtraTerms.from_dict({}, ["a"])
    assert empty.delay_s == 0.0 and empty.smooth_vel_rad_s == 0.01


def test_delayed_controls_edges():
    u = np.arange(12.0).reshape(1, 12, 1)
    # no delay: the window from index hist
    assert delayed_controls(u, hist=3, steps=5, delay_steps=0.0)[0, :, 0].tolist() == [
        3,
        4,
        5,
        6,
        7,
    ]
    # as long a delay as there is history: still exact on a line (u(t - 3) from t = 3: 0..4)
    assert delayed_controls(u, 3, 5, 3.0)[0, :, 0] == pytest.approx([0, 1, 2, 3, 4], abs=1e-12)
    with pytest.raises(ValueError, match="at least as many earlier controls"):
        delayed_controls(u, hist=3, steps=5, delay_steps=3.5)
    # a batch of two windows and two actuators: each shifted on its own
    batch = np.stack([np.stack([u[0, :, 0], -2 * u[0, :, 0]], axis=1)] * 2)
    out = delayed_controls(batch, hist=3, steps=5, delay_steps=0.5)
    assert out.shape == (2, 5, 2)
    assert out[1, :, 0] == pytest.approx([2.5, 3.5, 4.5, 5.5, 6.5], abs=1e-12)
    assert out[0, :, 1] == pytest.approx([-5.0, -7.0, -9.0, -11.0, -13.0], abs=1e-12)
