"""How many episodes of a pendulum world can succeed at all: an upper bound from the physics.

python benchmarks/pendulum_arrival_bound.py [--reality bench-span] [--episodes 1000] [--seed 1]
                                            [--leads 0 0.02 0.04 0.06]

A controller that reads the true state pumps at full torque, u = sign(qvel predicted `lead`
seconds ahead) (the velocity plus `lead` times its last finite-difference acceleration, to
offset the action delay; at a standstill, towards the bottom): with |u| <= 1 nothing adds
energy faster. An episode whose pendulum this pumping never brings within the success band,
or brings there later than the episode's length minus the success hold, cannot succeed under
any policy that pumps no faster. Printed:
the share of episodes in the band by then, and when they got there. Catching at the top is
not attempted: the bound says what the world leaves possible, not what a controller achieves.
"""

from __future__ import annotations

import argparse

import numpy as np

from sim2real.learn.envs.task import task_config
from sim2real.learn.reality import load_reality, reality_env

ENV = "sim2real/PendulumSwingup-v0"


def arrivals(reality, episodes: int, seed: int, lead_s: float) -> tuple[np.ndarray, float, float]:
    """First time (s) each episode's pendulum is within the success band (NaN: never), the
    episode length and the success hold, under full-torque pumping with ``lead_s``."""
    env = reality_env(reality, ENV, task_config({}), episodes, seed)
    env.reset(seed=seed)
    cfg, stepper, dt = env.cfg, env.stepper, env.control_dt
    first = np.full(episodes, np.nan)
    previous = stepper.qvel[:, 0].copy()
    for step in range(env.max_episode_steps):
        qvel = stepper.qvel[:, 0].copy()
        predicted = qvel + lead_s * (qvel - previous) / dt
        previous = qvel
        # at a standstill (the start, a turning point, held by friction) push towards the
        # bottom, where the coming swing goes: a constant push there can hold it in place
        toward_bottom = np.where(np.sin(stepper.qpos[:, 0]) > 0, -1.0, 1.0)
        u = np.where(np.abs(predicted) < 0.05, toward_bottom, np.sign(predicted))
        env.step(u[:, None].astype(np.float32))
        off = np.abs(np.angle(np.exp(1j * (stepper.qpos[:, 0] - np.pi))))
        first = np.where(np.isnan(first) & (off < cfg.success_band_rad), (step + 1) * dt, first)
    return first, env.max_episode_steps * dt, cfg.success_hold_s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reality", default="bench-span")
    ap.add_argument("--episodes", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--leads", type=float, nargs="+", default=[0.0, 0.02, 0.04, 0.06])
    args = ap.parse_args()
    reality = load_reality(args.reality)
    print(f"{args.reality}, {args.episodes} episodes (seed {args.seed}), full-torque pumping")
    print("| lead | in the band in time for the hold | ever | arrival median | latest |")
    print("| --- | --- | --- | --- | --- |")
    for lead in args.leads:
        first, episode_s, hold_s = arrivals(reality, args.episodes, args.seed, lead)
        in_time = np.mean(first <= episode_s - hold_s)
        ever = np.mean(np.isfinite(first))
        print(
            f"| {1000 * lead:.0f} ms | {in_time:.1%} | {ever:.1%} | "
            f"{np.nanmedian(first):.2f} s | {np.nanmax(first):.2f} s |",
            flush=True,
        )


if __name__ == "__main__":
    main()
