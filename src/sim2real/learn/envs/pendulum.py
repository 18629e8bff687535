"""``sim2real/PendulumSwingup-v0``: swing the DFKI torque-limited pendulum up from hanging down
and hold it upright, with its real 1.0 N m torque limit (gravity alone needs about 1 N m at
the horizontal, friction another 0.3 N m: only energy pumping gets it up).

Physics: the project's MuJoCo model (built-in ``pendulum-dfki`` or a fitted MJCF with its
sidecar) stepped by :class:`~sim2real.sim.vecstep.VecStepper`, ``control_dt / timestep``
substeps per action, one model copy per environment so every environment has its own
parameters. Action in [-1, 1]; the commanded torque ``action * torque_limit`` goes through a
delay line at substep resolution (the model's ``extra.delay_s`` plus ``extra_delay_s``), then
either straight to the MuJoCo actuator (``ctrl``, fast path) or through an actuator model
(``actuator:`` config) into ``qfrc_applied`` (Python path).

Reward per step (``q`` = 0 hanging down, ``e`` = angle from upright)::

    r = w_upright * (1 - cos q) / 2          # 0 hanging, 1 upright: smooth, rewards height
        - w_velocity * qvel^2 * (1 + cos e) / 2   # speed penalised near upright only
        - w_action * action^2
        + w_bonus * [|e| < success_band_rad]

Success: the (noiseless) pendulum stays within ``success_band_rad`` of upright for
``success_hold_s`` without interruption, at any time of the episode. Episodes end only by the
time limit (``truncated``).

:class:`SwingupVec` is the machinery shared with the double pendulum (a chain of hinges
driven at one joint): parameter space, randomization, delay line, pushes, observation
history, success, autoreset and exact state save/restore; a subclass names the joints, the
goal, the tip height and the default randomization.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, ClassVar

import gymnasium
import numpy as np
from pydantic import Field

from sim2real.core.errors import InputError
from sim2real.core.strict import StrictModel
from sim2real.learn.randomization import CONFIG_DIR, Randomization, Randomizer, load_randomization
from sim2real.learn.vec import ObsGroup, ObsTerm, StepResult
from sim2real.params.space import Param, ParamSpace
from sim2real.sim.builtin import resolve_model
from sim2real.sim.model import SimModel, load_sim_model
from sim2real.sim.targets import resolve_target
from sim2real.sim.vecstep import BatchExtras, VecStepper

ENV_ID = "sim2real/PendulumSwingup-v0"
DEFAULT_DR = CONFIG_DIR / "pendulum_swingup.dr.yaml"
JOINT = "shoulder"
POLICY_TERMS = ("q", "cos_q", "sin_q", "qvel", "prev_action")
JOINT_TERMS = ("q", "cos_q", "sin_q", "qvel")
"""A frame: these four for each observed joint (suffixed 1, 2... with several joints), then
``prev_action``."""

PENDULUM_ROWS = [
    ("mass_kg", "body.mass:pendulum", 1e-3, 10.0),
    ("com_z_m", "body.com_z:pendulum", -2.0, -0.01),
    ("damping_Nm_s", f"joint.damping:{JOINT}", 0.0, 1.0),
    ("frictionloss_Nm", f"joint.frictionloss:{JOINT}", 0.0, 2.0),
    ("torque_bias_Nm", f"actuator.bias:{JOINT}", -1.0, 1.0),
    ("actuator_gain", f"actuator.gain:{JOINT}", 0.1, 10.0),
    ("delay_s", "extra.delay_s", 0.0, 0.1),
    ("coulomb_Nm", f"extra.coulomb:{JOINT}", 0.0, 2.0),
    ("viscous_Nm_s", f"extra.viscous:{JOINT}", 0.0, 1.0),
    ("pos_noise_rad", f"extra.pos_noise:{JOINT}", 0.0, 0.5),
    ("vel_noise_rad_s", f"extra.vel_noise:{JOINT}", 0.0, 5.0),
]
"""(name, target, lower, upper) of the model parameters; nominal = what the model holds."""


class PolicyScales(StrictModel):
    """Scale of each term of the policy frame (value fed = raw * scale)."""

    q: float = Field(1.0 / np.pi, description="joint angle [rad] (wrapped to +-pi)")
    cos_q: float = Field(1.0, description="cosine of the angle")
    sin_q: float = Field(1.0, description="sine of the angle")
    qvel: float = Field(0.1, description="joint velocity [rad/s]")
    prev_action: float = Field(1.0, description="the previous action, in [-1, 1]")


class RewardWeights(StrictModel):
    """Weights of the reward terms (see the module docstring)."""

    upright: float = Field(1.0, description="height of the tip, 0 hanging to 1 upright")
    angle: float = Field(0.0, description="quadratic angle score 1 - (e / pi)^2")
    """Quadratic angle score ``1 - (e / pi)^2`` (1 upright, 0 hanging): unlike the height term
    it keeps a holding-sideways pendulum far below the upright one."""
    velocity: float = Field(0.01, description="penalty on the squared joint velocity")
    action: float = Field(0.01, description="penalty on the squared action")
    bonus: float = Field(1.0, description="reward per step held upright within the success band")
    energy: float = Field(0.0, description="energy shaping towards the energy that reaches upright")
    """Energy shaping (single pendulum): ``max(0, 1 - |E - E_top| / E_top)`` with ``E = J qd^2
    / 2 + m g l (1 - cos q)`` of each environment's own (randomized) model: 0 hanging, 1 at the
    energy that reaches upright; unlike height it grows with every pump, so reversing the push
    of a pendulum stuck sideways scores at once."""


class PendulumSwingupConfig(StrictModel):
    """Everything that defines the environment apart from the randomization."""

    model: str = Field("pendulum-dfki", description="built-in name or MJCF path")
    params: dict[str, float] = Field(
        default_factory=dict,
        description="absolute values by parameter name or target, on top of the model",
    )
    actuator: dict[str, Any] | None = Field(None, description="actuator model config")
    extra_delay_s: float = Field(0.0, ge=0, le=0.2, description="added action delay [s]")
    torque_limit_Nm: float = Field(
        1.0, gt=0, description="actions in [-1, 1] scale to this motor torque [N m]"
    )
    control_dt: float = Field(
        0.01, gt=0, description="policy step [s] (MuJoCo substeps in between)"
    )
    episode_s: float = Field(10.0, gt=0, description="time limit of an episode [s]")
    success_band_rad: float = Field(
        0.2, gt=0, description="upright within this of the top counts as up [rad]"
    )
    success_hold_s: float = Field(
        2.0, gt=0, description="an episode succeeds after this long up without interruption [s]"
    )
    history: int = Field(
        3, ge=1, le=32, description="past observation frames stacked in the policy's input"
    )
    init_q_rad: float = Field(0.05, ge=0, description="initial angle uniform in +-this")
    init_qvel_rad_s: float = Field(0.05, ge=0, description="initial speed uniform in +-this")
    push_duration_s: float = Field(0.1, gt=0, description="how long a push torque acts")
    desync_episodes: bool = Field(
        False,
        description="training aid: each environment's first episode starts at a random step "
        "of the time limit, so every rollout sees all phases of an episode",
    )
    scales: PolicyScales = Field(
        default_factory=PolicyScales,
        description="scale of each observation term (value fed = raw x scale)",
    )
    reward: RewardWeights = Field(
        default_factory=RewardWeights, description="weights of the reward terms"
    )
    nthread: int = Field(0, ge=0, description="rollout threads (0: the calling thread)")


def _param(name, target, nominal, lo, hi) -> Param:
    lo, hi = min(lo, nominal), max(hi, nominal)
    return Param(name=name, target=target, nominal=float(nominal), bounds=(lo, hi))


def _model_params(sim: SimModel, rows: list, source: str) -> list[Param]:
    """The MuJoCo/extra parameters, nominal = what the loaded model holds."""
    out = []
    for name, target, lo, hi in rows:
        handle = resolve_target(sim.model, target, source)
        out.append(_param(name, target, handle.read(sim.model, sim.extras), lo, hi))
    return out


def _env_params(cfg: PendulumSwingupConfig, suffixes: list[str]) -> list[Param]:
    out = [_param("torque_limit_Nm", "env.torque_limit_Nm", cfg.torque_limit_Nm, 0.0, 50.0)]
    for s in suffixes:
        out.append(_param(f"obs_bias_q{s}", f"env.obs_bias_q{s}", 0.0, -1.0, 1.0))
        out.append(_param(f"obs_bias_qvel{s}", f"env.obs_bias_qvel{s}", 0.0, -5.0, 5.0))
    out.append(_param("push_Nm", "env.push_Nm", 0.0, -20.0, 20.0))
    return out


def build_space(
    cfg: PendulumSwingupConfig,
    sim: SimModel,
    actuator_cfg: Any | None,
    rows: list = PENDULUM_ROWS,
    suffixes: list[str] = [""],  # noqa: B006 (read only)
) -> ParamSpace:
    """The environment's parameter space with ``cfg.params`` as nominal values. A name or
    target of ``cfg.params`` not in the default space is added when it is a valid MuJoCo
    target (e.g. ``joint.armature:shoulder``)."""
    params = _model_params(sim, rows, "config.params") + _env_params(cfg, suffixes)
    if actuator_cfg is not None:
        for p in actuator_cfg.param_space().params:
            params.append(p.model_copy(update={"name": f"actuator.{p.name}"}))
    by_key = {p.name: k for k, p in enumerate(params)}
    by_key.update({p.target: k for k, p in enumerate(params)})
    for key, value in cfg.params.items():
        k = by_key.get(key)
        if k is None:
            if ":" not in key and not key.startswith("extra.") and not key.startswith("option."):
                import difflib

                close = difflib.get_close_matches(key, list(by_key), n=4, cutoff=0.4)
                hint = f"; close matches: {', '.join(close)}" if close else ""
                raise InputError("config.params", key, f"unknown parameter{hint}")
            handle = resolve_target(sim.model, key, "config.params")
            params.append(_param(key, key, handle.read(sim.model, sim.extras), -1e9, 1e9))
            k = len(params) - 1
        p = params[k]
        lo, hi = min(p.bounds[0], value), max(p.bounds[1], value)
        params[k] = p.model_copy(update={"nominal": float(value), "bounds": (lo, hi)})
    return ParamSpace(params=params)


def _wrap(angle: np.ndarray) -> np.ndarray:
    """Angle wrapped to [-pi, pi)."""
    return (angle + np.pi) % (2 * np.pi) - np.pi


class SwingupVec:
    """``num_envs`` swing-up environments of a chain of hinges driven at one joint (the
    :class:`~sim2real.learn.vec.VecEnv` protocol); subclasses name the task."""

    env_id: str
    joints: tuple[str, ...]  # observed, upright at ``goal``
    goal: tuple[float, ...]
    actuated: str
    config_cls: type[PendulumSwingupConfig]
    model_rows: list
    default_dr: Path | Randomization
    action_dim = 1

    def height(self, q: np.ndarray) -> np.ndarray:
        """(N, J) angles -> (N,) height of the tip, 0 hanging down, 1 upright."""
        raise NotImplementedError

    def __init__(
        self,
        num_envs: int,
        *,
        seed: int = 0,
        dr: str | Path | Randomization | None = "default",
        config: PendulumSwingupConfig | dict | None = None,
    ) -> None:
        cfg = (
            config
            if isinstance(config, self.config_cls)
            else self.config_cls.model_validate(config or {})
        )
        self.cfg = cfg
        self.num_envs = int(num_envs)
        path, _ = resolve_model(cfg.model)
        self.sim = load_sim_model(path)
        m = self.sim.model
        self.timestep = float(m.opt.timestep)
        nsub = cfg.control_dt / self.timestep
        if abs(nsub - round(nsub)) > 1e-6 or round(nsub) < 1:
            raise InputError(
                "config",
                "control_dt",
                f"{cfg.control_dt} s is not a multiple of the model's timestep {self.timestep} s",
            )
        self.nsub = round(nsub)
        self.control_dt = cfg.control_dt
        self.max_episode_steps = round(cfg.episode_s / cfg.control_dt)
        self.hold_steps = round(cfg.success_hold_s / cfg.control_dt)
        self.action_limit = np.array([cfg.torque_limit_Nm])
        index = [self.sim.joint_index(j) for j in self.joints]
        self.qadr = np.array([a for a, _ in index])
        self.dof = np.array([d for _, d in index])
        self.act_qadr, self.act_dof = self.sim.joint_index(self.actuated)
        self.act_index = self.sim.actuator_index(self.actuated)
        self.suffixes = (
            [""] if len(self.joints) == 1 else [str(k + 1) for k in range(len(self.joints))]
        )
        self._goal = np.array(self.goal)

        self.actuator_cfg = None
        if cfg.actuator is not None:
            from sim2real.actuators.models import config_from_dict

            self.actuator_cfg = config_from_dict(cfg.actuator, "config.actuator")
        self.space = build_space(cfg, self.sim, self.actuator_cfg, self.model_rows, self.suffixes)
        self.nominal = self.space.nominal()
        names = self.space.names
        self.col = {n: j for j, n in enumerate(names)}
        self._bias_q = np.array([self.col[f"obs_bias_q{s}"] for s in self.suffixes])
        self._bias_qvel = np.array([self.col[f"obs_bias_qvel{s}"] for s in self.suffixes])
        kinds = np.array(
            [
                "env"
                if p.target.startswith("env.")
                else "actuator"
                if p.target.startswith("actuator.") and ":" not in p.target
                else "model"
                for p in self.space.params
            ]
        )
        self.model_cols = np.flatnonzero(kinds == "model")
        self.actuator_cols = np.flatnonzero(kinds == "actuator")
        self.handles = [
            resolve_target(m, self.space.params[j].target, "config") for j in self.model_cols
        ]
        randomization = load_randomization(dr, self.default_dr)
        if isinstance(dr, (str, Path)) and str(dr) != "default":
            dr_source = dr
        elif isinstance(dr, Randomization):
            dr_source = "randomization"
        elif isinstance(self.default_dr, Path):
            dr_source = self.default_dr
        else:
            dr_source = f"{self.env_id} default randomization"
        self.randomizer = Randomizer(randomization, self.space, source=dr_source)
        self._interval = self.randomizer.terms("interval")
        span = self.space.upper() - self.space.lower()
        self._ref = np.where(np.abs(self.nominal) > 1e-9, np.abs(self.nominal), span / 4)
        self._ref = np.where(self._ref > 0, self._ref, 1.0)

        self.stepper = VecStepper(m, self.num_envs, nthread=cfg.nthread)
        self._extras = [self.sim.extras.copy() for _ in range(self.num_envs)]
        self.batch_extras = BatchExtras(self._extras)
        self._base_armature = float(m.dof_armature[self.act_dof])
        self.values = np.tile(self.nominal, (self.num_envs, 1))
        self._mgl, self._inertia = np.ones(self.num_envs), np.ones(self.num_envs)  # energy term
        self.runtime = None
        if self.actuator_cfg is not None:
            self.runtime = self.actuator_cfg.build(self._actuator_values())
        max_delay = self.space.upper()[self.col["delay_s"]] + cfg.extra_delay_s
        self._hist_len = self.nsub + int(np.ceil(max_delay / self.timestep)) + 1
        self._sub_range = np.arange(self.nsub)[None, :]
        self._sub_idx = self._hist_len - self.nsub + self._sub_range
        self._rows_col = np.arange(self.num_envs)[:, None]
        policy_terms = [
            ObsTerm(f"{t}{s}", getattr(cfg.scales, t)) for s in self.suffixes for t in JOINT_TERMS
        ]
        policy_terms.append(ObsTerm("prev_action", cfg.scales.prev_action))
        state_terms = [
            ObsTerm(f"{t}{s}_true", scale)
            for s in self.suffixes
            for t, scale in (("cos_q", 1.0), ("sin_q", 1.0), ("qvel", cfg.scales.qvel))
        ]
        self.obs_groups = {
            "policy": ObsGroup(tuple(policy_terms), cfg.history),
            "privileged": ObsGroup(
                (
                    *state_terms,
                    ObsTerm("push_active"),
                    *(ObsTerm(f"param.{n}") for n in names),
                ),
                1,
                deployable=False,
            ),
        }
        self._scales = np.array([t.scale for t in self.obs_groups["policy"].terms])
        self._seed = seed
        self.rng = np.random.default_rng(seed)
        self._startup: np.ndarray | None = None
        self._alloc()

    # -- parameters ----------------------------------------------------------------------------
    def _actuator_values(self) -> dict[str, np.ndarray]:
        return {
            self.space.names[j].removeprefix("actuator."): self.values[:, j].copy()
            for j in self.actuator_cols
        }

    def _apply_rows(self, rows: np.ndarray) -> None:
        """Write ``values[rows]`` into the rows' model copies, extras and actuator runtime."""
        models = self.stepper.models
        arm = np.zeros(self.num_envs)
        if self.runtime is not None:
            self.runtime.p.update(self._actuator_values())
            arm = np.broadcast_to(self.runtime.armature_kgm2, (self.num_envs,))
        for i in rows:
            # the actuator's armature adds to the joint's own (base or a ``params`` value)
            models[i].dof_armature[self.act_dof] = self._base_armature
            values = self.values[i, self.model_cols]
            SimModel.apply(models[i], self._extras[i], self.handles, values)
            models[i].dof_armature[self.act_dof] += float(arm[i])
        if self.cfg.reward.energy:
            self._energy_constants(rows)
        self.batch_extras.update_rows(rows, self._extras)
        self._state_dependent = self.batch_extras.state_dependent
        delay = self.batch_extras.delay_s + self.cfg.extra_delay_s
        self._delay_sub = np.clip(
            np.round(delay / self.timestep).astype(int), 0, self._hist_len - self.nsub
        )

    def _energy_constants(self, rows: np.ndarray) -> None:
        """Inertia J and gravity torque at the horizontal m g l of each row's model (for the
        energy term; single-joint tasks only)."""
        import mujoco

        if len(self.joints) != 1:
            raise InputError("config", "reward.energy", "energy shaping needs a single joint")
        models = self.stepper.models
        d = mujoco.MjData(models[0])
        dof = int(self.dof[0])  # the diagonal of the (sparse, CSR) mass matrix at this dof
        diag = int(models[0].M_rowadr[dof]) + int(models[0].M_rownnz[dof]) - 1
        for i in rows:
            d.qpos[:] = 0.0
            d.qvel[:] = 0.0
            d.qpos[self.qadr[0]] = np.pi / 2
            mujoco.mj_forward(models[i], d)
            self._mgl[i] = abs(float(d.qfrc_bias[self.dof[0]]))
            self._inertia[i] = float(d.M[diag])

    def _alloc(self) -> None:
        n, frame = self.num_envs, self.obs_groups["policy"].dim // self.cfg.history
        self.history = np.zeros((n, self.cfg.history, frame))
        self.prev_action = np.zeros(n)
        self.torque_hist = np.zeros((n, self._hist_len))
        self.steps = np.zeros(n, dtype=np.int64)
        self.hold = np.zeros(n, dtype=np.int64)
        self.success = np.zeros(n, dtype=bool)
        self.ep_return = np.zeros(n)
        self.next_fire = np.zeros((len(self._interval), n), dtype=np.int64)
        self.push_left = np.zeros(n, dtype=np.int64)
        self._delay_sub = np.zeros(n, dtype=int)

    # -- protocol ------------------------------------------------------------------------------
    def reset(self, seed: int | None = None) -> dict[str, np.ndarray]:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
            self._startup = None
        if self._startup is None:
            self._startup = np.tile(self.nominal, (self.num_envs, 1))
            every = np.arange(self.num_envs)
            self.randomizer.apply(self.randomizer.terms("startup"), self._startup, every, self.rng)
        self._alloc()
        if self.runtime is not None:
            self.runtime.reset()
        self._reset_rows(np.arange(self.num_envs))
        if self.cfg.desync_episodes:
            self.steps[:] = self.rng.integers(0, self.max_episode_steps, self.num_envs)
        return self._observe()

    def _reset_rows(self, rows: np.ndarray) -> None:
        rng, cfg = self.rng, self.cfg
        self.values[rows] = self._startup[rows]
        self.randomizer.apply(self.randomizer.terms("reset"), self.values, rows, rng)
        for k, b in enumerate(self._interval):
            lo, hi = b.term.interval_s
            self.next_fire[k, rows] = np.round(rng.uniform(lo, hi, rows.size) / self.control_dt)
        self._apply_rows(rows)
        shape = (rows.size, len(self.joints))
        q0 = rng.uniform(-cfg.init_q_rad, cfg.init_q_rad, shape)
        qd0 = rng.uniform(-cfg.init_qvel_rad_s, cfg.init_qvel_rad_s, shape)
        qpos = np.zeros((rows.size, self.stepper.nq))
        qvel = np.zeros((rows.size, self.stepper.nv))
        qpos[:, self.qadr], qvel[:, self.dof] = q0, qd0
        self.stepper.reset_rows(rows, qpos, qvel)
        self.steps[rows] = 0
        self.hold[rows] = 0
        self.success[rows] = False
        self.ep_return[rows] = 0.0
        self.prev_action[rows] = 0.0
        self.torque_hist[rows] = 0.0
        self.push_left[rows] = 0
        if self.runtime is not None:
            self.runtime.reset_rows(rows)
        frame = self._measure(rows)
        self.history[rows] = frame[:, None, :]

    def _measure(self, rows: np.ndarray) -> np.ndarray:
        """(len(rows), terms) raw policy frame: measured q, cos, sin, qvel of each joint, then
        the previous action."""
        rows_ = rows[:, None]
        q = self.stepper.qpos[rows_, self.qadr]
        qd = self.stepper.qvel[rows_, self.dof]
        be = self.batch_extras
        noise_q = self.rng.standard_normal(q.shape) * be.pos_noise_rad[rows_, self.dof]
        noise_qd = self.rng.standard_normal(q.shape) * be.vel_noise_rad_s[rows_, self.dof]
        qm = _wrap(q + self.values[rows_, self._bias_q] + noise_q)
        qdm = qd + self.values[rows_, self._bias_qvel] + noise_qd
        per_joint = np.stack([qm, np.cos(qm), np.sin(qm), qdm], axis=2).reshape(rows.size, -1)
        return np.concatenate([per_joint, self.prev_action[rows, None]], axis=1)

    def _observe(self) -> dict[str, np.ndarray]:
        policy = (self.history * self._scales).reshape(self.num_envs, -1)
        q = self.stepper.qpos[:, self.qadr]
        qd = self.stepper.qvel[:, self.dof]
        params = (self.values - self.nominal) / self._ref
        state = np.stack([np.cos(q), np.sin(q), qd * self.cfg.scales.qvel], axis=2)
        privileged = np.concatenate(
            [state.reshape(self.num_envs, -1), (self.push_left > 0)[:, None], params], axis=1
        )
        return {"policy": policy.astype(np.float32), "privileged": privileged.astype(np.float32)}

    def step(self, action: np.ndarray) -> StepResult:
        n, nsub, cfg = self.num_envs, self.nsub, self.cfg
        a = np.clip(np.asarray(action, dtype=float).reshape(n, -1)[:, 0], -1.0, 1.0)
        command = a * self.values[:, self.col["torque_limit_Nm"]]
        # delay line of commands at substep resolution, newest last
        hist = self.torque_hist
        hist[:, :-nsub] = hist[:, nsub:]
        hist[:, -nsub:] = command[:, None]
        delayed = hist[self._rows_col, self._sub_idx - self._delay_sub[:, None]]  # (N, nsub)
        qfrc = np.empty((n, nsub, self.stepper.nv))
        qfrc[:] = self.batch_extras.offset_Nm[:, None, :]
        if self.push_left.any():
            active = self._sub_range < self.push_left[:, None]
            qfrc[:, :, self.dof[0]] += active * self.values[:, self.col["push_Nm"], None]
            self.push_left = np.maximum(self.push_left - nsub, 0)
        ctrl = np.zeros((n, nsub, self.stepper.nu))
        feedback = None
        if self.runtime is not None:
            feedback = self._actuator_feedback(delayed)
        else:
            ctrl[:, :, self.act_index] = delayed
            if self._state_dependent:
                feedback = self._friction_feedback
        self.stepper.step(ctrl, qfrc, feedback)

        q = self.stepper.qpos[:, self.qadr]
        qd = self.stepper.qvel[:, self.dof]
        err = _wrap(q - self._goal)
        in_band = np.all(np.abs(err) < cfg.success_band_rad, axis=1)
        near = np.prod((1.0 + np.cos(err)) / 2.0, axis=1)
        w = cfg.reward
        reward = (
            w.upright * self.height(q)
            - w.velocity * np.sum(qd**2, axis=1) * near
            - w.action * a**2
            + w.bonus * in_band
        )
        # both optional terms score 0 hanging down (like the height term): a per-step offset
        # of -1 leaves the optimum alone but starts the critic ~200 off (gamma 0.995) and PPO
        # settled on not moving at all (measured)
        if w.angle:
            reward += w.angle * np.mean(1.0 - (err / np.pi) ** 2, axis=1)
        if w.energy:
            energy = 0.5 * self._inertia * qd[:, 0] ** 2 + self._mgl * (1.0 - np.cos(q[:, 0]))
            reward += w.energy * np.maximum(0.0, 1.0 - np.abs(energy / (2.0 * self._mgl) - 1.0))
        self.hold = np.where(in_band, self.hold + 1, 0)
        self.success |= self.hold >= self.hold_steps
        self.ep_return += reward
        self.steps += 1
        self.prev_action = a
        self._fire_intervals()
        frame = self._measure(np.arange(n))
        self.history[:, :-1] = self.history[:, 1:]
        self.history[:, -1] = frame

        truncated = self.steps >= self.max_episode_steps
        terminated = np.zeros(n, dtype=bool)
        obs = self._observe()
        final_obs = obs
        nan = np.full(n, np.nan)
        info = {
            "episode_return": nan.copy(),
            "episode_success": nan.copy(),
            "episode_length": nan.copy(),
            "in_band": in_band.copy(),
        }
        done = np.flatnonzero(truncated)
        if done.size:  # autoreset: the new episode's first observation, the old one's last
            info["episode_return"][done] = self.ep_return[done]
            info["episode_success"][done] = self.success[done].astype(float)
            info["episode_length"][done] = self.steps[done]
            self._reset_rows(done)
            obs = self._observe()
        return StepResult(obs, reward.astype(np.float32), terminated, truncated, final_obs, info)

    def _fire_intervals(self) -> None:
        push_col = self.col["push_Nm"]
        for k, b in enumerate(self._interval):
            rows = np.flatnonzero(self.steps >= self.next_fire[k])
            if rows.size == 0:
                continue
            self.randomizer.apply([b], self.values, rows, self.rng)
            lo, hi = b.term.interval_s
            gap = np.maximum(np.round(self.rng.uniform(lo, hi, rows.size) / self.control_dt), 1)
            self.next_fire[k, rows] = self.steps[rows] + gap.astype(np.int64)
            if push_col in b.columns:
                self.push_left[rows] = round(self.cfg.push_duration_s / self.timestep)
            if (
                np.intersect1d(b.columns, self.model_cols).size
                or np.intersect1d(b.columns, self.actuator_cols).size
            ):
                self._apply_rows(rows)

    def _friction_feedback(self, k, qpos, qvel, tau_ext, inertia) -> np.ndarray:
        return self.batch_extras.friction_torque(qvel)

    def _actuator_feedback(self, command: np.ndarray):
        from sim2real.actuators.models import ActuatorState

        runtime, dof, qadr = self.runtime, self.act_dof, self.act_qadr
        state = ActuatorState(dt_s=self.timestep)

        def feedback(k, qpos, qvel, tau_ext, inertia):
            state.tau_ext_Nm = tau_ext[:, dof]
            state.inertia_kgm2 = inertia[:, dof]
            tau = np.zeros_like(qvel)
            tau[:, dof] = runtime.torque(command[:, k], qpos[:, qadr], qvel[:, dof], state)
            if self._state_dependent:
                tau += self.batch_extras.friction_torque(qvel)
            return tau

        return feedback

    # -- exact continuation --------------------------------------------------------------------
    _STATE_FIELDS = (
        "values",
        "_startup",
        "history",
        "prev_action",
        "torque_hist",
        "steps",
        "hold",
        "success",
        "ep_return",
        "next_fire",
        "push_left",
    )

    def get_state(self) -> dict[str, Any]:
        out = {name: copy.deepcopy(getattr(self, name)) for name in self._STATE_FIELDS}
        out["sim_state"] = self.stepper.state.copy()
        out["rng"] = copy.deepcopy(self.rng.bit_generator.state)
        out["runtime"] = copy.deepcopy(self.runtime)
        out["env_id"] = self.env_id
        return out

    def set_state(self, state: dict[str, Any]) -> None:
        if state.get("env_id") != self.env_id:
            raise ValueError(f"state of {state.get('env_id')!r}, not {self.env_id!r}")
        if np.shape(state["values"]) != self.values.shape:
            raise ValueError(
                f"state of {np.shape(state['values'])} (envs, parameters), not {self.values.shape}"
            )
        for name in self._STATE_FIELDS:
            setattr(self, name, copy.deepcopy(state[name]))
        self.stepper.state[:] = state["sim_state"]
        self.rng.bit_generator.state = copy.deepcopy(state["rng"])
        self.runtime = copy.deepcopy(state["runtime"])
        self._apply_rows(np.arange(self.num_envs))

    def close(self) -> None:
        self.stepper.close()


class PendulumSwingupVec(SwingupVec):
    """``num_envs`` pendulum swing-up environments."""

    env_id = ENV_ID
    joints = (JOINT,)
    goal = (np.pi,)
    actuated = JOINT
    config_cls = PendulumSwingupConfig
    model_rows = PENDULUM_ROWS
    default_dr = DEFAULT_DR

    def height(self, q: np.ndarray) -> np.ndarray:
        return (1.0 - np.cos(q[:, 0])) / 2.0


class SwingupEnv(gymnasium.Env):
    """One environment of ``vec_cls`` (``num_envs = 1`` underneath) for gymnasium; the
    observation is the ``obs_group`` group."""

    vec_cls: type[SwingupVec]

    metadata: ClassVar[dict] = {"render_modes": []}

    def __init__(
        self,
        dr: str | Path | Randomization | None = "default",
        config: PendulumSwingupConfig | dict | None = None,
        obs_group: str = "policy",
    ) -> None:
        self.vec = self.vec_cls(1, seed=0, dr=dr, config=config)
        self.obs_group = obs_group
        dim = self.vec.obs_groups[obs_group].dim
        self.observation_space = gymnasium.spaces.Box(-np.inf, np.inf, (dim,), np.float32)
        self.action_space = gymnasium.spaces.Box(-1.0, 1.0, (1,), np.float32)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is None:
            seed = int(self.np_random.integers(2**31))
        obs = self.vec.reset(seed)
        return obs[self.obs_group][0], {}

    def step(self, action):
        res = self.vec.step(np.asarray(action, dtype=float).reshape(1, 1))
        # episode statistics only where an episode ended (NaN elsewhere would break equality)
        info = {
            k: float(v[0])
            for k, v in res.info.items()
            if np.ndim(v) and np.isfinite(np.asarray(v[0], dtype=float))
        }
        obs = res.final_obs if res.truncated[0] else res.obs
        return (
            obs[self.obs_group][0],
            float(res.reward[0]),
            bool(res.terminated[0]),
            bool(res.truncated[0]),
            info,
        )

    def close(self) -> None:
        self.vec.close()


class PendulumSwingupEnv(SwingupEnv):
    """One pendulum swing-up environment for gymnasium."""

    vec_cls = PendulumSwingupVec
