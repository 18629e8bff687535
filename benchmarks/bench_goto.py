"""Go there: the hierarchy (velocity commands over the frozen walking policy,
``sim2real/Go1GoTo-v0``) against the same navigation learned end to end (joint targets from the
goal, ``sim2real/Go1GoToJoints-v0``), both trained with their shipped settings (issue 18,
part 5). Each run is evaluated in its training conditions and in the Go1's worlds (validation
and evaluation), same seeds and episodes for both: success (arrived within 0.3 m in 15 s),
falls, median time to the goal of the arrivals; with each run's training steps and wall time
(the hierarchy's own, and with its walking policy's).

    python benchmarks/bench_goto.py --hierarchy RUN_H --end-to-end RUN_E [--episodes 50]
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from sim2real.learn.envs import goto
from sim2real.learn.evaluate import evaluate_runs
from sim2real.learn.policy import load_policy
from sim2real.learn.run_folder import read_metrics

WORLDS = ["validation-go1", "go1-slippery-heavy-weak", "go1-grippy-light-strong"]


def _budget(run: Path) -> tuple[int, float]:
    rows = read_metrics(run)
    return int(rows[-1]["env_steps"]), float(rows[-1]["wall_s"])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hierarchy", type=Path, required=True)
    ap.add_argument("--end-to-end", type=Path, required=True)
    ap.add_argument("--episodes", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    runs = {"hierarchy": args.hierarchy, "end to end": args.end_to_end}
    for name, run in runs.items():
        steps, wall = _budget(run)
        line = f"{name}: {run}, {steps:,} steps in {wall / 60:.1f} min"
        if name == "hierarchy":  # its walking steps, plus the walker's own training
            policy = load_policy(run)
            walker = policy.env_config.get("low_level", str(goto.SHIPPED_WALKER))
            per_step = round(policy.control_dt / load_policy(walker).control_dt)
            w_steps, w_wall = _budget(Path(walker))
            line += (
                f" (= {per_step * steps:,} walking steps) over the walking policy {walker}: "
                f"{w_steps:,} steps in {w_wall / 60:.1f} min"
            )
        print(line)
    results, _ = evaluate_runs(list(runs.values()), WORLDS, episodes=args.episodes, seed=args.seed)
    print("\n| world | learner | success | falls | time to goal, median [s] |")
    print("|---|---|---|---|---|")
    by_world: dict[str, list[str]] = {}
    for name, run in runs.items():
        for res in results[str(run)]:
            m = res.metrics.to_dict()
            t = m["time_to_goal_median_s"]
            cell = (
                f"| {res.world} | {name} | {100 * res.success_rate:.0f} % | "
                f"{100 * m['fall_rate']:.0f} % | {'-' if t is None else f'{t:.2f}'} |"
            )
            by_world.setdefault(res.world, []).append(cell)
    for cells in by_world.values():
        print("\n".join(cells))
    print(f"\n{args.episodes} episodes per world and learner, seed {args.seed}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
