"""A tiny vectorized environment for fast learning tests: a damped rotor driven to a target
angle, with the pendulum's observation vocabulary (``q``, ``cos_q``, ``sin_q``, ``qvel``,
``prev_action``) and a randomized motor gain that only the ``privileged`` group reveals.

It follows the :class:`sim2real.learn.vec.VecEnv` contract (autoreset, ``final_obs``, episode
statistics in ``info``, exact ``get_state``/``set_state``), in pure numpy so that a PPO run on it
takes seconds.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from sim2real.learn.vec import ObsGroup, ObsTerm, StepResult

TOY_ENV_ID = "toy/Rotor-v0"
TARGET_RAD = 1.0
SUCCESS_RAD = 0.2


def wrap_angle(q: np.ndarray) -> np.ndarray:
    """Angles wrapped to [-pi, pi)."""
    return (q + np.pi) % (2 * np.pi) - np.pi


class ToyRotorEnv:
    """``num_envs`` rotors: qdd = gain * limit * action - damping * qvel; reward -|q - target|."""

    def __init__(
        self,
        env_id: str = TOY_ENV_ID,
        num_envs: int = 16,
        *,
        seed: int = 0,
        dr: Any = "default",
        config: dict | None = None,
    ) -> None:
        if env_id != TOY_ENV_ID:
            raise KeyError(f"unknown env {env_id!r}")
        config = dict(config or {})
        self.env_id = env_id
        self.num_envs = num_envs
        self.action_dim = 1
        self.action_limit = np.array([4.0])
        self.control_dt = 0.05
        self.max_episode_steps = int(config.get("max_episode_steps", 40))
        self.damping = 2.0
        # no randomization: every rotor has gain 1 (the teacher's extra knowledge is then useless)
        self.gain_range = (0.4, 1.6) if dr is not None else (1.0, 1.0)
        history = int(config.get("history", 2))
        terms = (
            ObsTerm("q", 1.0),
            ObsTerm("cos_q", 1.0),
            ObsTerm("sin_q", 1.0),
            ObsTerm("qvel", 0.2),
            ObsTerm("prev_action", 1.0),
        )
        self.obs_groups = {
            "policy": ObsGroup(terms, history=history, deployable=True),
            "privileged": ObsGroup((ObsTerm("gain", 1.0),), history=1, deployable=False),
        }
        self._scales = np.array([t.scale for t in terms])
        self._seed = seed
        self._rng = np.random.default_rng(seed)
        n = num_envs
        self.q, self.qvel, self.gain = np.zeros(n), np.zeros(n), np.ones(n)
        self.prev_action = np.zeros(n)
        self.t = np.zeros(n, dtype=int)
        self.ep_return = np.zeros(n)
        self.history = np.zeros((n, history, len(terms)), dtype=np.float32)

    # -- helpers --------------------------------------------------------------------------
    def _frame(self, idx: np.ndarray) -> np.ndarray:
        q = wrap_angle(self.q[idx])
        raw = np.stack([q, np.cos(q), np.sin(q), self.qvel[idx], self.prev_action[idx]], axis=-1)
        return (raw * self._scales).astype(np.float32)

    def _reset_idx(self, idx: np.ndarray) -> None:
        k = len(idx)
        self.q[idx] = self._rng.uniform(-np.pi, np.pi, k)
        self.qvel[idx] = self._rng.uniform(-1.0, 1.0, k)
        self.gain[idx] = self._rng.uniform(*self.gain_range, k)
        self.prev_action[idx] = 0.0
        self.t[idx] = 0
        self.ep_return[idx] = 0.0
        self.history[idx] = self._frame(idx)[:, None, :]  # first frame fills the history

    def _obs(self) -> dict[str, np.ndarray]:
        n = self.num_envs
        return {
            "policy": self.history.reshape(n, -1).copy(),
            "privileged": self.gain[:, None].astype(np.float32),
        }

    # -- VecEnv ---------------------------------------------------------------------------
    def reset(self, seed: int | None = None) -> dict[str, np.ndarray]:
        self._rng = np.random.default_rng(self._seed if seed is None else seed)
        self._reset_idx(np.arange(self.num_envs))
        return self._obs()

    def step(self, action: np.ndarray) -> StepResult:
        a = np.clip(np.asarray(action, dtype=np.float64).reshape(self.num_envs), -1.0, 1.0)
        accel = self.gain * self.action_limit[0] * a - self.damping * self.qvel
        self.qvel = self.qvel + self.control_dt * accel
        self.q = self.q + self.control_dt * self.qvel
        self.prev_action = a
        self.t += 1
        err = np.abs(wrap_angle(self.q - TARGET_RAD))
        reward = -err - 0.01 * self.qvel**2
        self.ep_return += reward
        everyone = np.arange(self.num_envs)
        self.history = np.concatenate([self.history[:, 1:], self._frame(everyone)[:, None]], 1)
        truncated = self.t >= self.max_episode_steps
        terminated = np.zeros(self.num_envs, dtype=bool)
        final_obs = self._obs()
        nan = np.full(self.num_envs, np.nan)
        info = {
            "episode_return": np.where(truncated, self.ep_return, nan),
            "episode_success": np.where(truncated, (err < SUCCESS_RAD).astype(float), nan),
            "episode_length": np.where(truncated, self.t, 0),
        }
        done = np.flatnonzero(truncated)
        if len(done):
            self._reset_idx(done)
        return StepResult(self._obs(), reward, terminated, truncated, final_obs, info)

    def get_state(self) -> dict[str, Any]:
        return copy.deepcopy(
            {
                "rng": self._rng.bit_generator.state,
                "arrays": {
                    k: getattr(self, k)
                    for k in ("q", "qvel", "gain", "prev_action", "t", "ep_return", "history")
                },
            }
        )

    def set_state(self, state: dict[str, Any]) -> None:
        state = copy.deepcopy(state)
        self._rng.bit_generator.state = state["rng"]
        for k, v in state["arrays"].items():
            setattr(self, k, v)


def make_toy_vec(
    env_id: str, num_envs: int, *, seed: int = 0, dr: Any = "default", config: dict | None = None
) -> ToyRotorEnv:
    """Same signature as :func:`sim2real.learn.envs.make_vec`."""
    return ToyRotorEnv(env_id, num_envs, seed=seed, dr=dr, config=config)
