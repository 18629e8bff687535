"""Multiple-shooting segments (``sysid.segments``) cut from hand-made logs of a two-joint
model: how many segments fit, which a gap removes, where each one's controls, measurements
and initial state come from, and the smoothed initial velocity of a known quadratic motion."""

from __future__ import annotations

import numpy as np
import pytest

from sim2real.core.errors import InputError
from sim2real.sim.logs import RobotLog
from sim2real.sim.model import sim_model_from_xml
from sim2real.sysid.segments import make_segments

DT = 0.01
TWO_JOINTS = f"""
<mujoco>
  <compiler angle="radian"/>
  <option timestep="{DT}"/>
  <worldbody>
    <body name="a">
      <joint name="ja" type="hinge" axis="0 1 0" ref="0.7"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.02"/>
      <body name="b" pos="0 0 -0.3">
        <joint name="jb" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.2" size="0.02"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor name="ma" joint="ja"/>
    <motor name="mb" joint="jb"/>
  </actuator>
</mujoco>
"""


@pytest.fixture(scope="module")
def sim():
    return sim_model_from_xml(TWO_JOINTS)


def log_of_jb(n: int = 101, valid: np.ndarray | None = None, source: str = "log.csv") -> RobotLog:
    """``n`` samples of joint jb driven by actuator mb: qpos = k / 1000, qvel = k, ctrl = k at
    sample k (so every array says which sample it was taken from)."""
    k = np.arange(n, dtype=float)
    return RobotLog(
        source=source,
        time_s=k * DT,
        qpos=(k / 1000)[:, None],
        qvel=k[:, None],
        ctrl=k[:, None],
        joints=["jb"],
        actuators=["mb"],
        valid=np.ones(n, bool) if valid is None else valid,
        dt_s=DT,
    )


def test_segments_tile_the_log_without_overlap(sim):
    # 101 samples, 0.2 s = 20 steps: a segment needs 21 samples (s .. s + 20), so it starts at
    # 0, 20, 40, 60, 80
    seg = make_segments(sim, [log_of_jb()], 0.2, state_filter_s=0.0)
    assert len(seg) == 5 and seg.steps == 20 and seg.dt_s == DT
    assert seg.t0_s == pytest.approx([0.0, 0.2, 0.4, 0.6, 0.8])
    assert seg.meas_q.shape == (5, 21, 1) and seg.meas_v.shape == (5, 21, 1)
    assert seg.meas_v[2, :, 0].tolist() == list(range(40, 61))  # samples 40..60
    assert seg.log_index.tolist() == [0] * 5


def test_stride_overlaps_the_segments(sim):
    # stride 0.1 s = 10 steps: starts 0, 10, ..., 80 (s + 20 <= 100)
    seg = make_segments(sim, [log_of_jb()], 0.2, stride_s=0.1, state_filter_s=0.0)
    assert (seg.t0_s / DT).round().astype(int).tolist() == list(range(0, 81, 10))


def test_a_gap_removes_every_segment_that_touches_it(sim):
    # sample 60 in a gap: the segments 40..60 and 60..80 both hold it
    valid = np.ones(101, bool)
    valid[60] = False
    seg = make_segments(sim, [log_of_jb(valid=valid)], 0.2, state_filter_s=0.0)
    assert (seg.t0_s / DT).round().astype(int).tolist() == [0, 20, 80]


def test_controls_carry_the_history_for_the_delay(sim):
    # hist 0.05 s = 5 steps before and after the 20 of the segment: ctrl rows of samples
    # s - 5 .. s + 24, clipped to the log (the first segment repeats sample 0), on actuator mb
    # only (ma is not in the log: 0)
    seg = make_segments(sim, [log_of_jb()], 0.2, hist_s=0.05, state_filter_s=0.0)
    assert seg.hist == 5 and seg.ctrl.shape == (5, 30, 2)
    assert seg.ctrl[1, :, 1].tolist() == list(range(15, 45))
    assert seg.ctrl[0, :, 1].tolist() == [0] * 5 + list(range(0, 25))
    assert seg.ctrl[4, :, 1].tolist() == list(range(75, 100)) + [100] * 5
    assert not seg.ctrl[..., 0].any()


def test_initial_state_puts_the_log_into_the_model(sim):
    # jb is the second joint (qpos and dof address 1); ja, not logged, stays at the model's
    # qpos0 (its ref, 0.7 rad) and at rest. Raw samples (no filter): qpos k / 1000, qvel k
    seg = make_segments(sim, [log_of_jb()], 0.2, state_filter_s=0.0)
    assert seg.q_adr.tolist() == [1] and seg.v_adr.tolist() == [1]
    assert seg.qpos0[:, 0] == pytest.approx([0.7] * 5)
    assert seg.qpos0[:, 1] == pytest.approx([0.0, 0.02, 0.04, 0.06, 0.08])
    assert seg.qvel0[:, 1].tolist() == [0, 20, 40, 60, 80]
    assert not seg.qvel0[:, 0].any()


def test_initial_velocity_from_the_positions_not_the_noisy_velocities(sim):
    # q(t) = 0.5 a t^2 + b t with a = 2 rad/s^2, b = -0.3 rad/s, logged velocity = the truth
    # plus 0.5 rad/s noise: the quadratic Savitzky-Golay fit is exact for a quadratic, so the
    # initial velocity is a t0 + b at every segment start (the log's edges included)
    log = log_of_jb()
    t = log.time_s
    log.qpos = (0.5 * 2.0 * t**2 - 0.3 * t)[:, None]
    log.qvel = (2.0 * t - 0.3 + 0.5 * np.random.default_rng(0).standard_normal(t.size))[:, None]
    seg = make_segments(sim, [log], 0.2, state_filter_s=0.05)
    assert seg.qvel0[:, 1] == pytest.approx(2.0 * seg.t0_s - 0.3, abs=1e-9)
    assert seg.qpos0[:, 1] == pytest.approx(t[::20][:5] ** 2 - 0.3 * t[::20][:5], abs=1e-12)
    # the measurements themselves are the logged ones, unsmoothed
    assert np.array_equal(seg.meas_v[0, :, 0], log.qvel[:21, 0])


def test_initial_state_is_the_centred_quadratic_fit_of_noisy_positions(sim):
    # positions with +-1 mrad alternating noise: the initial state is the least-squares
    # quadratic through the 5 samples (0.05 s) centred on the start (the first 5 at the log's
    # start), its value and slope there: np.polyfit, an independent fit
    log = log_of_jb()
    t = log.time_s
    log.qpos = (np.sin(3 * t) + 0.001 * (-1.0) ** np.arange(t.size))[:, None]
    seg = make_segments(sim, [log], 0.2, state_filter_s=0.05)
    for s, q0, v0 in zip((0, 20, 40, 60, 80), seg.qpos0[:, 1], seg.qvel0[:, 1], strict=True):
        w = slice(max(s - 2, 0), max(s - 2, 0) + 5)
        c = np.polyfit(t[w] - t[s], log.qpos[w, 0], 2)
        assert q0 == pytest.approx(c[2], abs=1e-9)
        assert v0 == pytest.approx(c[1], abs=1e-6)
    assert abs(seg.qpos0[1, 1] - log.qpos[20, 0]) > 5e-4  # the noise was smoothed away


def test_several_logs_are_indexed_and_subset(sim):
    seg = make_segments(sim, [log_of_jb(), log_of_jb(n=50)], 0.2, state_filter_s=0.0)
    # the second log (50 samples) holds starts 0 and 20 (s + 20 <= 49)
    assert seg.log_index.tolist() == [0] * 5 + [1] * 2
    sub = seg.subset(np.array([5, 0]))
    assert len(sub) == 2 and sub.log_index.tolist() == [1, 0]
    assert sub.t0_s.tolist() == [0.0, 0.0] and sub.steps == 20
    assert np.array_equal(sub.ctrl[0], seg.ctrl[5])


def test_bad_logs_are_refused(sim):
    with pytest.raises(InputError, match="no logs"):
        make_segments(sim, [], 0.2)
    unsampled = log_of_jb()
    unsampled.dt_s = None
    with pytest.raises(ValueError, match="resampled"):
        make_segments(sim, [unsampled], 0.2)
    other = log_of_jb(source="other.csv")
    other.joints = ["ja"]
    with pytest.raises(InputError, match=r"other\.csv.*same joints"):
        make_segments(sim, [log_of_jb(), other], 0.2)
    # 20 samples cannot hold a 0.2 s segment (21 samples)
    with pytest.raises(InputError, match=r"no segment of 0\.2 s"):
        make_segments(sim, [log_of_jb(n=20)], 0.2)
