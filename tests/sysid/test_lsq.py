"""Bounded least squares on the multiple-shooting residuals (``sysid.lsq``) of a rotor logged
at known values: the fit converges to the truth from far off, a pin holds a direction where it
is told, the Huber norm and the finite-difference Jacobian against hand values and central
differences."""

from __future__ import annotations

import numpy as np
import pytest
from sysid.rotor import TRUTH, rotor_log, rotor_sim, rotor_space

from sim2real.sysid.lsq import HuberNorm, Pin, Problem, solve
from sim2real.sysid.objective import MultipleShooting, ObjectiveConfig
from sim2real.sysid.segments import make_segments


@pytest.fixture(scope="module")
def objective():
    sim = rotor_sim()
    seg = make_segments(sim, [rotor_log()], 0.2, state_filter_s=0.0)
    return MultipleShooting(sim, rotor_space(), seg, ObjectiveConfig(), nthread=1)


def test_the_fit_converges_to_the_truth(objective):
    # from the nominal (damping 0.2, armature 0.002: unit coordinates 0.4, 0.04) to the values
    # that made the log: damping 0.08 -> u = 0.16, armature 0.01 -> u = 0.2
    space = objective.space
    problem = Problem(objective, space.nominal())
    run = solve(problem, space.to_unit(space.nominal()))
    assert run.converged and run.iterations < 50
    assert problem.values(run.x)[0] == pytest.approx(
        [TRUTH["damping"], TRUTH["armature"]], rel=1e-4
    )
    assert run.cost < 1e-12
    assert run.history[0] > run.history[-1] and run.evaluations > run.iterations


def test_a_pin_holds_its_direction(objective):
    # pin the damping's unit coordinate at 0.3 (0.15 N m s) with a strong weight: the damping
    # stays there and the armature takes what fits best given it (5 segments: quicker)
    space = objective.space
    pin = Pin(A=np.array([[1.0, 0.0]]), b=np.array([0.3]), weight=1e4)
    five = MultipleShooting(rotor_sim(), space, objective.segments.subset(np.arange(5)),
                            ObjectiveConfig(), nthread=1)  # fmt: skip
    problem = Problem(five, space.nominal(), pin)
    run = solve(problem, space.to_unit(space.nominal()))
    values = problem.values(run.x)[0]
    assert values[0] == pytest.approx(0.15, rel=1e-4)
    assert run.cost > 1e-4  # the pinned damping cannot reproduce the log
    # the pin's residual is appended after the data's
    R = problem.residuals(run.x)
    assert R.shape == (1, five.n_residuals + 1)
    assert R[0, -1] == pytest.approx(1e4 * (run.x[0] - 0.3))


def test_values_map_the_unit_cube_and_keep_fixed_parameters(objective):
    problem = Problem(objective, objective.space.nominal())
    V = problem.values(np.array([[0.0, 1.0], [0.5, 0.5]]))
    assert V.tolist() == [[0.0, 0.05], [0.25, 0.025]]  # bounds [0, 0.5] and [0, 0.05]


def test_forward_differences_match_central_ones(objective):
    problem = Problem(objective, objective.space.nominal(), fd_step=1e-6)
    x = np.array([0.3, 0.1])
    r0 = problem.residuals(x)[0]
    jac = problem.jacobian(x, r0)
    assert jac.shape == (objective.n_residuals, 2)
    h = 1e-4
    central = np.stack(
        [
            (problem.residuals(x + h * e)[0] - problem.residuals(x - h * e)[0]) / (2 * h)
            for e in np.eye(2)
        ],
        axis=1,
    )
    assert jac == pytest.approx(central, rel=1e-3, abs=1e-6)
    # at the upper bound the difference is taken backwards (a step beyond it would be clipped
    # back: a zero column); it matches a backward difference taken by hand
    top = np.array([1.0, 0.1])
    at_top = problem.jacobian(top, problem.residuals(top)[0])
    back = (problem.residuals(top)[0] - problem.residuals(top - [h, 0])[0]) / h
    assert np.abs(at_top[:, 0]).max() > 0.1
    assert at_top[:, 0] == pytest.approx(back, rel=0.02, abs=1e-4)


def test_huber_norm_by_hand():
    # deltas 1 and 2 for two data residuals, the pin's (third) quadratic (delta inf)
    norm = HuberNorm(np.array([1.0, 2.0]), np.inf)
    r = np.array([[3.0], [1.0], [5.0]])
    # 1 (3 - 0.5) + 0.5 * 1 + 0.5 * 25
    assert norm.value(r) == pytest.approx(2.5 + 0.5 + 12.5)
    grad, hess = norm.grad_hess(r, np.eye(3))
    assert grad.ravel().tolist() == [1.0, 1.0, 5.0]  # clipped residuals
    assert np.diag(hess).tolist() == [0.0, 1.0, 1.0]  # no curvature beyond delta
