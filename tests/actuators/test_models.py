"""Actuator models against torques worked out by hand, the friction terms' shapes, the delay
line, and the numpy bench against MuJoCo."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import sim2real.sim as sim_pkg
from sim2real.actuators import ActuatorState, DCServoConfig, PDServoConfig
from sim2real.actuators.models import DelayLine, TorqueMotorConfig
from sim2real.actuators.params import SPECS
from sim2real.sim.friction import FRICTION_PARAMS, friction_budget, stribeck_coeff

DC = {"kt_Nm_A": 0.4, "R_ohm": 4.0, "error_gain_duty_rad": 0.003, "max_pwm": 1.0}
DC |= {"max_current_A": 1.75}
DC |= {"armature_kgm2": 0.001, "delay_s": 0.0}


def _state(**kw) -> ActuatorState:
    return ActuatorState(**{"dt_s": 0.005, "kp_fw": 200.0, "vin_V": 7.5, **kw})


def test_pd_by_hand():
    p = {"kp_Nm_rad_per_fw": 0.004, "kd_Nms_rad": 0.05, "tau_max_Nm": 0.5}
    act = PDServoConfig(params=p).build()
    # 0.004 * 200 * (0.3 - 0.1) - 0.05 * 1.0 = 0.16 - 0.05
    assert act.torque(0.3, 0.1, 1.0, _state()) == pytest.approx(0.11)
    assert act.torque(2.0, 0.0, 0.0, _state()) == pytest.approx(0.5)  # 1.6 saturated
    assert act.torque(2.0, 0.0, 0.0, _state(enabled=False)) == 0.0


def test_dc_motor_by_hand():
    act = DCServoConfig(params=DC).build()
    # duty 0.003 * 200 * 0.5 = 0.3, 2.25 V; kt/R (2.25 - kt * 2) = 0.1 * 1.45
    assert act.torque(0.5, 0.0, 2.0, _state()) == pytest.approx(0.145)
    # duty 1.2 clipped to 1: 0.1 * (7.5 - 0.8)
    assert act.torque(2.0, 0.0, 2.0, _state()) == pytest.approx(0.67)
    assert act.torque(0.5, 0.0, 2.0, _state(enabled=False)) == 0.0
    # current limit 1 A: duty within (kt qd +- R I) / vin, at rest tau = kt * 1 A
    act = DCServoConfig(params=DC | {"max_current_A": 1.0}).build()
    assert act.torque(2.0, 0.0, 0.0, _state()) == pytest.approx(0.4)
    # moving at 2 rad/s: duty <= (0.8 + 4) / 7.5, tau = 0.1 (4.8 - 0.8) = 0.4 again
    assert act.torque(2.0, 0.0, 2.0, _state()) == pytest.approx(0.4)
    # torque-constant droop 0.5 / A: at rest, duty 0.3, I = 2.25 / 4 = 0.5625 A,
    # tau = 0.4 * 0.5625 / (1 + 0.28125) = 0.175610
    act = DCServoConfig(params=DC | {"kt_droop_per_A": 0.5}).build()
    assert act.torque(0.5, 0.0, 0.0, _state()) == pytest.approx(0.175610, abs=1e-6)


def test_torque_motor_by_hand():
    from sim2real.actuators.models import TorqueMotorConfig

    p = {"torque_gain": 0.9, "motor_tau_max_Nm": 1.5, "torque_time_constant_s": 0.0}
    act = TorqueMotorConfig(params=p).build()
    assert act.armature_kgm2 <= 1e-5  # the joint's own model holds the rotor inertia
    assert act.torque(1.0, 0.0, 0.0, _state()) == pytest.approx(0.9)
    assert act.torque(-3.0, 0.0, 0.0, _state()) == pytest.approx(-1.5)  # -2.7 saturated
    # first-order lag, time constant 0.01 s at dt 0.005 s: 1 - exp(-0.5) of the way per step
    act = TorqueMotorConfig(params=p | {"torque_time_constant_s": 0.01}).build()
    a = 1.0 - np.exp(-0.5)
    first = act.torque(1.0, 0.0, 0.0, _state())
    second = act.torque(1.0, 0.0, 0.0, _state())
    assert first == pytest.approx(0.9 * a)
    assert second == pytest.approx(0.9 * a + (0.9 - 0.9 * a) * a)
    act.reset()
    assert act.torque(1.0, 0.0, 0.0, _state()) == pytest.approx(0.9 * a)
    # per-environment parameters broadcast against per-environment commands
    act = TorqueMotorConfig(params=p).build()
    act.p = act.p | {"torque_gain": np.array([1.0, 0.5])}
    assert act.torque(np.array([1.0, 1.0]), 0.0, 0.0, _state()) == pytest.approx([1.0, 0.5])
    # Coulomb-viscous friction spent against the motion: 0.1 + 0.05 * 2
    fp = p | {"friction_base_Nm": 0.1, "friction_viscous_Nms_rad": 0.05}
    act = TorqueMotorConfig(friction="coulomb-viscous", params=fp).build()
    assert act.torque(1.0, 0.0, 2.0, _state(inertia_kgm2=0.06)) == pytest.approx(0.9 - 0.2)


def test_coulomb_viscous_by_hand():
    p = DC | {"friction_base_Nm": 0.02, "friction_viscous_Nms_rad": 0.01}
    act = DCServoConfig(friction="coulomb-viscous", params=p).build()
    s = _state(inertia_kgm2=0.005, tau_ext_Nm=-0.1)
    # moving: budget 0.02 + 0.01 * 2 = 0.04 against the motion (tau_stop = 2 + 0.045 > 0)
    assert act.torque(0.5, 0.0, 2.0, s) == pytest.approx(0.145 - 0.04)
    # at rest, small gravity 0.01 < 0.02: friction cancels it exactly (the joint stays)
    s = _state(inertia_kgm2=0.005, tau_ext_Nm=0.01)
    assert act.torque(0.0, 0.0, 0.0, s) == pytest.approx(-0.01)
    # at rest, gravity 0.05 > 0.02: friction gives 0.02 back
    s = _state(inertia_kgm2=0.005, tau_ext_Nm=0.05)
    assert act.torque(0.0, 0.0, 0.0, s) == pytest.approx(-0.02)


def test_friction_terms_by_hand():
    p = {
        "friction_base_Nm": 0.01,
        "friction_viscous_Nms_rad": 0.002,
        "friction_stribeck_Nm": 0.03,
        "dtheta_stribeck_rad_s": 0.5,
        "stribeck_alpha": 2.0,
        "load_friction_base": 0.1,
        "load_friction_stribeck": 0.2,
        "load_friction_motor": 0.3,
        "load_friction_external": 0.05,
        "load_friction_motor_stribeck": 0.01,
        "load_friction_external_stribeck": 0.08,
        "load_friction_motor_quad": 0.02,
        "load_friction_external_quad": 0.04,
    }
    tm, te = 0.3, -0.1
    assert friction_budget("coulomb-viscous", p, tm, te, 1.0) == pytest.approx(0.012)
    s = np.exp(-4.0)  # qd = 1 = 2 * dtheta_s, alpha 2
    assert friction_budget("stribeck", p, tm, te, 1.0) == pytest.approx(0.012 + 0.03 * s)
    assert friction_budget("load-dependent", p, tm, te, 0.0) == pytest.approx(0.01 + 0.1 * 0.4)
    m4 = 0.01 + 0.1 * 0.4 + 0.03 + 0.2 * 0.4  # at rest, s = 1
    assert friction_budget("load-dependent-stribeck", p, tm, te, 0.0) == pytest.approx(m4)
    m5 = 0.01 + 0.03 + abs(0.05 * te - 0.3 * tm) + abs(0.08 * te - 0.01 * tm)
    assert friction_budget("directional", p, tm, te, 0.0) == pytest.approx(m5)
    # |tm| > |te|: driving, the external side's quadratic term
    assert friction_budget("quadratic", p, tm, te, 0.0) == pytest.approx(m5 + 0.04 * te**2)
    # backdriven (|te| > |tm|, opposed): the motor side's
    m5b = 0.01 + 0.03 + abs(0.05 * -0.5 - 0.3 * tm) + abs(0.08 * -0.5 - 0.01 * tm)
    assert friction_budget("quadratic", p, tm, -0.5, 0.0) == pytest.approx(m5b + 0.02 * tm**2)
    # motor and load pushing the same way (BAM: no quadratic term): M5's budget
    m5c = 0.01 + 0.03 + abs(0.05 * 0.5 - 0.3 * tm) + abs(0.08 * 0.5 - 0.01 * tm)
    assert friction_budget("quadratic", p, tm, 0.5, 0.0) == pytest.approx(m5c)


def test_friction_shapes():
    qd = np.linspace(-5, 5, 201)
    s = stribeck_coeff(qd, 0.5, 1.5)
    assert s[100] == 1.0 and np.all(s > 0) and np.all(s <= 1)
    assert np.allclose(s, s[::-1]) and np.all(np.diff(s[100:]) < 0)
    assert stribeck_coeff(0.5, 0.5, 1.5) == pytest.approx(np.exp(-1))
    p = {name: spec[0] for name, spec in SPECS.items()}
    for kind in FRICTION_PARAMS:
        f = friction_budget(kind, p, np.zeros((3, 1)), np.zeros(201), qd)
        assert f.shape == (3, 201) and np.all(f >= 0)
    cv = friction_budget("coulomb-viscous", p, 0.0, 0.0, qd)
    assert np.allclose(np.diff(cv[100:]), np.diff(cv[100:])[0])  # linear in |qd|
    ld = friction_budget("load-dependent", p, np.linspace(0, 1, 5), 0.0, 0.0)
    assert np.all(np.diff(ld) > 0)  # grows with load


def test_delay_line_interpolates():
    d = DelayLine()
    out = [d(float(k), 1.5 * 0.005, 0.005) for k in range(6)]
    assert out[0] == 0.0 and out[1] == 0.0  # before any history: the first command
    assert out[5] == pytest.approx(3.5) and out[4] == pytest.approx(2.5)
    d = DelayLine()
    out = [d(np.full(3, float(k)), np.array([0.0, 0.005, 0.01]), 0.005) for k in range(5)]
    assert np.allclose(out[4], [4.0, 3.0, 2.0])


def test_param_space_and_roundtrip(tmp_path):
    from sim2real.actuators import load_actuator, save_actuator

    cfg = DCServoConfig(friction="stribeck", params={"R_ohm": 3.0})
    space = cfg.param_space()
    assert space.names[:2] == ["kt_Nm_A", "R_ohm"] and space.nominal()[1] == 3.0
    assert all(p.target == f"actuator.{p.name}" for p in space.params)
    assert not space.params[space.index("max_pwm")].free
    save_actuator(cfg, tmp_path / "a.yaml", {"fit": {"x": 1}})
    assert load_actuator(tmp_path / "a.yaml") == cfg
    # a constant fixed by default can be freed, a fitted one fixed; both survive the YAML
    cfg = DCServoConfig(friction="stribeck", free=["kt_droop_per_A"], fixed=["R_ohm"])
    space = cfg.param_space()
    assert space.params[space.index("kt_droop_per_A")].free
    assert not space.params[space.index("R_ohm")].free and space.params[0].free
    save_actuator(cfg, tmp_path / "b.yaml")
    assert load_actuator(tmp_path / "b.yaml") == cfg


def test_an_unknown_parameter_names_the_close_ones():
    from sim2real.core.errors import InputError

    with pytest.raises(InputError, match=r"unknown parameters: R_ohmm \(did you mean R_ohm\?\)"):
        DCServoConfig(params={"R_ohmm": 1.0}).param_space()


def test_a_value_beyond_the_tables_bounds_is_taken_as_given():
    # a motor stronger than the XL330 the table was written for: its friction budget is not
    # clipped to the table's 0.2 N m, the bounds widen to hold it
    cfg = TorqueMotorConfig(friction="coulomb-viscous", params={"friction_base_Nm": 5.0})
    param = cfg.param_space().params[cfg.param_space().index("friction_base_Nm")]
    assert param.nominal == 5.0 and param.bounds[1] == 5.0
    assert cfg.values()["friction_base_Nm"] == 5.0


def test_bench_matches_mujoco():
    """The numpy bench (semi-implicit Euler) against MuJoCo's Euler integrator with the
    actuator torque applied as a generalised force."""
    mujoco = pytest.importorskip("mujoco")

    from sim2real.actuators.bench import simulate
    from sim2real.actuators.servo_log import ServoLog
    from sim2real.sim.builtin import BUILTINS  # noqa: F401  (the models folder)

    xml = Path(sim_pkg.__file__).parent / "models" / "servo-bam-xl330.xml"
    t = np.arange(300) * 0.005
    goal = 0.8 * np.sin(2 * np.pi * 0.8 * t)
    en = np.ones(300, bool)
    en[200:] = False
    log = ServoLog(xml, 0.49, 0.1, 300.0, 7.4, t, goal, goal * 0, goal * 0, en)
    cfg = DCServoConfig(friction="stribeck")
    pred = simulate(cfg, [log])[0, 0]

    from sim2real.actuators.mujoco_loop import MujocoActuatorLoop

    m = mujoco.MjModel.from_xml_path(str(xml))
    m.opt.timestep = 0.005
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    m.body_inertia[1] = 1e-12  # the bench is a point mass
    d = mujoco.MjData(m)
    loop = MujocoActuatorLoop(m, d, "horn", cfg.build(), kp_fw=300.0, vin_V=7.4)
    loop.attach()
    q_mj = []
    for k in range(300):
        q_mj.append(d.qpos[0])
        loop.step(goal[k], bool(en[k]))
    assert np.max(np.abs(np.array(q_mj) - pred)) < 1e-4
    assert np.ptp(pred) > 0.3  # it moved


def test_bad_actuator_config(tmp_path):
    from sim2real.actuators import load_actuator
    from sim2real.core.errors import InputError

    cases = {
        "unknown.yaml": ("actuator: {kind: dc, params: {bogus: 1}}", "params: unknown"),
        "friction.yaml": ("actuator: {kind: dc, friction: nope}", "dc.friction"),
        "kind.yaml": ("actuator: {kind: net}", "kind"),
        "free.yaml": ("actuator: {kind: dc, free: [kt_droop]}", "free: unknown"),
        # another file given as the actuator: said so, not pydantic's dump of its text
        "model.xml": ('<mujoco model="m"><worldbody/></mujoco>', "not an actuator config"),
        "empty.yaml": ("", "not an actuator config"),
        "log.json": ('{"kp": 200, "entries": []}', "mapping without 'kind'"),
    }
    for name, (text, needle) in cases.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(InputError, match=needle) as err:
            load_actuator(tmp_path / name)
        assert name in str(err.value)


def test_smooth_kind_is_the_smooth_law_of_the_simulated_joints():
    from sim2real.sim.friction import smooth_friction_torque

    p = {
        "friction_base_Nm": 0.05,
        "friction_viscous_Nms_rad": 0.02,
        "friction_smooth_vel_rad_s": 0.01,
    }
    qd = np.linspace(-3, 3, 121)
    budget = friction_budget("smooth", p, 0.0, 0.0, qd)
    law = smooth_friction_torque(qd, 0.05, 0.02, 0.0, 1.0, 0.01)
    np.testing.assert_allclose(-np.sign(qd) * budget, law, atol=1e-12)
    assert friction_budget("smooth", p, 0.3, 0.1, 0.0) == 0.0  # nothing sticks at rest
    assert DCServoConfig(friction="smooth").param_space().names[-1] == "friction_smooth_vel_rad_s"
