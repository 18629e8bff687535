"""`actuator fit --model auto`'s choice on the real XL330 logs, its fits one at a time against
side by side (one worker process per core), in one run: wall time and whether every fit's
figures are the same.

python benchmarks/bench_actuator_choice.py [--candidates coulomb-viscous directional ...]
    [--processes N] [--popsize 32] [--max-evals 2000] [--restarts 2]

Both arms run ``select_model`` (leave one gain out over the logs' gains) on all 12 logs with
the same settings and a fresh cache; the side-by-side arm first. Each fit is seeded by the
settings alone, so the two must agree to the last digit; the script says so or fails.
"""

from __future__ import annotations

import argparse
import time

from sim2real.actuators.catalog import AUTO_CANDIDATES, FitSettings, is_physical, n_params
from sim2real.actuators.compare import make_cache
from sim2real.actuators.fit import evaluate
from sim2real.actuators.select import select_model
from sim2real.actuators.servo_log import read_servo_log
from sim2real.core.cores import usable_cores
from sim2real.core.data import real_data


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--candidates", nargs="+", default=list(AUTO_CANDIDATES))
    ap.add_argument("--processes", type=int, default=usable_cores())
    ap.add_argument("--popsize", type=int, default=32)
    ap.add_argument("--max-evals", type=int, default=2000)
    ap.add_argument("--restarts", type=int, default=2)
    args = ap.parse_args()
    if args.processes < 2:
        ap.error("--processes: side by side needs 2 or more (the other arm is 1)")
    logs = [read_servo_log(p) for p in sorted(real_data("servo-bam-xl330", "processed").glob("*"))]
    settings = FitSettings(args.popsize, args.max_evals, args.restarts)
    print(
        f"{len(logs)} logs; candidates {', '.join(args.candidates)}; CMA-ES popsize "
        f"{settings.popsize}, {settings.max_evals} evals x {settings.restarts + 1} runs"
    )
    arms = {}
    for processes in (args.processes, 1):
        cache = make_cache(settings, processes=processes)
        t0 = time.perf_counter()
        sel = select_model(args.candidates, logs, cache, evaluate, n_params, is_physical)
        wall = time.perf_counter() - t0
        folds = {
            (c.name, f.held_kp): (f.train_mae_rad, f.holdout_mae_rad)
            for c in sel.candidates
            for f in c.folds
        }
        arms[processes] = (wall, sel.chosen, folds)
        print(f"{processes} process(es): {wall:.1f} s, {len(folds)} fits, chosen {sel.chosen}")
    (par_wall, par_chosen, par_folds), (seq_wall, seq_chosen, seq_folds) = arms.values()
    same = par_folds == seq_folds and par_chosen == seq_chosen
    print(f"speed-up {seq_wall / par_wall:.2f}x; the same figures and choice: {same}")
    if not same:
        raise SystemExit("the side-by-side fits differ from the sequential ones")


if __name__ == "__main__":
    main()
