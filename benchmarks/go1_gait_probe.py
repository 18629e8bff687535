"""Diagnostics of a Go1 walking run (the figures of RESULTS.md, "a walking gait"): does it walk
yet, and what does each reward term pay.

    python benchmarks/go1_gait_probe.py RUN velocities    # measured velocity per held command
    python benchmarks/go1_gait_probe.py RUN terms --noise 0.25 [--vx 1.0] [--legged-gym]

``velocities``: 8 environments in the nominal world (no randomization), each command held for
5 s; the mean body-frame (vx, vy, yaw rate) after the first second, and the falls.
``terms``: 16 environments under the default randomization, 200 steps with the command
(vx, 0, 0) held and Gaussian noise of std ``--noise`` added to the policy's actions (the
exploration of a training run); the mean weighted value of every reward term per step.
"""

from __future__ import annotations

import argparse

import numpy as np

from sim2real.learn.envs import make_vec
from sim2real.learn.policy import load_policy

LEGGED_GYM = {  # legged_gym's penalty weights (the task's before the walking gait)
    "lin_vel_z": 2.0, "ang_vel_xy": 0.05, "torques": 2e-4, "joint_acc": 2.5e-7,
    "action_rate": 0.01, "feet_air_time": 1.0,
}  # fmt: skip
COMMANDS = [(0.0, 0, 0), (0.5, 0, 0), (1.0, 0, 0), (-0.5, 0, 0), (0, 0.4, 0), (0, 0, 0.8)]


def _env(policy, command, n, dr, reward=None):
    cfg = dict(policy.env_config)
    if reward:
        cfg["reward"] = {**cfg.get("reward", {}), **reward}
    ranges = dict(zip(("vx", "vy", "yaw_rate"), ((c, c) for c in command), strict=True))
    cfg.update(commands=ranges, command_resample_s=0.0, desync_episodes=False)
    return make_vec(policy.env_id, n, seed=1, dr=dr, config=cfg)


def velocities(policy) -> None:
    for command in COMMANDS:
        env = _env(policy, command, 8, None)
        obs, measured, falls = env.reset(seed=1), [], 0
        for t in range(250):
            res = env.step(policy.act(obs))
            obs, falls = res.obs, falls + int(res.terminated.sum())
            if t >= 50:
                b = env.legged.base(env.stepper.qpos, env.stepper.qvel)
                measured.append(np.c_[b.lin_vel_b[:, :2], b.ang_vel_b[:, 2]].mean(0))
        vx, vy, wz = np.mean(measured, axis=0)
        print(f"command {command}: vx {vx:+.2f} vy {vy:+.2f} yaw rate {wz:+.2f}, falls {falls}")


def terms(policy, noise: float, vx: float, reward: dict | None) -> None:
    env = _env(policy, (vx, 0.0, 0.0), 16, "default", reward)
    paid: dict[str, list[float]] = {}

    def recorded(name, weight, term):
        def f(view):
            value = term(view)
            paid.setdefault(name, []).append(weight * float(np.mean(value)))
            return value

        return weight, f

    env._rewards = [
        recorded(n, w, t) for n, (w, t) in zip(env.reward_terms, env._rewards, strict=True)
    ]
    obs, rng = env.reset(seed=1), np.random.default_rng(0)
    for _ in range(200):
        obs = env.step(policy.act(obs) + noise * rng.standard_normal((16, env.action_dim))).obs
    means = {k: float(np.mean(v)) for k, v in paid.items()}
    print(
        " ".join(f"{k} {v:+.3f}" for k, v in means.items()), f"| total {sum(means.values()):+.3f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("what", choices=["velocities", "terms"])
    ap.add_argument("--noise", type=float, default=0.0)
    ap.add_argument("--vx", type=float, default=1.0)
    ap.add_argument("--legged-gym", action="store_true", help="legged_gym's penalty weights")
    args = ap.parse_args()
    policy = load_policy(args.run)
    if args.what == "velocities":
        velocities(policy)
    else:
        terms(policy, args.noise, args.vx, LEGGED_GYM if args.legged_gym else None)


if __name__ == "__main__":
    main()
