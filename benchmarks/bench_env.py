"""Environment throughput beside bare simulation throughput of the same batch, for every task.

python benchmarks/bench_env.py [--env ID ...] [--envs 64 256] [--steps 200] [--repeat 5]
                               [--nthread 0] [--dr default|none|PATH] [--actuator KIND]
                               [--friction KIND]

"bare": the same ``mujoco.rollout`` calls the environment makes (N model copies, ``nsub``
substeps each, the same torques) with no environment logic; "env": ``VecEnv.step`` with the
task's default domain randomization and random actions (terms, events, delay line, noise,
history, autoresets). Steps are control steps of one environment (100 Hz), medians over
``repeat`` runs measured alternately so machine load hits both. With ``--actuator`` an
actuator model is in the loop (one batched call per substep: one rollout call per substep, or
the per-environment Python path for a BAM friction model, ``--friction KIND``) while "bare"
stays one rollout call per control step. The load average is printed beside the figures.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from sim2real.learn.envs import ENV_IDS, TASKS, make_vec


def timed_rate(fn, steps: int, num: int) -> float:
    t = time.perf_counter()
    for k in range(steps):
        fn(k)
    return steps * num / (time.perf_counter() - t)


def bench_one(
    env_id: str, n: int, steps: int, repeat: int, nthread: int, dr, actuator: dict | None
) -> tuple[float, float]:
    """Median (bare, env) steps/s."""
    config = {"nthread": nthread, "actuator": actuator}
    env = make_vec(env_id, n, seed=0, dr=dr, config=config)
    env.reset()
    actions = np.random.default_rng(0).uniform(-1, 1, (steps, n, env.action_dim))
    st = env.stepper
    ctrl = np.zeros((steps, n, env.nsub, st.nu))
    ctrl[..., env.act.act_index] = actions[:, :, None, :] * env.action_limit
    qfrc = np.zeros((n, env.nsub, st.nv))
    bare, ours = [], []
    for _ in range(repeat):
        bare.append(timed_rate(lambda k: st.step(ctrl[k], qfrc), steps, n))
        env.reset()
        ours.append(timed_rate(lambda k: env.step(actions[k]), steps, n))
    env.close()
    return float(np.median(bare)), float(np.median(ours))


def main() -> None:
    ap = argparse.ArgumentParser()
    own = [e for e in ENV_IDS if TASKS[e].vec_env is None]  # not tasks over another's env
    ap.add_argument("--env", nargs="+", default=own)
    ap.add_argument("--envs", type=int, nargs="+", default=[64, 256])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--nthread", type=int, default=0)
    ap.add_argument("--dr", default="default", help="'default', 'none' or a YAML path")
    ap.add_argument(
        "--actuator", default=None, help="an actuator kind in the loop, e.g. pd, dc, torque"
    )
    ap.add_argument(
        "--friction", default=None, help="the actuator's friction model, e.g. coulomb-viscous"
    )
    args = ap.parse_args()
    dr = None if args.dr == "none" else args.dr
    actuator = {"kind": args.actuator} if args.actuator else None
    if actuator and args.friction:
        actuator["friction"] = args.friction
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("| env | N | bare steps/s | env steps/s | env / bare |")
    print("|---|---|---|---|---|")
    for env_id in args.env:
        for n in args.envs:
            bare, ours = bench_one(env_id, n, args.steps, args.repeat, args.nthread, dr, actuator)
            print(f"| {env_id} | {n} | {bare:,.0f} | {ours:,.0f} | {ours / bare:.2f} |")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
