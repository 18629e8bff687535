"""Can the pendubot be held upright in each evaluation world at the task's control rate?

python benchmarks/pendubot_balance_bound.py [--run RUN] [--episodes 20] [--seed 1]
    [--landscape DR [--episode-s 3]]

Every episode starts at the goal (``init_goal_share`` 1: both links upright, within the
task's start spread). A discrete LQR of the world's own model, linearized by finite
differences of MuJoCo's step at the goal over one control period (once as the world is,
once with its Coulomb friction left out), reads the true state and
acts through the task's actuation path (torque limit, the world's delay); the policy of RUN
(optional) gets the same starts. Printed per world: the episodes that meet the task's success
(both joints in the band for the hold), and the share of steps within 0.3 rad of the goal.
A world the LQR holds and the policy does not is a gap in learning, not in the physics.

``--landscape DR``: the reward along the way to that hold. On the training randomization DR
(``default`` or a YAML; every episode from the goal, ``--episode-s`` long), the LQR of DFKI 2.1
scaled by alpha = 0 ... 1 (``action = alpha K x``), and the policy of RUN: each reward term's
episode sum (``info["episode_terms"]``, mean over the environments) and the success rate. A
return that dips between alpha 0 and 1 is a valley a learner climbing from no action must cross.
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
    ap.add_argument("--landscape", metavar="DR", help="reward terms along the way to the hold")
    ap.add_argument("--episode-s", type=float, default=3.0, help="with --landscape")
    args = ap.parse_args()
    policy = None
    if args.run:
        from sim2real.learn.policy import load_policy

        policy = load_policy(args.run)
    config = {**task_config(policy.env_config if policy else {}), "init_goal_share": 1.0}
    if args.landscape:
        landscape(args.landscape, {**config, "episode_s": args.episode_s}, policy, args.seed)
        return
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


def episode_terms(env, act, seed: int) -> tuple[dict[str, float], float]:
    """Each reward term's sum over the first episode (mean over the environments), success."""
    obs = env.reset(seed=seed)
    terms = np.full((env.num_envs, len(env.reward_names)), np.nan)
    success = np.full(env.num_envs, np.nan)
    for _ in range(env.max_episode_steps):
        result = env.step(act(obs))
        obs = result.obs
        done = np.isnan(success) & ~np.isnan(result.info["episode_return"])
        terms[done] = result.info["episode_terms"][done]
        success[done] = result.info["episode_success"][done]
    return dict(zip(env.reward_names, terms.mean(axis=0), strict=True)), float(success.mean())


def landscape(dr: str, config: dict, policy, seed: int) -> None:
    from sim2real.learn.envs import make_vec

    world = reality_env(load_reality("pendubot-dfki-2.1"), ENV, config, 1, seed)
    world.reset(seed=seed)
    gain = lqr_gain(world, coulomb=True)
    env = make_vec(ENV, 64, seed=seed, dr=dr, config={**config, "init_random_share": 0.0})
    actors = [(f"LQR x {a}", lqr(env, a * gain)) for a in (0.0, 0.25, 0.5, 0.75, 1.0)]
    actors += [("policy", policy.act)] if policy is not None else []
    print(f"randomization {dr}, 64 worlds from the goal, {config['episode_s']} s episodes")
    print(f"| actor | return | success | {' | '.join(env.reward_names)} |")
    print("| --- " * (len(env.reward_names) + 3) + "|")
    for name, act in actors:
        terms, success = episode_terms(env, act, seed)
        cells = " | ".join(f"{v:,.1f}" for v in terms.values())
        print(f"| {name} | {sum(terms.values()):,.1f} | {success:.0%} | {cells} |")


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
