"""The least-squares start from inverse dynamics (``sysid.init_ls``) on a rotor logged at
known values: damping and armature enter the equation of motion linearly and come back from
nominal values far off; a parameter that does not enter linearly stays at its nominal."""

from __future__ import annotations

import pytest
from sysid.rotor import TRUTH, rotor_log, rotor_sim, rotor_space

from sim2real.params.space import Param, ParamSpace
from sim2real.sysid.init_ls import linear_init


def test_linear_parameters_are_solved_from_the_logs():
    # nominal damping 0.2 (truth 0.08) and armature 0.002 (truth 0.01); the accelerations
    # are a Savitzky-Golay derivative of the logged velocity, so a little off: 1 % and 5 %
    init = linear_init(rotor_sim(), rotor_space(), [rotor_log()])
    assert init.linear.tolist() == [True, True]
    assert init.values[0] == pytest.approx(TRUTH["damping"], rel=0.01)
    assert init.values[1] == pytest.approx(TRUTH["armature"], rel=0.05)
    assert init.rms_residual_Nm < 0.005  # of torques up to 0.5 N m
    assert init.samples > 1900


def test_a_smooth_coulomb_term_is_solved_beside_them():
    # a log with 0.03 N m of smooth Coulomb friction (the wrapper's extra.coulomb law): the
    # three linear parameters come back together
    space = ParamSpace(
        params=[
            *rotor_space().params,
            Param(name="coulomb", target="extra.coulomb:j", nominal=0.0, bounds=(0.0, 0.2)),
        ]
    )
    init = linear_init(rotor_sim(), space, [rotor_log(coulomb_Nm=0.03)], smooth_vel_rad_s=0.01)
    assert init.linear.tolist() == [True, True, True]
    assert init.values == pytest.approx([TRUTH["damping"], TRUTH["armature"], 0.03], rel=0.05)


def test_nonlinear_and_fixed_parameters_keep_their_nominal():
    # the action delay does not enter the inverse dynamics linearly; a fixed parameter is not
    # solved for
    space = ParamSpace(
        params=[
            *rotor_space().params,
            Param(name="delay", target="extra.delay_s", nominal=0.004, bounds=(0.0, 0.02)),
            Param(name="fixed", target="joint.frictionloss:j", nominal=0.0, bounds=(0.0, 0.0)),
        ]
    )
    init = linear_init(rotor_sim(), space, [rotor_log()])
    assert init.linear.tolist() == [True, True, False, False]
    assert init.values[2:].tolist() == [0.004, 0.0]


def test_solutions_stay_inside_the_bounds():
    # damping bounded to [0.1, 0.5] while the truth is 0.08: the bounded solve stops at 0.1
    space = rotor_space()
    space.params[0] = space.params[0].model_copy(update={"bounds": (0.1, 0.5)})
    init = linear_init(rotor_sim(), space, [rotor_log()])
    assert init.values[0] == pytest.approx(0.1)


def test_too_short_logs_give_nothing():
    assert linear_init(rotor_sim(), rotor_space(), [rotor_log(seconds=0.02)]) is None
