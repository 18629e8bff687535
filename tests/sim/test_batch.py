"""Batched simulation against plain MuJoCo stepping, and the extra per-step terms against
hand-computed cases."""

import copy

import mujoco
import numpy as np
import pytest

from sim2real.params.space import Param, ParamSpace
from sim2real.sim.batch import BatchSimulator
from sim2real.sim.extra import ExtraTerms, delayed_controls
from sim2real.sim.model import load_sim_model

ROTOR = """
<mujoco><option timestep="0.001" gravity="0 0 0" integrator="implicitfast"/>
  <worldbody><body name="rotor"><joint name="j" type="hinge" axis="0 0 1"/>
    <inertial pos="0 0 0" mass="1" diaginertia="0.1 0.1 0.1"/></body></worldbody>
  <actuator><general name="j" joint="j" gainprm="1" biastype="affine"/></actuator>
</mujoco>"""


def P(name, target, nominal, lo, hi):
    return Param(name=name, target=target, nominal=nominal, bounds=(lo, hi))


@pytest.fixture()
def rotor(tmp_path):
    path = tmp_path / "rotor.xml"
    path.write_text(ROTOR)
    return load_sim_model(path)


def test_batch_matches_sequential_mj_step(toy_xml):
    sim = load_sim_model(toy_xml)
    space = ParamSpace(
        params=[P("m", "body.mass:upper", 1.0, 0.1, 5), P("d", "joint.damping:*", 0.1, 0, 1)]
    )
    values = np.array([[1.0, 0.1], [2.0, 0.5], [0.5, 0.0]])
    rng = np.random.default_rng(0)
    ctrl = rng.normal(0, 1, (3, 200, sim.model.nu))
    q0 = np.tile(sim.model.qpos0, (3, 1)) + 0.3
    v0 = np.zeros((3, sim.model.nv))
    res = BatchSimulator(sim, space, nthread=2).run(values, q0, v0, ctrl)
    assert res.qpos.shape == (3, 201, 2) and not res.unstable.any()
    for b in range(3):  # independent: plain MuJoCo stepping on a copy with the values set by hand
        m = copy.copy(sim.model)
        m.body_mass[1] = values[b, 0]
        m.dof_damping[:] = values[b, 1]
        d = mujoco.MjData(m)
        d.qpos[:] = q0[b]
        for t in range(200):
            d.ctrl[:] = ctrl[b, t]
            mujoco.mj_step(m, d)
        assert np.allclose(res.qpos[b, -1], d.qpos, atol=1e-10)


def test_offset_equals_the_same_torque_through_ctrl(rotor):
    space = ParamSpace(params=[P("o", "extra.offset:j", 0.0, -1, 1)])
    sim_b = BatchSimulator(rotor, space, nthread=1)
    zeros = np.zeros((1, 500, 1))
    with_offset = sim_b.run([[0.2]], [[0.0]], [[0.0]], zeros)
    with_ctrl = sim_b.run([[0.0]], [[0.0]], [[0.0]], zeros + 0.2)
    assert np.allclose(with_offset.qpos, with_ctrl.qpos, atol=1e-12)
    # constant torque 0.2 N m on 0.1 kg m^2: q(t) = 0.5 * 2 * t^2 = 0.25 rad at 0.5 s
    assert with_offset.qpos[0, -1, 0] == pytest.approx(0.25, rel=0.01)


def test_delay_shifts_the_controls_by_whole_steps(rotor):
    space = ParamSpace(params=[P("delay", "extra.delay_s", 0.0, 0, 0.1)])
    sim_b = BatchSimulator(rotor, space, nthread=1)
    rng = np.random.default_rng(1)
    u = rng.normal(0, 1, (1, 300, 1))
    hist = 20
    delayed = sim_b.run([[0.007]], [[0.0]], [[0.0]], u, hist=hist)  # 7 steps of 1 ms
    shifted = sim_b.run([[0.0]], [[0.0]], [[0.0]], u[:, hist - 7 : 300 - 7], hist=0)
    assert np.allclose(delayed.qpos, shifted.qpos, atol=1e-12)


def test_delayed_controls_shift_lines_exactly_and_keep_noise_power():
    # a straight line is shifted exactly: u(t - 1.5) of u = t
    u = np.arange(10.0).reshape(1, 10, 1)
    out = delayed_controls(u, hist=3, steps=4, delay_steps=1.5)
    assert out[0, :, 0] == pytest.approx([1.5, 2.5, 3.5, 4.5], abs=1e-12)
    # an integer delay is a plain shift, whatever the signal
    rng = np.random.default_rng(0)
    noise = rng.standard_normal((1, 4000, 1))
    out = delayed_controls(noise, hist=20, steps=3960, delay_steps=7.0)
    assert np.allclose(out[0, :, 0], noise[0, 13:3973, 0], atol=1e-9)
    # a fractional delay keeps white noise's power (band-limited shift); linear
    # interpolation would halve it at half a step: (0.5^2 + 0.5^2) = 0.5
    half = delayed_controls(noise, hist=20, steps=3960, delay_steps=7.5)
    assert np.var(half) == pytest.approx(np.var(noise[0, 13:3973]), rel=0.02)
    # and a slow sine is delayed by the fractional amount (away from the window's ends)
    t = np.arange(400.0)
    sine = np.sin(2 * np.pi * t / 50.0).reshape(1, -1, 1)
    out = delayed_controls(sine, hist=25, steps=350, delay_steps=2.3)
    assert out[0, :, 0] == pytest.approx(np.sin(2 * np.pi * (t[25:375] - 2.3) / 50.0), abs=2e-3)


def test_friction_torque_formula_by_hand():
    e = ExtraTerms(1, coulomb_Nm=np.array([0.2]), viscous_Nm_s=np.array([0.05]),
                   stribeck_Nm=np.array([0.1]), stribeck_vel_rad_s=np.array([0.5]))  # fmt: skip
    qd = 1.0
    sgn = 2 / np.pi * np.arctan(qd / 0.01)
    expected = -(0.2 * sgn + 0.05 * qd + 0.1 * np.exp(-4.0) * sgn)
    assert e.friction_torque(np.array([qd]))[0] == pytest.approx(expected)
    assert e.state_dependent


def test_viscous_extra_decays_exponentially(rotor):
    # stepped in Python: v(t) = v0 exp(-b t / I) with b = 0.05, I = 0.1 -> v(1 s) = 2 e^-0.5
    space = ParamSpace(params=[P("b", "extra.viscous:j", 0.05, 0, 1)])
    res = BatchSimulator(rotor, space, nthread=1).run(
        [[0.05]], [[0.0]], [[2.0]], np.zeros((1, 1000, 1))
    )
    assert res.qvel[0, -1, 0] == pytest.approx(2 * np.exp(-0.5), rel=2e-3)


def test_divergence_is_flagged_not_raised(rotor):
    # negative damping makes the rotor spin up without bound
    space = ParamSpace(params=[P("b", "joint.damping:j", 0.0, -100, 1)])
    res = BatchSimulator(rotor, space, nthread=1, max_speed=100).run(
        [[0.0], [-100.0]], np.zeros((2, 1)), np.ones((2, 1)), np.zeros((2, 2000, 1))
    )
    assert res.unstable.tolist() == [False, True]


def test_mujoco_warnings_are_counted_not_logged(rotor, tmp_path, monkeypatch):
    # damping -1e5 on 0.1 kg m^2: qacc overflows, MuJoCo warns and resets the state
    monkeypatch.chdir(tmp_path)
    space = ParamSpace(params=[P("b", "joint.damping:j", 0.0, -1e6, 1)])
    res = BatchSimulator(rotor, space, nthread=2, max_speed=1e30).run(
        np.full((4, 1), -1e5), np.zeros((4, 1)), np.ones((4, 1)), np.zeros((4, 3000, 1))
    )
    assert res.unstable.all()  # caught by the reset (time jumps back), not by the speed
    assert res.warnings >= 4
    assert not (tmp_path / "MUJOCO_LOG.TXT").exists()
    assert mujoco.get_mju_user_warning() is None  # the previous handler is back


def test_observation_noise_has_the_set_std(rotor):
    space = ParamSpace(
        params=[P("n", "extra.pos_noise:j", 0.0, 0, 1), P("v", "extra.vel_noise:j", 0.0, 0, 1)]
    )
    sim_b = BatchSimulator(rotor, space, nthread=1)
    clean = sim_b.run([[0.0, 0.0]], [[0.0]], [[1.0]], np.zeros((1, 4000, 1)))
    noisy = sim_b.run(
        [[0.01, 0.2]], [[0.0]], [[1.0]], np.zeros((1, 4000, 1)), rng=np.random.default_rng(0)
    )
    dq = (noisy.qpos - clean.qpos)[0, 1:, 0]
    dv = (noisy.qvel - clean.qvel)[0, 1:, 0]
    assert dq.std() == pytest.approx(0.01, rel=0.05) and dv.std() == pytest.approx(0.2, rel=0.05)
    assert noisy.qpos[0, 0, 0] == 0.0  # the initial state is given, not observed


def test_default_thread_and_worker_counts_follow_the_cores_this_process_may_use(toy_xml):
    """Under an affinity of one core (taskset, a container's cpuset) the batch simulator and the
    seed sweep size themselves to that core, not to the machine's count."""
    import subprocess
    import sys

    code = (
        "import os, sys; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"
        "from sim2real.learn.seeds import default_workers\n"
        "from sim2real.params.space import ParamSpace\n"
        "from sim2real.sim.batch import BatchSimulator\n"
        "from sim2real.sim.model import load_sim_model\n"
        "sim = load_sim_model(sys.argv[1])\n"
        "print(default_workers(1), BatchSimulator(sim, ParamSpace(params=[])).nthread)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(toy_xml)], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["1", "1"]
