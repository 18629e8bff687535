"""Multiple-shooting residuals (``sysid.objective``) on a rotor logged at known values: zero at
the truth, each residual the scaled error of an independent simulation of its segment, the
Huber loss by hand and the fixed cost of a segment that diverged."""

from __future__ import annotations

import numpy as np
import pytest
from sysid.rotor import DT, TRUTH, rotor_log, rotor_sim, rotor_space, rotor_xml, simulate

from sim2real.sysid.objective import MultipleShooting, ObjectiveConfig, huber
from sim2real.sysid.segments import make_segments

CFG = ObjectiveConfig()
"""pos_scale 0.05 rad, vel_scale 0.5 rad/s, vel_weight 0.25, huber_delta 2, unstable 30."""


@pytest.fixture(scope="module")
def problem():
    sim, log = rotor_sim(), rotor_log()
    seg = make_segments(sim, [log], 0.2, state_filter_s=0.0)  # 100 steps, raw initial states
    return MultipleShooting(sim, rotor_space(), seg, CFG, nthread=1), log


def test_huber_by_hand():
    # quadratic up to delta (r^2 / 2), then linear: delta (|r| - delta / 2)
    r = np.array([-3.0, -1.0, 0.0, 1.5, 4.0])
    assert huber(r, 2.0).tolist() == [4.0, 0.5, 0.0, 1.125, 6.0]


def test_shapes_and_thresholds(problem):
    obj, _ = problem
    seg = obj.segments
    assert len(seg) == 19 and seg.steps == 100  # starts 0, 100, ..., 1800 of 2000 samples
    assert obj.n_residuals == 19 * 100 * 2
    # positions at delta, velocities at sqrt(vel_weight) delta = 0.5 * 2
    assert obj.column_deltas().tolist() == [2.0, 1.0]
    assert obj.deltas().shape == (obj.n_residuals,)


def test_the_truth_reproduces_the_log(problem):
    obj, _ = problem
    ev = obj.evaluate(np.array([[TRUTH["damping"], TRUTH["armature"]]]))
    assert ev.residuals.shape == (1, 19, 100, 2)
    assert np.abs(ev.residuals).max() < 1e-9 and ev.cost[0] < 1e-18
    assert not ev.unstable.any()


def test_each_residual_is_the_scaled_error_of_its_segment(problem):
    # at damping 0.16 (twice the truth): simulate segment 3 by hand from its logged start with
    # the logged controls; residual = (q_sim - q_log) / 0.05 and (v_sim - v_log) * 0.5 / 0.5
    obj, log = problem
    ev = obj.evaluate(np.array([[TRUTH["damping"], TRUTH["armature"]], [0.16, 0.01]]))
    s0 = round(obj.segments.t0_s[3] / DT)
    u = log.ctrl[s0 : s0 + 101, 0]
    q, v = simulate(rotor_xml(damping=0.16), u, log.qpos[s0, 0], log.qvel[s0, 0])
    r = ev.residuals[1, 3]
    assert r[:, 0] == pytest.approx((q[1:] - log.qpos[s0 + 1 : s0 + 101, 0]) / 0.05, abs=1e-9)
    assert r[:, 1] == pytest.approx((v[1:] - log.qvel[s0 + 1 : s0 + 101, 0]) * 1.0, abs=1e-9)
    # the cost: mean Huber loss of both columns over every step and segment
    expected = huber(ev.residuals[1], obj.column_deltas()).mean()
    assert ev.cost[1] == pytest.approx(expected) and ev.cost[1] > 1e-4
    assert ev.seg_cost.shape == (2, 19)
    assert obj(np.array([0.16, 0.01])) == pytest.approx(ev.cost[1:])


def test_a_diverged_segment_costs_a_fixed_amount(problem):
    # controls of 1e30 N m blow every segment up: each residual is set to 30, whose Huber loss
    # is 2 (30 - 1) = 58 for positions and 1 (30 - 0.5) = 29.5 for velocities: mean 43.75
    obj, _ = problem
    blown = MultipleShooting(rotor_sim(), rotor_space(), obj.segments.subset(np.arange(3)), CFG)
    blown.segments.ctrl[:] = 1e30
    ev = blown.evaluate(np.array([[TRUTH["damping"], TRUTH["armature"]]]))
    assert ev.unstable.all()
    assert np.all(ev.residuals == 30.0)
    assert ev.cost[0] == pytest.approx(43.75)
    assert blown.unstable_count == 1
