"""`policy eval`'s grid (each run in its training conditions and in each world), its cells one
after another against side by side in local worker processes, in one run: wall time and
whether every figure is the same.

python benchmarks/bench_eval_grid.py RUN [RUN ...] [--reality NAME ...] [--episodes 200]
    [--processes N]

Each cell is seeded alike wherever it runs, so both arms must agree to the last digit; the
script says so or fails. The side-by-side arm runs first.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from sim2real.core.cores import usable_cores
from sim2real.learn.evaluate import evaluate_runs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--reality", nargs="*", default=[])
    ap.add_argument("--episodes", type=int, default=200)
    ap.add_argument("--processes", type=int, default=usable_cores())
    args = ap.parse_args()
    if args.processes < 2:
        ap.error("--processes: side by side needs 2 or more (the other arm is 1)")
    arms = []
    for processes in (args.processes, 1):
        t0 = time.perf_counter()
        results, _ = evaluate_runs(
            args.runs, args.reality, episodes=args.episodes, processes=processes
        )
        wall = time.perf_counter() - t0
        table = {run: [r.to_dict() for r in rows] for run, rows in results.items()}
        arms.append((wall, table))
        cells = sum(len(rows) for rows in table.values())
        print(
            f"{processes} process(es): {wall:.1f} s for {cells} cells of {args.episodes} episodes"
        )
    (side_wall, side), (seq_wall, seq) = arms
    print(f"speed-up {seq_wall / side_wall:.2f}x; the same figures: {side == seq}")
    if side != seq:
        raise SystemExit("the side-by-side cells differ from the sequential ones")


if __name__ == "__main__":
    main()
