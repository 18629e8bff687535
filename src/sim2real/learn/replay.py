"""An exported policy run on a real log, offline (``sim2real policy replay``): the robot-side
runner (``learn.deploy.DeployedPolicy``) fed the log's measured states at its control period,
its torques written beside the log's own commands. What it would have commanded on the real
robot's states, before it drives the robot: torque at its limit, sign flips, commands far from
what the robot's controller did. The states are the log's, not the policy's: no closed loop."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from sim2real.core.atomic import write_text_atomic
from sim2real.core.errors import InputError

if TYPE_CHECKING:
    from sim2real.sim.logs import RobotLog

VELOCITY_FILTER_S = 0.05
"""Width of the Savitzky-Golay fit whose derivative is the velocity of a log without one
(sysid's ``state_filter_s`` default: the same fit sysid starts its segments from)."""


@dataclass
class Replay:
    """``time_s`` (N,) from the log's start; ``q`` / ``qvel`` (N, J) in ``joints`` order;
    ``torque`` (N, A) the policy's [N m] in ``actuators`` order; ``logged`` (N, A) the log's
    own commands there (NaN where the log drives no such actuator); ``notes``: what was done
    to the log (a velocity derived from the positions)."""

    source: str
    joints: list[str]
    actuators: list[str]
    time_s: np.ndarray
    q: np.ndarray
    qvel: np.ndarray
    torque: np.ndarray
    logged: np.ndarray
    action_limit: np.ndarray
    notes: list[str] = field(default_factory=list)

    def summary_lines(self) -> list[str]:
        at_limit = np.abs(self.torque) >= 0.999 * self.action_limit
        flips = np.mean(np.diff(np.sign(self.torque), axis=0) != 0) / (
            self.time_s[1] - self.time_s[0] if len(self.time_s) > 1 else 1.0
        )
        lines = [f"note: {n}" for n in self.notes] + [
            f"{len(self.time_s)} steps of {self.source} ({self.time_s[-1]:.2f} s): torque "
            f"{self.torque.min():.3g}..{self.torque.max():.3g} N m, at the limit "
            f"{100 * at_limit.mean():.1f} % of steps, sign flips {flips:.1f}/s"
        ]
        diff = self.torque - self.logged
        if np.isfinite(diff).any():
            rms = float(np.sqrt(np.nanmean(diff**2)))
            lines.append(f"RMS difference to the log's own command: {rms:.3g} N m (another "
                         "controller drove the robot: a comparison, not an error)")  # fmt: skip
        return lines

    def write_csv(self, path: str | Path) -> None:
        cols = {"time_s": self.time_s}
        for k, j in enumerate(self.joints):
            cols[f"q_{j}"], cols[f"qvel_{j}"] = self.q[:, k], self.qvel[:, k]
        for k, a in enumerate(self.actuators):
            cols[f"policy_torque_{a}"], cols[f"logged_{a}"] = self.torque[:, k], self.logged[:, k]
        rows = np.column_stack(list(cols.values()))
        text = ",".join(cols) + "\n" + "\n".join(",".join(f"{v:.9g}" for v in r) for r in rows)
        write_text_atomic(path, text + "\n")


def replay_log(deployed: str | Path, log: str | Path, mapping: str | Path | None = None) -> Replay:
    """Run the exported policy in ``deployed`` on ``log``'s measured states, resampled to its
    control period; ``mapping`` reads the log's columns (default: the built-in mapping of the
    task's robot). InputError for a legged policy (joint targets, not torques), a log without
    the task's joints, or one shorter than a control period."""
    from sim2real.learn.deploy import DeployedPolicy
    from sim2real.learn.envs import TASKS
    from sim2real.sim.builtin import BUILTINS
    from sim2real.sim.logs import read_log, resample_log
    from sim2real.sim.mapping import load_mapping

    policy = DeployedPolicy(deployed)
    if policy.joint_names:
        why = "a legged policy commands joint targets: replay runs torque policies"
        raise InputError(Path(deployed) / "policy.json", "joint_names", why)
    task = TASKS[policy.env]
    if mapping is None:
        model = task.config_cls.model_fields["model"].default
        if model not in BUILTINS:
            raise InputError("--mapping", None, f"{policy.env}'s robot has no built-in log mapping")
        mapping = BUILTINS[model].mapping
    columns = load_mapping(mapping)
    robot_log = read_log(log, columns)
    no_velocity = [j for j in task.joints if j in columns.joints and not columns.joints[j].velocity]
    notes = []
    if no_velocity:  # read_log's difference of encoder steps: 0 or a spike at each sample
        robot_log = _velocity_from_positions(robot_log, no_velocity, log)
        notes.append(
            f"velocity of {', '.join(no_velocity)} derived from the positions (the mapping "
            f"has no velocity column): Savitzky-Golay, quadratic over {VELOCITY_FILTER_S} s, "
            "as sysid does"
        )
    robot_log = resample_log(robot_log, policy.control_dt)
    missing = [j for j in task.joints if j not in robot_log.joints]
    if missing:
        why = (
            f"no joint {', '.join(missing)} of {policy.env} in the log (it has {robot_log.joints})"
        )
        raise InputError(log, "joints", why)
    if len(robot_log.time_s) < 2:
        raise InputError(log, "time", f"shorter than one control period ({policy.control_dt} s)")
    cols = [robot_log.joints.index(j) for j in task.joints]
    q, qvel = robot_log.qpos[:, cols], robot_log.qvel[:, cols]
    policy.reset()
    torque = np.array([policy.torque({"q": q[k], "qvel": qvel[k]}) for k in range(len(q))])
    logged = np.full(torque.shape, np.nan)
    for k, a in enumerate(task.actuated):
        if a in robot_log.actuators:
            logged[:, k] = robot_log.ctrl[:, robot_log.actuators.index(a)]
    t = robot_log.time_s - robot_log.time_s[0]
    return Replay(str(log), list(task.joints), list(task.actuated), t, q, qvel,
                  torque.reshape(len(q), -1), logged, policy.action_limit, notes)  # fmt: skip


def _velocity_from_positions(robot_log: RobotLog, joints: list[str], log: str | Path) -> RobotLog:
    """The log at its own (median) rate with the velocity of ``joints`` from sysid's smoothed
    derivative of the positions; InputError when the log is too short for it."""
    from sim2real.sim.logs import resample_log
    from sim2real.sysid.segments import smoothed_states

    dt = float(np.median(np.diff(robot_log.time_s)))
    uniform = resample_log(robot_log, dt)
    states = smoothed_states(uniform, VELOCITY_FILTER_S, dt)
    if states is None:
        why = (f"no velocity column for {', '.join(joints)} in the mapping, and "
               f"{uniform.time_s.size} samples every {dt:g} s are too few to derive it from "
               f"the positions over {VELOCITY_FILTER_S} s: map the log's velocity column")  # fmt: skip
        raise InputError(log, "velocity", why)
    cols = [uniform.joints.index(j) for j in joints]
    qvel = uniform.qvel.copy()
    qvel[:, cols] = states[1][:, cols]
    return replace(uniform, qvel=qvel)
