"""A hand-written cart-pole swing-up controller (energy pumping, then LQR near upright), from
the full noiseless state: evidence that ``sim2real/CartpoleSwingup-v0`` is solvable within its
10 N and its rail, independent of any learner.

Energy pumping (Astrom and Furuta 2000): with the pole's energy ``E = I qd^2 / 2 + m g l (1 -
cos q)`` (0 hanging, ``2 m g l`` upright), pushing the cart with ``sign(qd cos q)`` raises E;
a PD term keeps the cart near the middle. Within 0.4 rad of upright an LQR of the model
linearized by MuJoCo (``mjd_transitionFD`` at upright, friction off, at the 10 ms control
rate) catches and balances.

``python tests/learn/cartpole_controller.py [none|default]``: success over 32 episodes.
"""

from __future__ import annotations

import copy
import sys

import mujoco
import numpy as np
import scipy.linalg

from sim2real.learn.envs import make_vec
from sim2real.learn.envs.cartpole import MODELS_DIR

POLE_I, POLE_MGL = 0.1 * 0.5**2 + 0.008333, 0.1 * 9.81 * 0.5  # about the hinge; m g l


def lqr_gain(nsub: int = 5) -> np.ndarray:
    model = mujoco.MjModel.from_xml_path(str(MODELS_DIR / "cartpole.xml"))
    lin = copy.copy(model)
    lin.dof_frictionloss[:] = 0.0  # friction constraints make the finite differences stick
    d = mujoco.MjData(lin)
    d.qpos[:] = [0.0, np.pi]
    mujoco.mj_forward(lin, d)
    a, b = np.zeros((4, 4)), np.zeros((4, 1))
    mujoco.mjd_transitionFD(lin, d, 1e-6, True, a, b, None, None)
    b = sum(np.linalg.matrix_power(a, i) @ b for i in range(nsub))  # zero-order hold
    a = np.linalg.matrix_power(a, nsub)
    q, r = np.diag([5.0, 50.0, 1.0, 5.0]), np.array([[0.05]])
    p = scipy.linalg.solve_discrete_are(a, b, q, r)
    return np.linalg.solve(r + b.T @ p @ b, b.T @ p @ a)


def action(env, gain: np.ndarray, force_n: float = 10.0) -> np.ndarray:
    """(N, 1) actions in [-1, 1] from the environments' true states."""
    x, q = env.stepper.qpos[:, 0], env.stepper.qpos[:, 1]
    xd, qd = env.stepper.qvel[:, 0], env.stepper.qvel[:, 1]
    e = (q - np.pi + np.pi) % (2 * np.pi) - np.pi
    energy = 0.5 * POLE_I * qd**2 + POLE_MGL * (1.0 - np.cos(q))
    push = np.clip(10.0 * (2 * POLE_MGL - energy) * np.sign(qd * np.cos(q)), -1.0, 1.0)
    pump = force_n * push - 10.0 * x - 3.0 * xd
    catch = -(np.stack([x, e, xd, qd], axis=1) @ gain.T)[:, 0]
    u = np.where(np.abs(e) < 0.4, catch, pump)
    return np.clip(u / force_n, -1.0, 1.0)[:, None]


def episodes(num: int, dr, seed: int = 0) -> tuple[np.ndarray, int]:
    """One episode per environment: the successes and how many ended at the rail."""
    env = make_vec("sim2real/CartpoleSwingup-v0", num, seed=seed, dr=dr)
    env.reset()
    gain, done_success, terminated = lqr_gain(), np.full(num, np.nan), 0
    for _ in range(env.max_episode_steps):
        res = env.step(action(env, gain))
        ended = (res.truncated | res.terminated) & np.isnan(done_success)
        done_success[ended] = res.info["episode_success"][ended]
        terminated += int((res.terminated & ended).sum())
    return done_success, terminated


if __name__ == "__main__":
    dr = None if (sys.argv[1:] or ["default"])[0] == "none" else "default"
    success, ends = episodes(32, dr)
    print(f"dr={dr}: success {100 * np.nanmean(success):.0f} % of 32, {ends} ended at the rail")
