"""Extra evaluation metrics of a task that tracks commanded base velocities (a legged task's
``episode_metrics`` hook, read by :func:`sim2real.learn.evaluate.run_policy`): falls and the
velocity-tracking error per command bin, with the task's targets judged (met / not met).

Definitions:

- **fall**: an episode that ends by a termination (base too low, tilted...) before the time
  limit; the fall rate is their share of the counted episodes.
- **measured velocity of a command segment**: a segment is a run of control steps of one
  episode under the same command (the task redraws it every ``command_resample_s``); its
  measured value is the mean, over the segment's steps after the first ``settle_s``, of the
  base's body-frame linear velocity (x for ``vx``, y for ``vy``) and body-frame angular
  velocity about z (for ``yaw_rate``), read after each step. The step that ends an episode is
  not read (the environment has already reset it); a segment ended by a fall is left out (the
  fall is counted as one), as is a segment with no step after its settling time.
- **tracking error of a bin** ``lo-hi``: the mean of ``|measured - command|`` over the
  segments with ``lo <= |command| < hi`` (a command's top bin also holds its ``hi``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

MEASURED: dict[str, tuple[Callable[[Any], np.ndarray], str]] = {
    "vx": (lambda base: base.lin_vel_b[:, 0], "m/s"),
    "vy": (lambda base: base.lin_vel_b[:, 1], "m/s"),
    "yaw_rate": (lambda base: base.ang_vel_b[:, 2], "rad/s"),
}
"""What is measured against each command: a function of the base
(:class:`~sim2real.learn.envs.legged.BaseState`, (N,) values) and its unit."""


def segment_means(
    command: np.ndarray, measured: np.ndarray, valid: np.ndarray, settle_steps: int, fell: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The command segments of one episode: ``command`` and ``measured`` (T, C) per step,
    ``valid`` (T,) whether a step was read. Returns (S, C) commands and (S, C) measured means
    over each segment's valid steps from ``settle_steps`` on (see the module docstring: the
    last segment is dropped when the episode ``fell``, and segments with no such step)."""
    t = len(command)
    if t == 0:
        return np.zeros((0, command.shape[1])), np.zeros((0, command.shape[1]))
    change = np.flatnonzero(np.any(command[1:] != command[:-1], axis=1)) + 1
    starts, ends = np.r_[0, change], np.r_[change, t]
    if fell:
        starts, ends = starts[:-1], ends[:-1]
    cmds, means = [], []
    for a, b in zip(starts, ends, strict=True):
        keep = valid[a + settle_steps : b]
        if keep.any():
            cmds.append(command[a])
            means.append(measured[a + settle_steps : b][keep].mean(axis=0))
    shape = (0, command.shape[1])
    return (np.array(cmds) if cmds else np.zeros(shape)), (
        np.array(means) if means else np.zeros(shape)
    )


@dataclass(frozen=True)
class BinError:
    """The tracking error of one command in one bin of ``|command|``."""

    command: str
    lo: float
    hi: float
    unit: str
    segments: int
    mean_abs_err: float
    """NaN when no segment falls in the bin."""

    @property
    def key(self) -> str:
        return f"{self.command} {self.lo:g}-{self.hi:g}"


def bin_errors(
    names: tuple[str, ...], cmds: np.ndarray, means: np.ndarray, bins: dict[str, tuple]
) -> list[BinError]:
    """Per command (``names``: the columns of ``cmds`` / ``means``, (S, C)) and per bin
    ``(lo, hi)`` of ``|command|`` (``lo <= |command| < hi``; a command's top bin also holds
    its ``hi``): the mean ``|measured - command|``."""
    out = []
    for c, name in enumerate(names):
        top = max((hi for _, hi in bins.get(name, ())), default=0.0)
        for lo, hi in bins.get(name, ()):
            mag = np.abs(cmds[:, c])
            inside = (mag >= lo) & ((mag < hi) | ((hi == top) & (mag == hi)))
            err = np.abs(means[inside, c] - cmds[inside, c])
            value = float(err.mean()) if err.size else float("nan")
            out.append(BinError(name, lo, hi, MEASURED[name][1], int(inside.sum()), value))
    return out


@dataclass(frozen=True)
class Target:
    """A target on one metric: ``bin`` (a :attr:`BinError.key`, e.g. ``"vx 0.5-1"``) or the
    fall rate (``bin`` None); met when the value is at most ``limit``."""

    limit: float
    bin: str | None = None

    def judge(self, value: float) -> str:
        if not np.isfinite(value):
            return "no data"
        return "met" if value <= self.limit else "not met"


@dataclass
class VelocityMetrics:
    """The metrics of one world (see the module docstring); ``trace``: the first episode of
    environment 0, for the report's plots (per step ``t_s`` (T,), ``command`` and
    ``measured`` (T, C), ``qpos`` (T, nq); ``names``, ``units``, ``model`` (its MJCF path),
    ``fell``)."""

    episodes: int
    falls: int
    episode_s: float
    settle_s: float
    bins: list[BinError]
    targets: list[Target]
    trace: dict[str, Any] | None = None

    @property
    def fall_rate(self) -> float:
        return self.falls / self.episodes if self.episodes else float("nan")

    def value(self, target: Target) -> float:
        if target.bin is None:
            return self.fall_rate
        return next((b.mean_abs_err for b in self.bins if b.key == target.bin), float("nan"))

    def to_dict(self) -> dict[str, Any]:
        return {
            "falls": self.falls,
            "fall_rate": self.fall_rate,
            "settle_s": self.settle_s,
            "tracking": [
                {
                    "command": b.command,
                    "abs_command_range": [b.lo, b.hi],
                    "unit": b.unit,
                    "segments": b.segments,
                    "mean_abs_err": b.mean_abs_err,
                }
                for b in self.bins
            ],
            "targets": [
                {
                    "metric": t.bin or "fall_rate",
                    "limit": t.limit,
                    "value": self.value(t),
                    "verdict": t.judge(self.value(t)),
                }
                for t in self.targets
            ],
        }

    def lines(self) -> list[str]:
        """The printed table: falls, then per command its bins' errors, targets judged."""
        judged = {t.bin: t for t in self.targets}
        fall = _verdict(judged.get(None), self.fall_rate, "%")
        out = [
            f"falls {100 * self.fall_rate:.1f} % of {self.episodes} episodes of {self.episode_s:g} s{fall}"
        ]
        for name in dict.fromkeys(b.command for b in self.bins):
            cells = [
                f"|cmd| {b.lo:g}-{b.hi:g}: {b.mean_abs_err:.3f} ({b.segments} seg)"
                f"{_verdict(judged.get(b.key), b.mean_abs_err, b.unit)}"
                for b in self.bins
                if b.command == name
            ]
            unit = MEASURED[name][1]
            out.append(f"|{name} error| [{unit}]: " + "; ".join(cells))
        return out


def _verdict(target: Target | None, value: float, unit: str) -> str:
    if target is None:
        return ""
    limit = f"{100 * target.limit:g} %" if unit == "%" else f"{target.limit:g}"
    return f" [target <= {limit}: {target.judge(value)}]"


@dataclass(frozen=True)
class VelocityTracking:
    """The hook a velocity-command task declares (``Task.episode_metrics``): its bins of
    ``|command|`` by command, the settling time, the targets."""

    bins: dict[str, tuple[tuple[float, float], ...]]
    settle_s: float = 1.0
    targets: tuple[Target, ...] = ()

    def recorder(self, env: Any, episodes: int) -> VelocityRecorder:
        return VelocityRecorder(self, env, episodes)


@dataclass
class _Totals:
    cmds: list = field(default_factory=list)
    means: list = field(default_factory=list)
    episodes: int = 0
    falls: int = 0


class VelocityRecorder:
    """Reads the commands before and the base after every step of ``env`` (a legged
    :class:`~sim2real.learn.envs.manager.ManagerVecEnv`) during an evaluation; an episode
    counts when the evaluation counts it (``after_step``'s ``counted``), up to ``episodes``."""

    def __init__(self, spec: VelocityTracking, env: Any, episodes: int) -> None:
        self.spec, self.limit = spec, episodes
        self.names = tuple(env.cfg.command_ranges())
        n, t, c = env.num_envs, env.max_episode_steps, len(self.names)
        self.cmd, self.meas = np.zeros((n, t, c)), np.zeros((n, t, c))
        self.valid = np.zeros((n, t), dtype=bool)
        self.pos = np.zeros(n, dtype=int)
        self.qpos0 = np.zeros((t, env.stepper.nq))  # environment 0's first episode
        self.settle_steps = round(spec.settle_s / env.control_dt)
        self.dt, self.episode_s = env.control_dt, env.max_episode_steps * env.control_dt
        self.model = str(env.task.model_path(env.cfg.model))
        self.totals, self.trace = _Totals(), None
        self._before: np.ndarray | None = None

    def before_step(self, env: Any) -> None:
        self._before = env.commands.copy()

    def after_step(self, env: Any, result: Any, counted: np.ndarray) -> None:
        """``counted`` (N,) bool: the rows whose ending episode the evaluation counts."""
        base = env.legged.base(env.stepper.qpos, env.stepper.qvel)
        ended = result.terminated | result.truncated
        rows = np.arange(env.num_envs)
        self.cmd[rows, self.pos] = self._before
        self.meas[rows, self.pos] = np.stack([MEASURED[k][0](base) for k in self.names], 1)
        self.valid[rows, self.pos] = ~ended  # an ended row shows its next episode's start
        if self.trace is None:
            self.qpos0[self.pos[0]] = env.stepper.qpos[0]
        self.pos += 1
        for i in np.flatnonzero(ended):
            self._finish(i, bool(result.terminated[i]), bool(counted[i]))
            self.pos[i] = 0

    def _finish(self, i: int, fell: bool, counted: bool) -> None:
        t = self.pos[i]
        if i == 0 and self.trace is None:
            k = t - 1  # the last step is not read
            self.trace = {
                "t_s": self.dt * np.arange(1, k + 1), "command": self.cmd[0, :k].copy(),
                "measured": self.meas[0, :k].copy(), "qpos": self.qpos0[:k].copy(),
                "names": self.names, "units": [MEASURED[n][1] for n in self.names],
                "model": self.model, "fell": fell,
            }  # fmt: skip
        tot = self.totals
        if not counted or tot.episodes >= self.limit:
            return
        cmds, means = segment_means(
            self.cmd[i, :t], self.meas[i, :t], self.valid[i, :t], self.settle_steps, fell
        )
        tot.cmds.append(cmds)
        tot.means.append(means)
        tot.episodes += 1
        tot.falls += fell

    def result(self) -> VelocityMetrics:
        tot, c = self.totals, len(self.names)
        cmds = np.concatenate(tot.cmds) if tot.cmds else np.zeros((0, c))
        means = np.concatenate(tot.means) if tot.means else np.zeros((0, c))
        bins = bin_errors(self.names, cmds, means, self.spec.bins)
        return VelocityMetrics(
            tot.episodes, tot.falls, self.episode_s, self.spec.settle_s, bins,
            list(self.spec.targets), self.trace,
        )  # fmt: skip
