"""Go-to navigation of the Go1: reach a goal 2-4 m away on flat ground, heading free, learned
two ways (issue 18, part 5: "learn *go there*, not *move joint X by Y*"):

- ``sim2real/Go1GoTo-v0``, the hierarchy: the action is a velocity command ``(vx, vy, yaw
  rate)`` in [-1, 1] x the walking task's command ranges, held for ``command_dt`` (10 Hz) while
  a frozen walking policy of ``sim2real/Go1Velocity-v0`` (``low_level``: a run folder; default
  the shipped one) turns it into joint targets at 50 Hz;
- ``sim2real/Go1GoToJoints-v0``, end to end: the action is the 12 joint targets at 50 Hz, the
  observation the walking task's (commands held at zero) plus the goal.

Both read the goal in the base frame (``goal[0..1]``, m, from the robot's localization); both
are paid ``progress_weight`` per metre of approach, ``reach_bonus`` on arrival (within
``reach_radius_m``: success, the episode ends) and ``-fall_penalty`` on a fall; end to end
also pays the walking task's regularizing terms (its velocity-tracking terms off), which the
hierarchy's walking policy was trained with. Every navigation episode starts a new walking
episode (a fresh robot at the origin, its randomization drawn anew), so realities and
randomization act as in the walking task. The walking environment inside never ends an
episode by its own time limit; the navigation's is ``episode_s``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field, model_validator

from sim2real.core.errors import InputError
from sim2real.learn.envs import go1
from sim2real.learn.envs.manager import ManagerVecEnv
from sim2real.learn.envs.task import task_config
from sim2real.learn.vec import ObsGroup, ObsTerm, StepResult

HIERARCHY_ID = "sim2real/Go1GoTo-v0"
END_TO_END_ID = "sim2real/Go1GoToJoints-v0"
SHIPPED_WALKER = Path(__file__).resolve().parents[1] / "policies" / "go1_velocity"
"""The shipped walking policy (a run folder: policy.pt, its training log and command)."""
GOAL_SCALE = 0.25
WALKER_FIELDS = tuple(go1.Go1VelocityConfig.model_fields)
WORLD_FIELDS = ("model", "params", "actuator", "extra_delay_s")
"""What a reality sets: passed to the walking environment over the walking policy's config."""


class GoToConfig(go1.Go1VelocityConfig):
    """The navigation task's fields over the walking task's (which configure the walking
    environment inside; with a walking policy, over that policy's own config)."""

    low_level: str | None = Field(
        str(SHIPPED_WALKER), description="the walking policy's run folder (hierarchy only)"
    )
    command_dt: float = Field(0.1, gt=0, description="navigation step [s] (hierarchy: 10 Hz)")
    goal_distance_m: tuple[float, float] = Field((2.0, 4.0), description="goal distance range")
    reach_radius_m: float = Field(0.3, gt=0, description="arrived within this distance [m]")
    episode_s: float = Field(15.0, gt=0, description="time limit of a navigation episode [s]")
    progress_weight: float = Field(10.0, ge=0, description="reward per metre of approach")
    reach_bonus: float = Field(10.0, ge=0, description="reward on arrival")
    fall_penalty: float = Field(10.0, ge=0, description="minus this on a fall")

    @model_validator(mode="after")
    def _ranges(self) -> GoToConfig:
        lo, hi = self.goal_distance_m
        if not 0 < lo <= hi:
            raise ValueError(f"goal_distance_m: need 0 < low <= high, got {lo}, {hi}")
        return self


def _walker_config(cfg: GoToConfig, policy: Any) -> dict[str, Any]:
    """The walking environment's config: the walking policy's (minus its training-only start
    states), the world fields set on the navigation config, episodes without a time limit."""
    if policy is not None:
        base = task_config(policy.env_config)
        base.update(cfg.model_dump(include=set(WORLD_FIELDS), exclude_unset=True))
    else:  # end to end: the navigation config's walking fields, commands held at zero
        base = cfg.model_dump(include=set(WALKER_FIELDS), exclude_unset=True)
        base["commands"] = {k: (0.0, 0.0) for k in go1.Go1VelocityConfig.COMMANDS}
        base["reward"] = {**base.get("reward", {}), "track_lin_vel": 0.0, "track_ang_vel": 0.0}
    never = 1e6
    base.update(episode_s=never, success_hold_s=never, command_resample_s=0.0)
    base["desync_episodes"] = False
    return base


def _load_walker(path: str) -> Any:
    from sim2real.learn.policy import load_policy

    try:
        policy = load_policy(path, expected_env_id=go1.ENV_ID)
    except InputError as err:
        raise InputError("config", "low_level", f"{path}: {err.message}") from None
    if not policy.deployable:
        why = f"{path}: the walking policy reads privileged observations"
        raise InputError("config", "low_level", why)
    return policy


class GoToVecEnv:
    """The navigation tasks as a :class:`~sim2real.learn.vec.VecEnv` over the walking task's
    :class:`ManagerVecEnv` (``task.env_id`` picks hierarchy or end to end)."""

    def __init__(
        self, task: Any, num_envs: int, *, seed=0, dr="default", config=None, env_offset=0
    ) -> None:
        cfg = config if config is not None else task.config_cls()
        self.task, self.cfg, self.env_id, self.num_envs = task, cfg, task.env_id, num_envs
        hierarchy = task.env_id == HIERARCHY_ID
        if hierarchy and not cfg.low_level:
            raise InputError("config", "low_level", "the hierarchy needs a walking policy")
        self.walker = _load_walker(cfg.low_level) if hierarchy else None
        inner_cfg = go1.Go1VelocityConfig.model_validate(_walker_config(cfg, self.walker))
        if inner_cfg.history != 1 and not hierarchy:
            raise InputError("config", "history", "end to end reads one frame (history 1)")
        self.inner = ManagerVecEnv(
            go1.TASK, num_envs, seed=seed, dr=dr, config=inner_cfg, env_offset=env_offset
        )
        inner = self.inner
        self.repeat = round(cfg.command_dt / inner.control_dt) if hierarchy else 1
        if hierarchy and abs(self.repeat * inner.control_dt - cfg.command_dt) > 1e-9:
            why = f"{cfg.command_dt} s is not a multiple of the walking step {inner.control_dt} s"
            raise InputError("config", "command_dt", why)
        self.control_dt = inner.control_dt * self.repeat
        self.max_episode_steps = round(cfg.episode_s / self.control_dt)
        ranges = inner_cfg.command_ranges().values()  # what the walking policy was trained on
        self.command_max = np.array([max(abs(a), abs(b)) for a, b in ranges])
        self.action_dim = 3 if hierarchy else inner.action_dim
        self.action_limit = self.command_max.copy() if hierarchy else inner.action_limit
        goal = (ObsTerm("goal[0]", GOAL_SCALE), ObsTerm("goal[1]", GOAL_SCALE))
        if hierarchy:
            own = tuple(ObsTerm(f"last_command[{k}]") for k in range(3))
            policy_group = ObsGroup(goal + own)
        else:
            policy_group = ObsGroup(goal + inner.obs_groups["policy"].terms)
        self.obs_groups = {"policy": policy_group, "privileged": inner.obs_groups["privileged"]}
        self._alloc()

    stepper = property(lambda self: self.inner.stepper)
    _STATE = ("goal", "last", "steps", "ep_return")
    """Per-environment state of the navigation (over the walking environment's own)."""

    def _alloc(self) -> None:
        n = self.num_envs
        self.goal = np.zeros((n, 2))
        self.last = np.zeros((n, self.action_dim))
        self.steps = np.zeros(n, dtype=np.int64)
        self.ep_return = np.zeros(n)

    # -- geometry ------------------------------------------------------------------------------
    def _base(self):
        return self.inner.legged.base(self.inner.stepper.qpos, self.inner.stepper.qvel)

    def _goal_b(self) -> np.ndarray:
        base = self._base()
        d = np.zeros((self.num_envs, 3))
        d[:, :2] = self.goal - base.pos[:, :2]
        return np.einsum("nji,nj->ni", base.rot, d)[:, :2]

    def _distance(self) -> np.ndarray:
        return np.linalg.norm(self.goal - self._base().pos[:, :2], axis=1)

    def _new_goals(self, rows: np.ndarray) -> None:
        streams, (lo, hi) = self.inner.streams, self.cfg.goal_distance_m
        dist = streams.uniform(rows, lo, hi)[:, 0]
        angle = streams.uniform(rows, -np.pi, np.pi)[:, 0]
        start = self._base().pos[rows, :2]
        self.goal[rows] = start + dist[:, None] * np.c_[np.cos(angle), np.sin(angle)]

    def _observe(self, inner_obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        goal = (self._goal_b() * GOAL_SCALE).astype(np.float32)
        own = self.last if self.walker is not None else inner_obs["policy"]
        policy = np.concatenate([goal, own.astype(np.float32)], axis=1)
        return {"policy": policy, "privileged": inner_obs["privileged"]}

    # -- protocol ------------------------------------------------------------------------------
    def reset(self, seed: int | None = None) -> dict[str, np.ndarray]:
        self._inner_obs = self.inner.reset(seed=seed)
        self._alloc()
        self._new_goals(np.arange(self.num_envs))
        return self._observe(self._inner_obs)

    def step(self, action: np.ndarray) -> StepResult:
        n, cfg, inner = self.num_envs, self.cfg, self.inner
        a = np.clip(np.asarray(action, dtype=float).reshape(n, -1)[:, : self.action_dim], -1, 1)
        before = self._distance()
        fell = np.zeros(n, dtype=bool)
        reward = np.zeros(n)
        for _ in range(self.repeat):
            if self.walker is not None:
                inner.commands[:] = a * self.command_max  # also over a fallen row's redraw
                res = inner.step(self.walker.act(self._inner_obs))
            else:
                res = inner.step(a)
                reward += res.reward  # the walking task's regularizers
            self._inner_obs = res.obs
            fell |= res.terminated
        after = self._distance()
        reached = (after < cfg.reach_radius_m) & ~fell
        progress = np.where(fell, 0.0, before - after)  # a fallen robot restarted elsewhere
        reward += cfg.progress_weight * progress + cfg.reach_bonus * reached
        reward -= cfg.fall_penalty * fell
        self.ep_return += reward
        self.steps += 1
        self.last = a
        terminated = reached | fell
        truncated = (self.steps >= self.max_episode_steps) & ~terminated
        obs = final_obs = self._observe(self._inner_obs)
        nan = np.full(n, np.nan)
        info = {k: nan.copy() for k in ("episode_return", "episode_success", "episode_length")}
        done = np.flatnonzero(terminated | truncated)
        if done.size:
            info["episode_return"][done] = self.ep_return[done]
            info["episode_success"][done] = reached[done].astype(float)
            info["episode_length"][done] = self.steps[done]
            self._inner_obs = inner.reset_rows(done)  # a fresh robot at every episode start
            self._new_goals(done)
            for name in self._STATE[1:]:  # the goal was drawn anew
                getattr(self, name)[done] = 0
            obs = self._observe(self._inner_obs)
        return StepResult(obs, reward.astype(np.float32), terminated, truncated, final_obs, info)

    def get_state(self) -> dict[str, Any]:
        own = {k: getattr(self, k).copy() for k in self._STATE}
        inner_obs = {k: v.copy() for k, v in self._inner_obs.items()}
        return {"inner": self.inner.get_state(), "inner_obs": inner_obs, **own}

    def set_state(self, state: dict[str, Any]) -> None:
        self.inner.set_state(state["inner"])
        self._inner_obs = {k: v.copy() for k, v in state["inner_obs"].items()}
        for k in self._STATE:
            setattr(self, k, state[k].copy())

    def close(self) -> None:
        self.inner.close()


@dataclass(frozen=True)
class TimeToGoal:
    """Evaluation metrics of a navigation task: falls and the time to the goal of the
    episodes that arrive (``recorder`` protocol of ``Task.episode_metrics``)."""

    def recorder(self, env: Any, episodes: int) -> _Recorder:
        return _Recorder(env.control_dt)


@dataclass
class _Recorder:
    dt: float
    times: list[float] = field(default_factory=list)
    falls: int = 0
    ended: int = 0

    def before_step(self, env: Any) -> None:
        pass

    def after_step(self, env: Any, result: Any, counted: np.ndarray) -> None:
        for i in np.flatnonzero(counted):
            self.ended += 1
            self.falls += bool(result.terminated[i] and result.info["episode_success"][i] < 0.5)
            if result.info["episode_success"][i] > 0.5:
                self.times.append(float(result.info["episode_length"][i]) * self.dt)

    def result(self) -> _Recorder:
        return self

    def to_dict(self) -> dict[str, Any]:
        t = np.array(self.times)
        return {
            "fall_rate": self.falls / max(self.ended, 1),
            "time_to_goal_median_s": float(np.median(t)) if t.size else None,
            "time_to_goal_mean_s": float(t.mean()) if t.size else None,
        }

    def lines(self) -> list[str]:
        d = self.to_dict()
        t = d["time_to_goal_median_s"]
        time = f"{t:.2f} s median of {len(self.times)} arrivals" if t is not None else "no arrival"
        return [f"falls {100 * d['fall_rate']:.1f} % of {self.ended}; time to goal {time}"]


def _task(env_id: str) -> Any:
    return replace(
        go1.TASK,
        env_id=env_id,
        config_cls=GoToConfig,
        floating_base=None,  # export: no joint contract (the hierarchy's actions are commands)
        episode_metrics=TimeToGoal(),
        vec_env=GoToVecEnv,
    )


HIERARCHY_TASK = _task(HIERARCHY_ID)
END_TO_END_TASK = _task(END_TO_END_ID)
TASKS = (HIERARCHY_TASK, END_TO_END_TASK)
