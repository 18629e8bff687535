"""A *task*: what makes one learning environment out of the generic batched machinery
(:class:`~sim2real.learn.envs.manager.ManagerVecEnv`), as data.

A task names its joints (observed, with a goal each may have), the joints the action drives,
the model parameters randomization may touch, its observation, reward and termination terms
(functions of :mod:`sim2real.learn.envs.terms`) and its default randomization; its config
(a :class:`TaskConfig` subclass) carries the defaults a user may override: which observation
terms the policy reads, their scales, the reward weights. The machinery knows no robot.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field, model_validator

from sim2real.core.errors import InputError
from sim2real.learn.envs import terms
from sim2real.learn.randomization import Randomization
from sim2real.sim.builtin import resolve_model
from sim2real.sim.names import ModelNameFields


def check_names(section: str, given, known) -> None:
    """A name of ``given`` not in ``known``: ValueError naming it with close matches."""
    for name in given:
        if name not in known:
            close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.4)
            hint = f"; close matches: {', '.join(close)}" if close else ""
            raise ValueError(
                f"{section}.{name}: unknown {section} term{hint} (have: {', '.join(known)})"
            )


class TaskConfig(ModelNameFields):
    """Everything that defines an environment apart from the randomization. A task's
    subclass sets the class variables (its terms and their defaults) and the field defaults."""

    OBS: ClassVar[tuple[str, ...]] = ()
    """Observation terms of the task (the policy frame reads ``observations`` of them)."""
    FRAME: ClassVar[tuple[str, ...] | None] = None
    """The default policy frame (None: every term of ``OBS``)."""
    SCALES: ClassVar[dict[str, float]] = {}
    """Default scale by scale key (a joint term's kind, e.g. ``qvel`` for every joint)."""
    REWARD: ClassVar[dict[str, float]] = {}
    """Default weight by reward term (0: off)."""
    COMMANDS: ClassVar[dict[str, tuple[float, float]]] = {}
    """Default range by command (drawn uniformly per environment at every episode start)."""

    model: str = Field(
        ..., description="built-in name, the task's bundled model, or MJCF or URDF path"
    )
    params: dict[str, float] = Field(
        default_factory=dict,
        description="absolute values by parameter name or target, on top of the model",
    )
    actuator: dict[str, Any] | None = Field(None, description="actuator model config")
    extra_delay_s: float = Field(0.0, ge=0, le=0.2, description="added action delay [s]")
    torque_limit_Nm: float = Field(
        1.0, gt=0, description="actions in [-1, 1] scale to this effort (N m, or N on a slider)"
    )
    control_dt: float = Field(
        0.01, gt=0, description="policy step [s] (MuJoCo substeps in between)"
    )
    episode_s: float = Field(10.0, gt=0, description="time limit of an episode [s]")
    success_band_rad: float = Field(
        0.2, gt=0, description="every goal joint within this of its goal counts as up [rad]"
    )
    success_hold_s: float = Field(
        2.0, gt=0, description="an episode succeeds after this long up without interruption [s]"
    )
    history: int = Field(
        3, ge=1, le=32, description="past observation frames stacked in the policy's input"
    )
    init_q_rad: float = Field(0.05, ge=0, description="initial positions uniform in +-this")
    init_qvel_rad_s: float = Field(0.05, ge=0, description="initial speeds uniform in +-this")
    init_random_share: float = Field(
        0.0,
        ge=0,
        le=1,
        description="training aid: this share of the episodes starts with every hinge joint "
        "anywhere on the circle (the rest as init_q_rad says), so the learner meets the states "
        "near the goal before it can swing there",
    )
    init_goal_share: float = Field(
        0.0,
        ge=0,
        le=1,
        description="training aid: this share of the episodes starts at the goal (within "
        "init_q_rad / init_qvel_rad_s of it), so the learner meets holding the goal early",
    )
    goal_start_fall_rad: float | None = Field(
        None,
        gt=0,
        description="training aid: an episode that starts at the goal (init_goal_share) ends, "
        "terminated, once a goal joint is this far from its goal [rad]: otherwise a policy that "
        "loses the hold goes on earning by whirling through the top, a local optimum that PPO "
        "and SAC did not leave on the pendubot",
    )
    push_duration_s: float = Field(0.1, gt=0, description="how long a push torque acts [s]")
    desync_episodes: bool = Field(
        False,
        description="training aid: each environment's first episode starts at a random step "
        "of the time limit, so every rollout sees all phases of an episode",
    )
    observations: list[str] | None = Field(
        None,
        min_length=1,
        description="observation terms of the policy frame, in order (default: the task's)",
    )
    scales: dict[str, float] = Field(
        default_factory=dict,
        description="scale by term kind over the task's defaults (value fed = raw x scale)",
    )
    reward: dict[str, float] = Field(
        default_factory=dict, description="weights by reward term over the task's defaults"
    )
    commands: dict[str, tuple[float, float]] = Field(
        default_factory=dict,
        description="[low, high] by command over the task's defaults: each episode draws "
        "its command uniformly in it",
    )
    nthread: int = Field(0, ge=0, description="rollout threads (0: the calling thread)")

    @model_validator(mode="after")
    def _known_terms(self) -> TaskConfig:
        check_names("observations", self.observations or [], self.OBS)
        check_names("scales", self.scales, self.SCALES)
        check_names("reward", self.reward, self.REWARD)
        check_names("commands", self.commands, self.COMMANDS)
        for name, (lo, hi) in self.commands.items():
            if lo > hi:
                raise ValueError(f"commands.{name}: inverted range [{lo}, {hi}]")
        if self.init_random_share + self.init_goal_share > 1:
            raise ValueError("init_goal_share: with init_random_share more than every episode")
        return self

    def command_ranges(self) -> dict[str, tuple[float, float]]:
        return {**self.COMMANDS, **self.commands}

    def weights(self) -> dict[str, float]:
        return {**self.REWARD, **self.reward}

    def scale(self, key: str) -> float:
        return {**self.SCALES, **self.scales}[key]

    def policy_terms(self) -> tuple[str, ...]:
        if self.observations is not None:
            return tuple(self.observations)
        return self.FRAME if self.FRAME is not None else self.OBS


TRAINING_ONLY_FIELDS = (
    "init_q_rad",
    "init_qvel_rad_s",
    "init_random_share",
    "init_goal_share",
    "goal_start_fall_rad",
    "desync_episodes",
)
"""Environment fields that help training (wider start states, goal starts that end when they
fall); evaluation starts and ends episodes as the task says (the environment's defaults)."""


def task_config(env_config: dict) -> dict:
    """The policy's environment config without its training-only fields."""
    return {k: v for k, v in env_config.items() if k not in TRAINING_ONLY_FIELDS}


@dataclass(frozen=True)
class ObsSpec:
    """An observation term: its function and the key of its scale."""

    func: terms.ObsFn
    scale_key: str | None = None
    """None: scale 1."""


@dataclass(frozen=True)
class Task:
    """What a task file defines (see the module docstring). ``joints``: observed joints, in
    the order terms index them; ``goal``: goal position by joint (success band, reward
    distance); ``hinges``: joints whose distance to the goal wraps; ``actuated``: the joints
    the action drives (one MuJoCo actuator each, named like the joint); ``push_joint``: where
    ``env.push_Nm`` acts (a free joint: horizontally, a direction drawn per push); ``models``: MJCF files
    bundled with the task, by name."""

    env_id: str
    config_cls: type[TaskConfig]
    joints: tuple[str, ...]
    goal: dict[str, float]
    actuated: tuple[str, ...]
    model_rows: list
    observations: dict[str, ObsSpec]
    privileged: dict[str, ObsSpec]
    rewards: dict[str, Callable | type]
    default_dr: Path | Randomization
    hinges: tuple[str, ...] | None = None
    terminations: dict[str, Callable] = field(default_factory=dict)
    push_joint: str | None = None
    models: dict[str, Path] = field(default_factory=dict)
    floating_base: str | None = None
    """The free joint of a robot on a floating base (a legged task: its config is a
    :class:`~sim2real.learn.envs.legged.LeggedConfig`, its action joint position targets)."""
    feet: tuple[str, ...] = ()
    """Foot names of a legged task: the model has sensors ``<foot>_pos`` and ``<foot>_touch``."""
    init_key: str | None = None
    """The model's keyframe every episode starts from (None: ``qpos0``); offsets of
    ``init_q_rad`` are added to the task's joints."""
    episode_metrics: Any = None
    """Extra evaluation metrics: an object whose ``recorder(env, episodes)`` reads every step
    of an evaluation (``before_step(env)``, ``after_step(env, result, counted)``) and gives
    ``result()`` (with ``to_dict()`` and ``lines()``), e.g.
    :class:`~sim2real.learn.envs.velocity_metrics.VelocityTracking`; None: none."""
    vec_env: Any = None
    """The batched environment class built for the task (same constructor as
    :class:`~sim2real.learn.envs.manager.ManagerVecEnv`, the default when None): a task over
    another task's environment, e.g. navigation over walking (:mod:`.goto`)."""

    def model_path(self, name: str) -> Path:
        """The model file of a config's ``model``: one the task bundles, a built-in or a path
        (an InputError naming ``config``'s ``model`` otherwise)."""
        try:
            return resolve_model(name, own=self.models)[0]
        except InputError as err:
            raise InputError("config", "model", f"{err.field}: {err.message}") from None


def hinge_terms(joints: tuple[str, ...]) -> tuple[dict[str, ObsSpec], dict[str, ObsSpec]]:
    """The policy terms ``q, cos_q, sin_q, qvel`` of each hinge (``q[k]``... with several:
    element k of the robot's measurement ``q``, the name the robot-side runner reads) and the
    privileged ``cos_q_true, sin_q_true, qvel_true`` of the noiseless state (suffixed 1, 2...)."""
    obs, priv = {}, {}
    for k in range(len(joints)):
        s = "" if len(joints) == 1 else str(k + 1)
        i = "" if len(joints) == 1 else f"[{k}]"
        obs[f"q{i}"] = ObsSpec(terms.joint_angle(k), "q")
        obs[f"cos_q{i}"] = ObsSpec(terms.joint_cos(k), "cos_q")
        obs[f"sin_q{i}"] = ObsSpec(terms.joint_sin(k), "sin_q")
        obs[f"qvel{i}"] = ObsSpec(terms.joint_vel(k), "qvel")
        priv[f"cos_q{s}_true"] = ObsSpec(terms.joint_cos(k, wrapped=False))
        priv[f"sin_q{s}_true"] = ObsSpec(terms.joint_sin(k, wrapped=False))
        priv[f"qvel{s}_true"] = ObsSpec(terms.joint_vel(k), "qvel")
    return obs, priv


HINGE_SCALES = {"q": 1.0 / math.pi, "cos_q": 1.0, "sin_q": 1.0, "qvel": 0.1, "prev_action": 1.0}
"""Default scales of the hinge terms (q by 1/pi)."""
