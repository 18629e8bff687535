"""VecStepper: per-copy parameters, both stepping paths agree with plain ``mj_step``."""

from __future__ import annotations

import mujoco
import numpy as np

from sim2real.sim.builtin import resolve_model
from sim2real.sim.extra import ExtraTerms
from sim2real.sim.model import load_sim_model
from sim2real.sim.vecstep import STATE_SPEC, BatchExtras, VecStepper


def _pendulum():
    return load_sim_model(resolve_model("pendulum-dfki")[0]).model


def _reference(model, qpos0, qvel0, ctrl, qfrc):
    """Plain mj_step of one model: the ground truth."""
    d = mujoco.MjData(model)
    d.qpos[:], d.qvel[:] = qpos0, qvel0
    out = []
    for k in range(ctrl.shape[0]):
        d.ctrl[:], d.qfrc_applied[:] = ctrl[k], qfrc[k]
        mujoco.mj_step(model, d)
        out.append((d.qpos.copy(), d.qvel.copy()))
    return out


def test_rollout_path_matches_mj_step_per_copy():
    base = _pendulum()
    st = VecStepper(base, 3)
    masses = [0.1, 0.2, 0.4]  # each copy its own mass: different trajectories
    for m, mass in zip(st.models, masses, strict=True):
        m.body_mass[1] = mass
    st.reset_rows(np.arange(3), np.full((3, 1), 0.5), np.zeros((3, 1)))
    ctrl = np.full((3, 5, 1), 0.3)
    qfrc = np.full((3, 5, 1), -0.1)
    st.step(ctrl, qfrc)
    for i in range(3):
        ref = _reference(st.models[i], [0.5], [0.0], ctrl[i], qfrc[i])
        assert np.allclose(st.qpos[i], ref[-1][0], atol=1e-12)
        assert np.allclose(st.qvel[i], ref[-1][1], atol=1e-12)
    assert len({float(q) for q in st.qpos[:, 0]}) == 3


def test_python_path_matches_rollout_with_zero_feedback():
    base = _pendulum()
    a, b = VecStepper(base, 2), VecStepper(base, 2)
    for st in (a, b):
        st.reset_rows(np.arange(2), np.array([[0.2], [-1.0]]), np.array([[0.0], [2.0]]))
    ctrl = np.random.default_rng(0).uniform(-1, 1, (2, 5, 1))
    qfrc = np.zeros((2, 5, 1))
    a.step(ctrl, qfrc)
    b.step(ctrl, qfrc, feedback=lambda k, q, qd, te, m: np.zeros_like(qd))
    assert np.allclose(a.state, b.state, atol=1e-12)


def test_feedback_sees_gravity_and_inertia():
    # the DFKI point mass: tau_ext = -m g cx sin q, inertia = m cx^2 + armature
    base = _pendulum()
    st = VecStepper(base, 1)
    st.reset_rows(np.arange(1), np.array([[np.pi / 2]]), np.zeros((1, 1)))
    seen = {}

    def feedback(k, q, qd, tau_ext, inertia):
        seen.setdefault("tau", tau_ext.copy())
        seen.setdefault("J", inertia.copy())
        return np.zeros_like(qd)

    st.step(np.zeros((1, 1, 1)), np.zeros((1, 1, 1)), feedback)
    m, cx = base.body_mass[1], -base.body_ipos[1, 2]
    assert abs(seen["tau"][0, 0] + m * 9.81 * cx) < 1e-6
    assert abs(seen["J"][0, 0] - (m * cx**2 + 1e-6 + base.dof_armature[0])) < 1e-6


def test_state_restore_is_exact_with_frictionloss():
    # frictionloss goes through the constraint solver: its warm start must not leak
    base = _pendulum()
    st = VecStepper(base, 4)
    st.reset_rows(np.arange(4), np.zeros((4, 1)), np.linspace(-1, 1, 4)[:, None])
    ctrl = np.full((4, 5, 1), 0.8)
    qfrc = np.zeros((4, 5, 1))
    st.step(ctrl, qfrc)
    saved = st.state.copy()
    first = st.step(ctrl, qfrc).copy()
    st.state[:] = saved
    again = st.step(ctrl, qfrc)
    assert np.array_equal(first, again)
    assert first.shape == (4, 5, mujoco.mj_stateSize(base, STATE_SPEC))


def test_batch_extras_friction_matches_extraterms():
    terms = []
    for c in (0.0, 0.1, 0.3):
        e = ExtraTerms(1)
        e.coulomb_Nm[:] = c
        e.viscous_Nm_s[:] = 2 * c
        e.stribeck_Nm[:] = c / 2
        terms.append(e)
    batch = BatchExtras(terms)
    qvel = np.array([[0.5], [-0.2], [1.5]])
    expected = np.stack([terms[i].friction_torque(qvel[i]) for i in range(3)])
    assert np.allclose(batch.friction_torque(qvel), expected)
    assert batch.state_dependent
    assert not BatchExtras([ExtraTerms(1)]).state_dependent


def test_thread_pool_gives_the_same_states():
    base = _pendulum()
    runs = []
    for nthread in (0, 2):
        st = VecStepper(base, 8, nthread=nthread)
        for i, m in enumerate(st.models):
            m.dof_damping[0] = 0.01 * i
        st.reset_rows(np.arange(8), np.linspace(0, 3, 8)[:, None], np.zeros((8, 1)))
        for _ in range(3):
            st.step(np.full((8, 5, 1), 0.5), np.zeros((8, 5, 1)))
        runs.append(st.state.copy())
        st.close()
    assert np.array_equal(runs[0], runs[1])
