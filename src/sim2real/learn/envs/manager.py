"""The generic batched MuJoCo environment a :class:`~sim2real.learn.envs.task.Task`
configures (the :class:`~sim2real.learn.vec.VecEnv` protocol); it knows no robot.

Physics: the task's MuJoCo model (built-in, bundled, a fitted MJCF with its sidecar, a URDF;
under the task's names, :mod:`.model_names`) stepped by :class:`~sim2real.sim.vecstep.VecStepper`,
``control_dt / timestep`` substeps per action, one model copy per environment so every
environment has its own parameters. Action in [-1, 1]; the command ``action * torque_limit_Nm`` of the config (the
exported runner's ``action_limit``), saturated at each environment's drawn ``torque_limit_Nm``
(a weaker motor clips, it does not scale the policy), goes through a delay line at substep
resolution (the model's ``extra.delay_s`` plus ``extra_delay_s``), then straight to
the MuJoCo actuators (``ctrl``, the ``mujoco.rollout`` fast path) or through an actuator model
(``actuator:`` config) into ``qfrc_applied``.

Per step the managers run in this order: events (randomization terms of interval mode,
pushes), observation terms (measured state: noise and bias; history of frames), reward terms
(weighted sum; each term's episode sum in ``info["episode_terms"]``), termination terms,
success (every goal joint within ``success_band_rad`` for ``success_hold_s`` without
interruption), autoreset. Randomness per environment by global index
(:mod:`~sim2real.learn.envs.streams`): ``env_offset`` shifts the indices of a shard.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np

from sim2real.core.errors import InputError
from sim2real.learn.envs.actuation import Actuation
from sim2real.learn.envs.events import Events
from sim2real.learn.envs.legged import Legged
from sim2real.learn.envs.model_names import load_task_model
from sim2real.learn.envs.observations import Observations
from sim2real.learn.envs.pd_actuation import PDActuation
from sim2real.learn.envs.reward_terms import RewardTerms
from sim2real.learn.envs.space import build_space, column_kinds
from sim2real.learn.envs.streams import EnvStreams
from sim2real.learn.envs.task import Task
from sim2real.learn.envs.terms import StepView, wrap
from sim2real.learn.randomization import Randomization, Randomizer, load_randomization
from sim2real.learn.vec import StepResult
from sim2real.sim.model import SimModel
from sim2real.sim.targets import resolve_target
from sim2real.sim.vecstep import BatchExtras, VecStepper


class ManagerVecEnv:
    """``num_envs`` environments of ``task`` (global indices ``env_offset ...``)."""

    def __init__(
        self,
        task: Task,
        num_envs: int,
        *,
        seed: int = 0,
        dr: str | Path | Randomization | None = "default",
        config: Any = None,
        env_offset: int = 0,
    ) -> None:
        cls = task.config_cls
        cfg = config if isinstance(config, cls) else cls.model_validate(config or {})
        self.task, self.cfg, self.env_id = task, cfg, task.env_id
        self.num_envs, self.env_offset = int(num_envs), int(env_offset)
        self.sim = load_task_model(task, cfg)  # under the task's names, its joints driven
        m = self.sim.model
        self.timestep = float(m.opt.timestep)
        nsub = cfg.control_dt / self.timestep
        if abs(nsub - round(nsub)) > 1e-6 or round(nsub) < 1:
            why = f"{cfg.control_dt} s is not a multiple of the model's timestep {self.timestep} s"
            raise InputError("config", "control_dt", why)
        self.nsub, self.control_dt = round(nsub), cfg.control_dt
        self.max_episode_steps = round(cfg.episode_s / cfg.control_dt)
        self.hold_steps = round(cfg.success_hold_s / cfg.control_dt)
        self.action_dim = len(task.actuated)
        self.action_limit = np.full(self.action_dim, cfg.torque_limit_Nm)
        index = [self.sim.joint_index(j) for j in task.joints]
        self.qadr = np.array([a for a, _ in index])
        self.dof = np.array([d for _, d in index])
        self._goal_k = np.array([task.joints.index(j) for j in task.goal], dtype=int)
        self._goal = np.array(list(task.goal.values()), dtype=float)
        hinges = task.hinges if task.hinges is not None else task.joints
        self._wraps = np.array([j in hinges for j in task.goal])
        goal_q = np.array([task.goal.get(j, 0.0) for j in task.joints])
        hinge_mask = np.array([j in hinges for j in task.joints])
        self._start_alternatives = (cfg.init_random_share, hinge_mask, cfg.init_goal_share, goal_q)
        push = task.push_joint or task.joints[0]
        free = push == task.floating_base  # a free joint: pushed in the horizontal plane
        self.push_dof = int(m.joint(push).dofadr[0]) if free else self.sim.joint_index(push)[1]
        self.suffixes = [""] if len(task.joints) == 1 else [str(k + 1) for k in range(len(index))]

        self.actuator_cfg = None
        legged = task.floating_base is not None
        if cfg.actuator is not None:
            from sim2real.actuators.models import config_from_dict

            if self.action_dim != 1:
                raise InputError("config", "actuator", "an actuator model drives one joint")
            self.actuator_cfg = config_from_dict(cfg.actuator, "config.actuator")
        motors_cfg = cfg.motors if legged else self.actuator_cfg
        self.space = build_space(cfg, self.sim, motors_cfg, task.model_rows, self.suffixes)
        self.nominal = self.space.nominal()
        names = self.space.names
        self.col = {n: j for j, n in enumerate(names)}
        self.bias_q = np.array([self.col[f"obs_bias_q{s}"] for s in self.suffixes])
        self.bias_qvel = np.array([self.col[f"obs_bias_qvel{s}"] for s in self.suffixes])
        kinds = np.array(column_kinds(self.space))
        self.model_cols = np.flatnonzero(kinds == "model")
        self.actuator_cols = np.flatnonzero(kinds == "actuator")
        self.handles = [
            resolve_target(m, self.space.params[j].target, "config") for j in self.model_cols
        ]
        self.randomizer = Randomizer(
            load_randomization(dr, task.default_dr), self.space, source=self._dr_source(dr)
        )
        span = self.space.upper() - self.space.lower()
        self.param_ref = np.where(np.abs(self.nominal) > 1e-9, np.abs(self.nominal), span / 4)
        self.param_ref = np.where(self.param_ref > 0, self.param_ref, 1.0)

        self.stepper = VecStepper(m, self.num_envs, nthread=cfg.nthread, sensors=legged)
        self._extras = [self.sim.extras.copy() for _ in range(self.num_envs)]
        self.batch_extras = BatchExtras(self._extras)
        self.values = np.tile(self.nominal, (self.num_envs, 1))
        act = [self.sim.joint_index(j) for j in task.actuated]
        act_index = (
            np.array([a for a, _ in act]),
            np.array([d for _, d in act]),
            np.array([self.sim.actuator_index(j) for j in task.actuated]),
        )
        max_delay = self.space.upper()[self.col["delay_s"]] + cfg.extra_delay_s
        args = (self.stepper, act_index, self.nsub, self.timestep, max_delay)
        self.legged: Legged | None = None
        if legged:  # joint position targets through the batched motors
            nets = cfg.actuator_networks
            motors = cfg.motors.build(task.actuated, "config", nets, self.timestep)
            self.act = PDActuation(*args, motors)
            self.legged = Legged(self)
        else:
            self.act = Actuation(*args, self.actuator_cfg, self._actuator_values())
        zero = np.zeros(self.stepper.nq)
        self._init_qpos = self.legged.init_qpos if self.legged is not None else zero
        self._sub_range = np.arange(self.nsub)[None, :]
        self._build_terms()
        width = 2 * len(task.joints) + (6 if legged else 0)  # + base angular velocity, gravity
        self.streams = EnvStreams(seed, self.env_offset, self.num_envs, width)
        self.events = Events(self.randomizer, self.streams, self.control_dt)
        self._startup: np.ndarray | None = None
        self._alloc()

    def _dr_source(self, dr) -> str | Path:
        if isinstance(dr, (str, Path)) and str(dr) != "default":
            return dr
        if isinstance(dr, Randomization):
            return "randomization"
        if isinstance(self.task.default_dr, Path):
            return self.task.default_dr
        return f"{self.env_id} default randomization"

    def _build_terms(self) -> None:
        task, cfg = self.task, self.cfg
        self._commands = cfg.command_ranges()
        self.reward_terms = {}  # the active terms by name (weight != 0)
        for name, weight in cfg.weights().items():
            if weight:
                term = task.rewards[name]
                self.reward_terms[name] = term(self.num_envs) if isinstance(term, type) else term
        weights = cfg.weights()
        weighted = {n: (weights[n], t) for n, t in self.reward_terms.items()}
        self.rewards = RewardTerms(weighted, self.num_envs)
        self.reward_names = self.rewards.names  # the columns of info["episode_terms"]
        self._row_terms = [t for t in self.reward_terms.values() if hasattr(t, "update_rows")]
        self._terminations = list(task.terminations.values())
        self.obs = Observations(task, cfg, self.space.names)
        self.obs_groups = self.obs.groups

    # -- parameters ----------------------------------------------------------------------------
    def _actuator_values(self) -> dict[str, np.ndarray]:
        return {
            self.space.names[j].removeprefix("actuator."): self.values[:, j].copy()
            for j in self.actuator_cols
        }

    def _apply_rows(self, rows: np.ndarray) -> None:
        """Write ``values[rows]`` into the rows' model copies, extras and actuator runtime."""
        models, act = self.stepper.models, self.act
        arm = act.armature(self._actuator_values())
        for i in rows:
            # the actuator's armature adds to the joint's own (base or a ``params`` value)
            models[i].dof_armature[act.act_dof] = act.base_armature
            SimModel.apply(
                models[i], self._extras[i], self.handles, self.values[i, self.model_cols]
            )
            models[i].dof_armature[act.act_dof] += arm[i]
        for term in self._row_terms:
            term.update_rows(self, rows)
        self.batch_extras.update_rows(rows, self._extras)
        self.act.set_delays(self.batch_extras.delay_s + self.cfg.extra_delay_s)
        self.act.friction = self.batch_extras.state_dependent

    def _alloc(self) -> None:
        n, frame = self.num_envs, len(self.obs.funcs)
        self.history = np.zeros((n, self.cfg.history, frame))
        self.prev_action = np.zeros((n, self.action_dim))
        self.steps = np.zeros(n, dtype=np.int64)
        self.hold = np.zeros(n, dtype=np.int64)
        self.success = np.zeros(n, dtype=bool)
        self.started_at_goal = np.zeros(n, dtype=bool)
        self.ep_return = np.zeros(n)
        self.push_left = np.zeros(n, dtype=np.int64)
        self.commands = np.zeros((n, len(self._commands)))

    # -- protocol ------------------------------------------------------------------------------
    def reset(self, seed: int | None = None) -> dict[str, np.ndarray]:
        if seed is not None:
            self.streams.seed(seed)
            self._startup = None
        every = np.arange(self.num_envs)
        if self._startup is None:
            self._startup = self.events.startup(self.nominal)
        self._alloc()
        self.events.next_fire[:] = 0
        self.act.reset()
        self._reset_rows(every)
        if self.cfg.desync_episodes:
            self.steps[:] = self.streams.integers(every, 0, self.max_episode_steps)
        return self._observe()

    def reset_rows(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        """Start new episodes in ``rows`` now (a wrapper's own episode ended); the observation."""
        self._reset_rows(np.asarray(rows))
        return self._observe()

    def _reset_rows(self, rows: np.ndarray) -> None:
        cfg, nj = self.cfg, len(self.task.joints)
        self.values[rows] = self._startup[rows]
        self.events.reset_rows(self.values, rows)
        self._apply_rows(rows)
        init, self.started_at_goal[rows] = self.events.start_states(
            rows, cfg.init_q_rad, cfg.init_qvel_rad_s, nj, self._start_alternatives
        )
        if self._commands:
            self.commands[rows] = self.events.commands(rows, list(self._commands.values()))
        qpos = np.tile(self._init_qpos, (rows.size, 1))
        qvel = np.zeros((rows.size, self.stepper.nv))
        qpos[:, self.qadr] += init[:, :nj]
        qvel[:, self.dof] = init[:, nj:]
        self.stepper.reset_rows(rows, qpos, qvel)
        if self.legged is not None:
            self.legged.reset_rows(rows, init[:, nj:])
        for name in ("steps", "hold", "success", "ep_return", "prev_action"):
            getattr(self, name)[rows] = 0
        self.rewards.episode[rows] = 0
        self.push_left[rows] = 0
        self.act.reset_rows(rows)
        self.history[rows] = self._measure(rows)[:, None, :]

    def _view(self, q, qd, action) -> StepView:
        err = q[:, self._goal_k] - self._goal
        err = np.where(self._wraps, wrap(err), err)
        band = np.all(np.abs(err) < self.cfg.success_band_rad, axis=1)
        view = StepView(q, qd, err, action, band, self, commands=self.commands)
        if self.legged is not None:
            view.base = self.legged.base(self.stepper.qpos, self.stepper.qvel)
            view.legged = self.legged
        return view

    def _measure(self, rows: np.ndarray) -> np.ndarray:
        return self.obs.measure(self, rows)

    def _observe(self) -> dict[str, np.ndarray]:
        return self.obs.observe(self)

    def step(self, action: np.ndarray) -> StepResult:
        n, nsub = self.num_envs, self.nsub
        a = np.clip(np.asarray(action, dtype=float).reshape(n, -1)[:, : self.action_dim], -1, 1)
        if self.legged is not None:
            command = self.legged.targets(a)
        else:
            limit = self.values[:, self.col["torque_limit_Nm"], None]
            command = np.clip(a * self.action_limit, -limit, limit)
        qfrc = np.empty((n, nsub, self.stepper.nv))
        qfrc[:] = self.batch_extras.offset_Nm[:, None, :]
        if self.push_left.any():
            active = self._sub_range < self.push_left[:, None]
            force = active * self.values[:, self.col["push_Nm"], None]
            if self.legged is not None:  # along each push's own horizontal direction
                self.legged.push(qfrc, force, self.push_dof)
            else:
                qfrc[:, :, self.push_dof] += force
            self.push_left = np.maximum(self.push_left - nsub, 0)
        self.act.step(command, qfrc, self.batch_extras)
        if self.legged is not None:
            self.legged.update(self.stepper.qvel[:, self.dof])

        view = self._view(self.stepper.qpos[:, self.qadr], self.stepper.qvel[:, self.dof], a)
        terminated = np.zeros(n, dtype=bool)
        for term in self._terminations:
            terminated |= term(view)
        if self.cfg.goal_start_fall_rad is not None:  # a training aid (TaskConfig)
            away = np.any(np.abs(view.err) > self.cfg.goal_start_fall_rad, axis=1)
            terminated |= self.started_at_goal & away
        view.terminated = terminated
        reward = self.rewards(view)
        self.hold = np.where(view.in_band, self.hold + 1, 0)
        self.success |= self.hold >= self.hold_steps
        self.ep_return += reward
        self.steps += 1
        self.prev_action = a
        self._fire_intervals()
        if self.legged is not None:
            self.legged.resample_commands(self)
        frame = self._measure(np.arange(n))
        self.history[:, :-1] = self.history[:, 1:]
        self.history[:, -1] = frame

        truncated = (self.steps >= self.max_episode_steps) & ~terminated
        obs = self._observe()
        final_obs = obs
        nan = np.full(n, np.nan)
        info = {
            "episode_return": nan.copy(),
            "episode_success": nan.copy(),
            "episode_length": nan.copy(),
            "in_band": view.in_band.copy(),
            "episode_terms": np.full(self.rewards.episode.shape, np.nan),
        }
        done = np.flatnonzero(truncated | terminated)
        if done.size:  # autoreset: the new episode's first observation, the old one's last
            info["episode_return"][done] = self.ep_return[done]
            info["episode_success"][done] = self.success[done].astype(float)
            info["episode_length"][done] = self.steps[done]
            info["episode_terms"][done] = self.rewards.episode[done]
            self._reset_rows(done)
            obs = self._observe()
        return StepResult(obs, reward.astype(np.float32), terminated, truncated, final_obs, info)

    def _fire_intervals(self) -> None:
        push_col = self.col["push_Nm"]
        for b, rows in self.events.fire(self.values, self.steps):
            if push_col in b.columns:
                self.push_left[rows] = round(self.cfg.push_duration_s / self.timestep)
                if self.legged is not None:
                    self.legged.new_push_direction(rows, self.streams)
            if np.intersect1d(b.columns, np.r_[self.model_cols, self.actuator_cols]).size:
                self._apply_rows(rows)

    # -- exact continuation --------------------------------------------------------------------
    _STATE_FIELDS = ("values", "_startup", "history", "prev_action", "steps", "hold", "success",
                     "ep_return", "push_left", "commands", "started_at_goal")  # fmt: skip

    def get_state(self) -> dict[str, Any]:
        out = {name: copy.deepcopy(getattr(self, name)) for name in self._STATE_FIELDS}
        out["sim_state"] = self.stepper.state.copy()
        out["reward_terms"] = self.rewards.state()
        out["streams"] = self.streams.get_state()
        out["next_fire"] = self.events.next_fire.copy()
        out["act"] = {
            "torque_hist": self.act.torque_hist.copy(),
            "runtime": copy.deepcopy(self.act.runtime),
        }
        out["env_id"], out["env_offset"] = self.env_id, self.env_offset
        if self.legged is not None:
            out["legged"] = self.legged.get_state()
        return out

    def set_state(self, state: dict[str, Any]) -> None:
        if "streams" not in state:  # a state saved by the environment of before issue 17
            raise InputError(
                "run state",
                "env_state",
                "saved before environments had one random stream each: it cannot continue "
                "exactly; start a new run",
            )
        if state.get("env_id") != self.env_id:
            raise ValueError(f"state of {state.get('env_id')!r}, not {self.env_id!r}")
        if np.shape(state["values"]) != self.values.shape:
            raise ValueError(
                f"state of {np.shape(state['values'])} (envs, parameters), not {self.values.shape}"
            )
        if state.get("env_offset", 0) != self.env_offset:
            raise ValueError(
                f"state of environments from {state.get('env_offset')}, not {self.env_offset}"
            )
        state = {"started_at_goal": np.zeros(self.num_envs, bool), **state}  # saved before it
        for name in self._STATE_FIELDS:
            setattr(self, name, copy.deepcopy(state[name]))
        self.stepper.state[:] = state["sim_state"]
        self.rewards.load_state(state.get("reward_terms"))  # logs only
        self.streams.set_state(state["streams"])
        self.events.next_fire[:] = state["next_fire"]
        self.act.torque_hist[:] = state["act"]["torque_hist"]
        self.act.runtime = copy.deepcopy(state["act"]["runtime"])
        if self.legged is not None:
            self.legged.set_state(state["legged"])
        self._apply_rows(np.arange(self.num_envs))

    def close(self) -> None:
        self.stepper.close()
