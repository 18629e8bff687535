"""System identification on the real data sets: fit times, identified parameters against the
published ones, and hold-out position RMSE of our fit against the published model simulated the
same way (same segments from the same measured states, same logged torques), in one run.

python benchmarks/bench_sysid.py [--only pendulum,pendulum-1kg,double,servo] [--seed 0]

- pendulum: fit on pd/system_identification, hold out energy_shaping, ddp, ilqr,
  direct_collocation (target: fit <= 60 s; RMSE below the published fit's).
- pendulum-1kg: fit on energy_shaping with and without the added 1 kg (m cx must grow).
- double: fit on trajectories 00-02, hold out 03 (target: fit <= 5 min; RMSE below
  model_2.0's).
- servo: the XL330 bench at kp 200 (no published model of this form: nominal as baseline).
Fit times are the library call (``identify``: reading, fitting, uncertainty, evaluation).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from sim2real.core.data import real_data
from sim2real.sim.builtin import BUILTINS
from sim2real.sysid.fit import FitConfig
from sim2real.sysid.reference import PENDULUM_PUBLISHED
from sim2real.sysid.run import identify


def rmse_row(label: str, errs: dict) -> str:
    return f"{label}: " + ", ".join(f"{h:g} s {e.rmse_rad:.4f} rad" for h, e in errs.items())


def report(name: str, result, wall_s: float) -> None:
    print(f"\n== {name}: wall {wall_s:.1f} s (optimizer {result.fit.seconds:.1f} s, "
          f"{result.fit.evaluations} evaluations)")  # fmt: skip
    for line in result.summary_lines()[1:]:
        print(line)


def run(model: str, fit: list[str], hold: list[str], budget_s: float, seed: int, **kw):
    from sim2real.sysid.objective import ObjectiveConfig

    seg = BUILTINS[model].segment_s
    cfg = FitConfig(objective=ObjectiveConfig(segment_s=seg), time_budget_s=budget_s, seed=seed,
                    max_evals=kw.pop("max_evals", 2500))  # fmt: skip
    t0 = time.perf_counter()
    result = identify(model, [real_data(p) for p in fit],
                      holdout=[real_data(p) for p in hold], cfg=cfg, **kw)  # fmt: skip
    return result, time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="pendulum,pendulum-1kg,double,servo")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    only = args.only.split(",")
    if "pendulum" in only:
        b = BUILTINS["pendulum-dfki"]
        res, wall = run(b.name, list(b.fit_logs), list(b.holdout_logs), 40, args.seed)
        report("pendulum-dfki", res, wall)
        p = PENDULUM_PUBLISHED
        v = dict(zip(res.space.names, res.fit.values, strict=True))
        print(f"published: J {p['J']}, m cx {p['mcx']}, Fv {p['Fv']}, "
              f"Fc {p['Fc']} (x pi/2 = {p['Fc'] * np.pi / 2:.4f} as Coulomb level), "
              f"offset {p['offset']} (bias {-p['offset']})")  # fmt: skip
        print(f"ours:      J {res.derived['J_kg_m2']:.4f}, m cx {res.derived['m_cx_kg_m']:.4f}, "
              f"Fv {v['damping_Nm_s']:.4f}, Coulomb {v['frictionloss_Nm']:.4f}, "
              f"bias {v['torque_bias_Nm']:.4f}, delay {1e3 * v['delay_s']:.1f} ms")  # fmt: skip
        from sim2real.sysid.evaluate import prediction_errors

        for log in res.holdout:
            print(f"  hold-out {log.source.split('real/')[-1]}:", end=" ")
            ours = prediction_errors(res.sim, res.space, res.fit.values, [log])
            ref = res.reference
            theirs = prediction_errors(ref.sim, ref.space, ref.values, [log])
            print(", ".join(f"{h:g} s ours {ours[h].rmse_rad:.3f} vs {theirs[h].rmse_rad:.3f}"
                            for h in ours))  # fmt: skip
    if "pendulum-1kg" in only:
        base = "pendulum-dfki/energy_shaping/data_measured.csv"
        heavy = "pendulum-dfki/energy_shaping/data_measured_1kg.csv"
        light, w1 = run("pendulum-dfki", [base], [], 40, args.seed, reference=False)
        loaded, w2 = run("pendulum-dfki", [heavy], [], 40, args.seed, reference=False)
        d0, d1 = light.derived, loaded.derived
        print(f"\n== pendulum 1 kg: fits {w1:.1f} s and {w2:.1f} s")
        print(f"energy_shaping      : J {d0['J_kg_m2']:.4f}, m cx {d0['m_cx_kg_m']:.4f}")
        print(f"energy_shaping + 1kg: J {d1['J_kg_m2']:.4f}, m cx {d1['m_cx_kg_m']:.4f}")
        dm = d1["m_cx_kg_m"] - d0["m_cx_kg_m"]
        dJ = d1["J_kg_m2"] - d0["J_kg_m2"]
        print(f"added: m cx +{dm:.4f} kg m, J +{dJ:.4f} kg m^2 "
              f"(1 kg at {dJ / dm if dm > 0 else float('nan'):.3f} m: J / m cx of the addition)")  # fmt: skip
    if "double" in only:
        b = BUILTINS["double-pendulum-dfki"]
        res, wall = run(b.name, list(b.fit_logs), list(b.holdout_logs), 210, args.seed,
                        max_evals=8000)  # fmt: skip
        report("double-pendulum-dfki", res, wall)
    if "servo" in only:
        b = BUILTINS["servo-bam-xl330"]
        res, wall = run(b.name, list(b.fit_logs), list(b.holdout_logs), 40, args.seed)
        report("servo-bam-xl330", res, wall)
        from sim2real.sysid.evaluate import prediction_errors

        nominal = prediction_errors(res.sim, res.space, res.space.nominal(), res.holdout)
        print(rmse_row("nominal (BAM m1 at kp 200) on hold-out", nominal))


if __name__ == "__main__":
    main()
