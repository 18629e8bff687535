"""Environment throughput beside bare simulation throughput of the same batch.

python benchmarks/bench_env.py [--envs 64 256] [--steps 200] [--repeat 5] [--nthread 0]
                               [--dr default|none|PATH] [--actuator KIND]

"bare": the same ``mujoco.rollout`` calls the environment makes (N model copies, ``nsub``
substeps each, the same controls) with no environment logic; "env": ``VecEnv.step`` with the
default domain randomization and random actions. Steps are control steps of one environment
(100 Hz), medians over ``repeat`` runs. With ``--actuator`` the environment steps in Python
(actuator model in the loop) while "bare" stays the rollout fast path.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from sim2real.learn.envs import make_vec

ENV = "sim2real/PendulumSwingup-v0"


def timed_rate(fn, steps: int, num: int) -> float:
    t = time.perf_counter()
    for k in range(steps):
        fn(k)
    return steps * num / (time.perf_counter() - t)


def bench_one(
    n: int, steps: int, repeat: int, nthread: int, dr, actuator: str | None
) -> tuple[float, float]:
    """Median (bare, env) steps/s; the two are measured alternately so machine load hits both."""
    config = {"nthread": nthread, "actuator": {"kind": actuator} if actuator else None}
    env = make_vec(ENV, n, seed=0, dr=dr, config=config)
    env.reset()
    actions = np.random.default_rng(0).uniform(-1, 1, (steps, n, 1))
    st = env.stepper
    ctrl = np.zeros((steps, n, env.nsub, st.nu))
    ctrl[..., 0] = actions  # the same torques, no delay line, limits or observations
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
    ap.add_argument("--envs", type=int, nargs="+", default=[64, 256])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--nthread", type=int, default=0)
    ap.add_argument("--dr", default="default", help="'default', 'none' or a YAML path")
    ap.add_argument(
        "--actuator", default=None, help="an actuator kind in the loop (Python path), e.g. torque"
    )
    args = ap.parse_args()
    dr = None if args.dr == "none" else args.dr
    print(f"{'N':>5} {'bare steps/s':>14} {'env steps/s':>13} {'env/bare':>9}")
    for n in args.envs:
        bare, ours = bench_one(n, args.steps, args.repeat, args.nthread, dr, args.actuator)
        print(f"{n:>5} {bare:>14.0f} {ours:>13.0f} {ours / bare:>9.2f}")


if __name__ == "__main__":
    main()
