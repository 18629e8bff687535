"""Can the pendubot be held upright in each evaluation world at the task's control rate?

python benchmarks/pendubot_balance_bound.py [--run RUN] [--episodes 20] [--seed 1]

Every episode starts at the goal (``init_goal_share`` 1: both links upright, within the
task's start spread). A discrete LQR of the world's own model, linearized by finite
differences of MuJoCo's step at the goal over one control period (once as the world is,
once with its Coulomb friction left out), reads the true state and
acts through the task's actuation path (torque limit, the world's delay); the policy of RUN
(optional) gets the same starts. Printed per world: the episodes that meet the task's success
(both joints in the band for the hold), and the share of steps within 0.3 rad of the goal.
A world the LQR holds and the policy does not is a gap in learning, not in the physics.
"""

from __future__ import annotations

import argparse

import mujoco
import numpy as np
import scipy.linalg

from sim2real.learn.envs.task import task_config
from sim2real.learn.reality import load_reality, reality_env
from sim2real.learn.reality_sets import reality_sets

ENV = "sim2real/PendubotSwingup-v0"
GOAL = np.array([np.pi, 0.0])


def lqr_gain(env, coulomb: bool) -> np.ndarray:
    """(1, 4) gain on [q - goal, qd] (N m per rad, per rad/s) of env's first model, with or
    without its Coulomb friction (a discontinuity at rest: what the differences see of it
    depends on the step size)."""
    m = env.stepper.models[0].__copy__()
    if not coulomb:
        m.dof_frictionloss[:] = 0.0
    d = mujoco.MjData(m)

    def step(x: np.ndarray, u: float) -> np.ndarray:
        d.qpos[:], d.qvel[:], d.ctrl[:] = 0.0, 0.0, 0.0
        d.qpos[env.qadr], d.qvel[env.dof], d.ctrl[0] = x[:2], x[2:], u
        for _ in range(env.nsub):
            mujoco.mj_step(m, d)
        return np.r_[d.qpos[env.qadr], d.qvel[env.dof]]

    x0, eps = np.r_[GOAL, 0.0, 0.0], 1e-5
    a = np.column_stack([(step(x0 + eps * e, 0) - step(x0 - eps * e, 0)) / (2 * eps)
                         for e in np.eye(4)])  # fmt: skip
    b = ((step(x0, eps) - step(x0, -eps)) / (2 * eps))[:, None]
    q, r = np.diag([10.0, 10.0, 1.0, 1.0]), np.array([[1.0]])
    p = scipy.linalg.solve_discrete_are(a, b, q, r)
    return np.linalg.solve(r + b.T @ p @ b, b.T @ p @ a)


def hold(env, act, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Per environment: the first episode's success and its share of steps within 0.3 rad."""
    obs = env.reset(seed=seed)
    steps = env.max_episode_steps
    near = np.zeros(env.num_envs)
    success = np.full(env.num_envs, np.nan)
    for _ in range(steps):
        result = env.step(act(obs))
        obs = result.obs
        err = np.angle(np.exp(1j * (env.stepper.qpos[:, env.qadr] - GOAL)))
        near += np.abs(err).max(axis=1) < 0.3
        done = np.isnan(success) & ~np.isnan(result.info["episode_return"])
        success[done] = result.info["episode_success"][done]
    return success > 0.5, near / steps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", help="a pendubot policy run to compare (optional)")
    ap.add_argument("--episodes", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    policy = None
    if args.run:
        from sim2real.learn.policy import load_policy

        policy = load_policy(args.run)
    config = {**task_config(policy.env_config if policy else {}), "init_goal_share": 1.0}
    print(f"{args.episodes} episodes from the goal per world (seed {args.seed})")
    print("| world | LQR | LQR without Coulomb | policy |")
    print("| --- | --- | --- | --- |")
    for name in reality_sets(ENV).evaluation:
        env = reality_env(load_reality(name), ENV, config, args.episodes, args.seed)
        env.reset(seed=args.seed)  # the world's parameters are written at reset
        actors = [lqr(env, lqr_gain(env, coulomb)) for coulomb in (True, False)]
        cells = []
        for act in actors + ([policy.act] if policy is not None else []):
            ok, near = hold(env, act, args.seed)
            cells.append(f"{ok.mean():.0%} ({near.mean():.2f} of steps near)")
        print(f"| {name} | {' | '.join(cells)} |" + (" |" if policy is None else ""))


def lqr(env, gain: np.ndarray):
    """The actor of a gain (N m) on the true state, as an action in [-1, 1]."""
    gain = gain / env.action_limit[0]

    def act(_obs):
        q, qd = env.stepper.qpos[:, env.qadr], env.stepper.qvel[:, env.dof]
        err = np.c_[np.angle(np.exp(1j * (q - GOAL))), qd]
        return np.clip(-err @ gain.T, -1.0, 1.0).astype(np.float32)

    return act


if __name__ == "__main__":
    main()
