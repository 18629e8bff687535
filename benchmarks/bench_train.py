"""Training throughput: environment steps per second of PPO training beside bare stepping of
the same batch with random actions, in one run.

python benchmarks/bench_train.py [--env sim2real/PendulumSwingup-v0] [--iterations 10]
    [--repeat 3] [--torch-threads 1 2]

(a) bare: ``env.step`` with uniform random actions, ``num_envs`` x ``steps_per_env`` steps (one
PPO rollout's worth), from the environment's default training settings; and the same batch's
``mujoco.rollout`` calls alone (the environment's stepper, no environment logic:
``bench_env.py``'s "bare");
(b) collection: the rollout half of a PPO iteration (policy and value inference, storage);
(c) training: whole PPO iterations (collection + update), from ``metrics.csv``.
(a) runs before and after the training runs (medians over ``--repeat`` rollouts each), so a
change of load on the shared machine shows up as a spread between the two. With several
``--torch-threads`` the trainings alternate, ``--repeat`` times each (medians of their
iterations), the first count the baseline of the others.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import numpy as np

from sim2real.learn.envs import make_vec
from sim2real.learn.train import default_train_config, read_metrics, train


def bare_rate(env_id: str, num_envs: int, steps: int, repeat: int) -> tuple[float, float]:
    """Median steps/s of ``env.step`` and of the same ``mujoco.rollout`` calls alone."""
    env = make_vec(env_id, num_envs, seed=0)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    st = env.stepper
    qfrc = np.zeros((num_envs, env.nsub, st.nv))
    rates, rollout_rates = [], []
    for _ in range(repeat):
        actions = rng.uniform(-1.0, 1.0, (steps, num_envs, env.action_dim))
        ctrl = np.zeros((steps, num_envs, env.nsub, st.nu))
        ctrl[..., env.act.act_index] = actions[:, :, None, :] * env.action_limit
        t0 = time.perf_counter()
        for a in actions:
            env.step(a)
        rates.append(num_envs * steps / (time.perf_counter() - t0))
        t0 = time.perf_counter()
        for c in ctrl:
            st.step(c, qfrc)
        rollout_rates.append(num_envs * steps / (time.perf_counter() - t0))
    env.close()
    return statistics.median(rates), statistics.median(rollout_rates)


def timed_iterations(env_id: str, cfg) -> list[dict]:
    """metrics.csv's rows of one training with ``cfg`` but the first (its warm-up)."""
    with tempfile.TemporaryDirectory() as run:
        train(run, env_id, train_config=cfg, quiet=True)
        return read_metrics(run)[1:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="sim2real/PendulumSwingup-v0")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--torch-threads", type=int, nargs="+", default=None,
        help="torch threads of the training (default: the settings'); several: compared",
    )  # fmt: skip
    args = parser.parse_args()
    cfg = default_train_config(args.env)
    batch = cfg.num_envs * cfg.steps_per_env
    cfg = cfg.model_copy(update={"total_env_steps": batch * args.iterations})
    counts = args.torch_threads or [cfg.torch_threads]
    before = bare_rate(args.env, cfg.num_envs, cfg.steps_per_env, args.repeat)
    rows: dict[int, list[dict]] = {n: [] for n in counts}
    for _ in range(args.repeat if len(counts) > 1 else 1):
        for n in counts:
            rows[n] += timed_iterations(args.env, cfg.model_copy(update={"torch_threads": n}))
    after = bare_rate(args.env, cfg.num_envs, cfg.steps_per_env, args.repeat)
    bare = statistics.median([before[0], after[0]])
    rollout = statistics.median([before[1], after[1]])
    print(
        f"{args.env}: {cfg.num_envs} envs x {cfg.steps_per_env} steps per iteration, "
        f"{len(rows[counts[0]])} iterations timed per thread count"
    )
    print(
        "| stage | torch threads | env steps/s | vs bare env.step | vs bare mujoco.rollout | "
        "update s per iteration |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    print(
        f"| (a) bare mujoco.rollout calls | | {rollout:,.0f} (before {before[1]:,.0f}, after "
        f"{after[1]:,.0f}) | {rollout / bare:.2f} | 1.00 | |"
    )
    print(
        f"| (a) bare env.step, random actions | | {bare:,.0f} "
        f"(before {before[0]:,.0f}, after {after[0]:,.0f}) | 1.00 | {bare / rollout:.2f} | |"
    )
    for n in counts:
        collect = statistics.median(batch / r["collect_s"] for r in rows[n])
        whole = statistics.median(r["steps_per_s"] for r in rows[n])
        learn_s = statistics.median(r["learn_s"] for r in rows[n])
        print(
            f"| (b) PPO rollout collection | {n} | {collect:,.0f} | {collect / bare:.2f} | "
            f"{collect / rollout:.2f} | |"
        )
        print(
            f"| (c) PPO training (collection + update) | {n} | {whole:,.0f} | {whole / bare:.2f} | "
            f"{whole / rollout:.2f} | {learn_s:.3f} |"
        )


if __name__ == "__main__":
    main()
