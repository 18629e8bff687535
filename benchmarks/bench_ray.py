"""Environments sharded over Ray actors against the local batch, in one run on one machine:
stepping alone, whole training iterations, and what crosses the wire per iteration.

python benchmarks/bench_ray.py [--env sim2real/PendulumSwingup-v0] [--num-envs 64]
    [--steps-per-env 256] [--iterations 3] [--repeat 3] [--workers 1,2]

(a) stepping: ``steps-per-env`` steps of ``num-envs`` environments with fixed random actions,
the local VecEnv (``make_vec``) against a ShardedVecEnv of each worker count, alternating, medians
over ``--repeat``; env steps/s and the ratio to local.
(b) training: ``--iterations`` PPO iterations of the environment's shipped settings (batch and
network; ``num-envs`` and ``steps-per-env`` as given) with each environment kind; env steps/s
is the median of the iterations' own figure (collect + update, Ray's start-up left out).
(c) traffic: pickled sizes (what Ray serializes) of the actions sent and the step results
received in one iteration, per step and per iteration, and of a checkpoint's environment state.
One local Ray instance serves every sharded case; its start-up time is printed.
"""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np


def stepping_rate(env, actions: np.ndarray) -> float:
    """Env steps/s of ``env.step`` over ``actions`` (T, N, A)."""
    env.reset(seed=0)
    t0 = time.perf_counter()
    for a in actions:
        env.step(a)
    return actions.shape[0] * actions.shape[1] / (time.perf_counter() - t0)


def training_rate(env_id: str, num_envs: int, steps_per_env: int, iterations: int, make_env):
    """Median env steps/s of the iterations of a short training run, and the run's rows."""
    from sim2real.learn.train import default_train_config, read_metrics, train

    cfg = default_train_config(env_id).model_copy(
        update={
            "num_envs": num_envs,
            "steps_per_env": steps_per_env,
            "total_env_steps": num_envs * steps_per_env * iterations,
            "checkpoint_every": iterations,
        }
    )
    with tempfile.TemporaryDirectory() as tmp:
        train(Path(tmp) / "run", env_id, train_config=cfg, quiet=True, make_env=make_env)
        rows = read_metrics(Path(tmp) / "run")
    return statistics.median(r["steps_per_s"] for r in rows), rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="sim2real/PendulumSwingup-v0")
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--steps-per-env", type=int, default=256)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", default="1,2", help="worker counts, comma-separated")
    args = parser.parse_args()
    import ray

    from sim2real.learn.distributed.sharded import ShardedVecEnv, sharded_make_env
    from sim2real.learn.envs import make_vec

    counts = [int(w) for w in args.workers.split(",")]
    n, t_steps = args.num_envs, args.steps_per_env
    print(f"{args.env}: {n} environments, {t_steps} steps per iteration; {os.cpu_count()} CPUs")
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    t0 = time.perf_counter()
    # every sharded batch lives at once (stepped in turn): a CPU token for each of their actors
    ray.init(address="local", num_cpus=max(os.cpu_count() or 1, sum(counts)),
             include_dashboard=False, log_to_driver=False)  # fmt: skip
    print(f"local Ray instance started in {time.perf_counter() - t0:.1f} s")

    local = make_vec(args.env, n, seed=0)
    actions = np.random.default_rng(0).uniform(-1, 1, (t_steps, n, local.action_dim))
    envs = {"local": local}
    for w in counts:
        t0 = time.perf_counter()
        envs[f"{w} worker{'s' * (w > 1)}"] = ShardedVecEnv(args.env, n, workers=w, seed=0)
        print(f"{w} Ray workers ready in {time.perf_counter() - t0:.1f} s")
    rates: dict[str, list[float]] = {k: [] for k in envs}
    for env in envs.values():  # warm-up
        stepping_rate(env, actions[:8])
    for _ in range(args.repeat):
        for name, env in envs.items():
            rates[name].append(stepping_rate(env, actions))
    print(f"\n(a) stepping alone, env steps/s (median of {args.repeat})")
    base = statistics.median(rates["local"])
    for name, r in rates.items():
        med = statistics.median(r)
        print(f"  {name:10s} {med:10.0f}   x{med / base:.2f} of local")

    # (c) traffic, with the largest worker count
    w = counts[-1]
    env = envs[f"{w} worker{'s' * (w > 1)}"]
    env.count_bytes = True
    env.reset(seed=0)
    for a in actions:
        env.step(a)
    tr = env.traffic
    state_bytes = len(pickle.dumps(env.get_state(), protocol=5))
    per_sent, per_recv = tr["sent_bytes"] / tr["steps"], tr["received_bytes"] / tr["steps"]
    obs_dims = {g: local.obs_groups[g].dim for g in local.obs_groups}
    print(
        f"\n(c) traffic with {w} workers (observation groups {obs_dims}, action {local.action_dim})"
    )
    print(f"  per step:      out {per_sent:8.0f} B (actions)   back {per_recv:9.0f} B (results)")
    print(f"  per iteration: out {per_sent * t_steps / 1e3:8.1f} kB   back "
          f"{per_recv * t_steps / 1e6:9.2f} MB   ({t_steps} steps, {2 * w * t_steps} messages)")  # fmt: skip
    print(f"  per checkpoint: environment state {state_bytes / 1e3:.0f} kB")
    for e in envs.values():
        e.close()

    print(f"\n(b) training, env steps/s (median of {args.iterations} iterations)")
    kinds = {"local": None, **{f"{w} worker{'s' * (w > 1)}": sharded_make_env(w) for w in counts}}
    train_rates = {}
    for name, make_env in kinds.items():
        train_rates[name], rows = training_rate(args.env, n, t_steps, args.iterations, make_env)
        collect = statistics.median(r["collect_s"] for r in rows)
        learn = statistics.median(r["learn_s"] for r in rows)
        print(f"  {name:10s} {train_rates[name]:10.0f}   x{train_rates[name] / train_rates['local']:.2f}"
              f" of local   (collect {collect:.2f} s, update {learn:.2f} s per iteration)")  # fmt: skip
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    ray.shutdown()


if __name__ == "__main__":
    main()
