"""Training throughput: environment steps per second of PPO training beside bare stepping of
the same batch with random actions, in one run.

python benchmarks/bench_train.py [--env sim2real/PendulumSwingup-v0] [--iterations 10] [--repeat 3]

(a) bare: ``env.step`` with uniform random actions, ``num_envs`` x ``steps_per_env`` steps (one
PPO rollout's worth), from the environment's default training settings;
(b) collection: the rollout half of a PPO iteration (policy and value inference, storage);
(c) training: whole PPO iterations (collection + update), from ``metrics.csv``.
(a) runs before and after the training run (medians over ``--repeat`` rollouts each), so a
change of load on the shared machine shows up as a spread between the two.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import numpy as np

from sim2real.learn.envs import make_vec
from sim2real.learn.train import default_train_config, read_metrics, train


def bare_rate(env_id: str, num_envs: int, steps: int, repeat: int) -> float:
    env = make_vec(env_id, num_envs, seed=0)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    rates = []
    for _ in range(repeat):
        actions = rng.uniform(-1.0, 1.0, (steps, num_envs, env.action_dim))
        t0 = time.perf_counter()
        for a in actions:
            env.step(a)
        rates.append(num_envs * steps / (time.perf_counter() - t0))
    return statistics.median(rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="sim2real/PendulumSwingup-v0")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cfg = default_train_config(args.env)
    batch = cfg.num_envs * cfg.steps_per_env
    cfg = cfg.model_copy(update={"total_env_steps": batch * args.iterations})
    before = bare_rate(args.env, cfg.num_envs, cfg.steps_per_env, args.repeat)
    with tempfile.TemporaryDirectory() as run:
        train(run, args.env, train_config=cfg, quiet=True)
        rows = read_metrics(run)[1:]  # the first iteration includes warm-up
    after = bare_rate(args.env, cfg.num_envs, cfg.steps_per_env, args.repeat)
    collect = statistics.median(batch / r["collect_s"] for r in rows)
    learn_s = statistics.median(r["learn_s"] for r in rows)
    whole = statistics.median(r["steps_per_s"] for r in rows)
    bare = statistics.median([before, after])
    print(
        f"{args.env}: {cfg.num_envs} envs x {cfg.steps_per_env} steps per iteration, "
        f"{len(rows)} iterations timed"
    )
    print("| stage | env steps/s | vs bare |")
    print("| --- | --- | --- |")
    print(
        f"| (a) bare stepping, random actions | {bare:,.0f} "
        f"(before {before:,.0f}, after {after:,.0f}) | 1.00 |"
    )
    print(f"| (b) PPO rollout collection | {collect:,.0f} | {collect / bare:.2f} |")
    print(f"| (c) PPO training (collection + update) | {whole:,.0f} | {whole / bare:.2f} |")
    print(f"update: {learn_s:.2f} s per iteration (median)")


if __name__ == "__main__":
    main()
