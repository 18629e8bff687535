"""The velocity-command task's evaluation metrics (learn/envs/velocity_metrics) on scripted
traces whose figures are computed by hand: command segments, the settling time, the step that
ends an episode (not read), a fall's segment (left out), bins of |command|, falls, the episode
quota of the evaluation, the targets judged."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from sim2real.learn.envs.velocity_metrics import (
    Target,
    VelocityTracking,
    bin_errors,
    segment_means,
)

SPEC = VelocityTracking(
    bins={"vx": ((0.0, 0.5), (0.5, 1.0)), "vy": ((0.0, 0.25), (0.25, 0.5))},
    settle_s=0.5,  # one step of 0.5 s
    targets=(Target(0.05), Target(0.1, "vx 0.5-1")),
)


def test_segments_skip_the_settling_steps_and_unread_steps():
    cmd = np.array([[0.8]] * 4 + [[-0.6]] * 6)
    meas = np.array([0, 0.5, 0.7, 0.9, 0, -0.2, -0.5, -0.7, -0.5, 9.0])[:, None]
    valid = np.r_[np.ones(9, bool), False]  # the last step was not read
    cmds, means = segment_means(cmd, meas, valid, settle_steps=1, fell=False)
    # (0.5 + 0.7 + 0.9) / 3 = 0.7; (-0.2 - 0.5 - 0.7 - 0.5) / 4 = -0.475
    assert cmds[:, 0] == pytest.approx([0.8, -0.6]) and means[:, 0] == pytest.approx([0.7, -0.475])
    cmds, means = segment_means(cmd, meas, valid, settle_steps=1, fell=True)
    assert cmds[:, 0] == pytest.approx([0.8]) and means[:, 0] == pytest.approx([0.7])
    # a segment with no read step after its settling time counts for nothing
    _, means = segment_means(cmd[:5], meas[:5], valid[:5], settle_steps=4, fell=False)
    assert len(means) == 0


def test_bins_of_the_command_magnitude():
    names = ("vx",)
    cmds, means = np.array([[0.8], [-0.6], [0.2]]), np.array([[0.7], [-0.475], [0.0]])
    low, high = bin_errors(names, cmds, means, {"vx": ((0.0, 0.5), (0.5, 1.0))})
    assert (low.segments, high.segments) == (1, 2)
    assert low.mean_abs_err == pytest.approx(0.2)
    assert high.mean_abs_err == pytest.approx((0.1 + 0.125) / 2)  # 0.1125 m/s
    assert high.key == "vx 0.5-1" and high.unit == "m/s"
    # a bin holds its lower end, the top bin its upper end too: 0.5 in 0.5-1 only, 1.0 counted
    low, high = bin_errors(names, np.array([[0.5], [1.0]]), np.array([[0.4], [0.8]]),
                           {"vx": ((0.0, 0.5), (0.5, 1.0))})  # fmt: skip
    assert (low.segments, high.segments) == (0, 2) and high.mean_abs_err == pytest.approx(0.15)
    (empty,) = bin_errors(names, cmds[:0], means[:0], {"vx": ((0.5, 1.0),)})
    assert empty.segments == 0 and np.isnan(empty.mean_abs_err)


class ScriptedEnv:
    """Two environments of 6 steps of 0.5 s; commands before and base velocities after each
    step, and the step's ends, from a script (what the recorder reads of a legged env)."""

    def __init__(self, commands, vx, terminated, truncated):
        self.script = (commands, vx, terminated, truncated)
        self.num_envs, self.max_episode_steps, self.control_dt, self.k = 2, 6, 0.5, 0
        self.cfg = SimpleNamespace(model="m", command_ranges=lambda: {"vx": 0, "vy": 0})
        self.task = SimpleNamespace(model_path=lambda name: "scene.xml")
        self.stepper = SimpleNamespace(nq=1, qpos=np.zeros((2, 1)), qvel=np.zeros((2, 1)))
        self.legged = SimpleNamespace(base=lambda qpos, qvel: self._base)
        self.commands = np.c_[commands[0], np.zeros(2)]

    def step(self):
        commands, vx, terminated, truncated = self.script
        v = np.c_[vx[self.k], np.zeros(2), np.zeros(2)]
        self._base = SimpleNamespace(lin_vel_b=v, ang_vel_b=np.zeros((2, 3)))
        self.stepper.qpos = np.full((2, 1), float(self.k))
        result = SimpleNamespace(terminated=terminated[self.k], truncated=truncated[self.k])
        self.k += 1
        if self.k < len(commands):
            self.commands = np.c_[commands[self.k], np.zeros(2)]
        return result


def scripted():
    # env 0: vx commands 0.8 then -0.6, runs to the time limit (its 6th step is not read);
    # env 1: 0.5, then 0.9 from its 4th step, when it falls (that segment is left out)
    commands = [(0.8, 0.5), (0.8, 0.5), (0.8, 0.5), (-0.6, 0.9), (-0.6, 0.0), (-0.6, 0.0)]
    vx = [(0.2, 0.1), (0.7, 0.3), (0.9, 0.4), (0.0, 9.0), (-0.5, 0.0), (9.0, 0.0)]
    terminated = [np.array(t) for t in ([0, 0], [0, 0], [0, 0], [0, 1], [0, 0], [0, 0])]
    truncated = [np.array(t) for t in ([0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [1, 0])]
    return ScriptedEnv(commands, vx, [t > 0 for t in terminated], [t > 0 for t in truncated])


def record(episodes):
    env = scripted()
    rec = SPEC.recorder(env, episodes)
    for _ in range(6):
        rec.before_step(env)
        result = env.step()
        rec.after_step(env, result, result.terminated | result.truncated)
    return rec.result()


def test_falls_and_tracking_error_of_scripted_episodes():
    m = record(episodes=2)
    assert (m.episodes, m.falls, m.fall_rate) == (2, 1, 0.5)
    vx_low, vx_high, vy_low, vy_high = m.bins
    # vx segments: env 0 (0.8, mean of 0.7 and 0.9 = 0.8: error 0), env 0 (-0.6, -0.5: 0.1),
    # env 1 (0.5, mean of 0.3 and 0.4 = 0.35: 0.15); env 1's 0.9 segment ended by its fall
    assert vx_high.segments == 3 and vx_high.mean_abs_err == pytest.approx(0.25 / 3)
    assert vx_low.segments == 0 and np.isnan(vx_low.mean_abs_err)
    assert vy_low.segments == 3 and vy_low.mean_abs_err == 0.0 and vy_high.segments == 0
    falls, vx = m.lines()[0], m.lines()[1]
    assert falls == "falls 50.0 % of 2 episodes of 3 s [target <= 5 %: not met]"
    assert "|cmd| 0.5-1: 0.083 (3 seg) [target <= 0.1: met]" in vx
    verdicts = [t["verdict"] for t in m.to_dict()["targets"]]
    assert verdicts == ["not met", "met"]
    # the trace: environment 0's first episode without its unread last step
    assert m.trace["measured"][:, 0] == pytest.approx([0.2, 0.7, 0.9, 0.0, -0.5])
    assert m.trace["t_s"] == pytest.approx([0.5, 1.0, 1.5, 2.0, 2.5]) and not m.trace["fell"]
    assert m.trace["qpos"][:, 0] == pytest.approx([0, 1, 2, 3, 4])


def test_only_the_episodes_the_evaluation_counts():
    # a quota of one episode: env 1's fall ends first (step 4) and is the only one counted
    m = record(episodes=1)
    assert (m.episodes, m.falls) == (1, 1)
    assert m.bins[1].segments == 1 and m.bins[1].mean_abs_err == pytest.approx(0.15)
    assert Target(0.1).judge(float("nan")) == "no data"
