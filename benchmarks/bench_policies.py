"""Policies that survive reality: the ablation of issue 8 on sim2real/PendulumSwingup-v0.

python benchmarks/bench_policies.py [--out runs/bench_policies] [--steps N] [--episodes 100]
                                    [--only dr no-dr ...] [--skip-train]

1. Identifies the real DFKI pendulum (``sysid fit`` on its excitation log): our own fit,
   ``fitted.xml`` and its ``dr.yaml``, which become a reality and a randomization.
2. Trains, each with the environment's default settings (``policy train``):
   ``no-dr`` (no randomization), ``dr`` (the default randomization), ``dr-identified``
   (our fitted model, randomized by the fit's own dr.yaml), ``dr+actuator`` (the default
   randomization with a torque-motor model in the loop whose lag, gain and delay are
   randomized too), ``teacher`` (privileged, default randomization) and ``student``
   (distilled from the teacher).
3. Evaluates every policy in its training conditions and in each reality (the shipped ones
   plus our fit), ``--episodes`` episodes each, and prints the ablation table (markdown),
   training wall times and throughput; writes an HTML report in OUT/report.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import yaml

from sim2real.core.data import real_data

ENV = "sim2real/PendulumSwingup-v0"
ACTUATOR = {
    "kind": "torque",
    "params": {"torque_time_constant_s": 0.005, "delay_s": 0.005, "torque_gain": 1.0},
}
ACTUATOR_TERMS = [
    {"name": "motor_lag", "target": "actuator.torque_time_constant_s", "mode": "reset",
     "distribution": "uniform", "range": [0.0, 0.015], "operation": "absolute"},
    {"name": "motor_gain", "target": "actuator.torque_gain", "mode": "reset",
     "distribution": "uniform", "range": [0.85, 1.1], "operation": "absolute"},
    {"name": "motor_delay", "target": "actuator.delay_s", "mode": "reset",
     "distribution": "uniform", "range": [0.0, 0.02], "operation": "absolute"},
]  # fmt: skip
POLICIES = ("no-dr", "dr", "dr-identified", "dr+actuator", "teacher", "student")


def identify(out: Path) -> Path:
    from sim2real.sim.builtin import BUILTINS
    from sim2real.sysid.run import identify as sysid

    b = BUILTINS["pendulum-dfki"]
    result = sysid(b.name, [real_data(b.fit_logs[0])])
    fitted = out / "sysid" / "fitted.xml"
    result.write(fitted)
    for line in result.summary_lines():
        print("  " + line)
    return fitted


def write_yaml(path: Path, doc: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("runs/bench_policies"))
    ap.add_argument("--steps", type=int, default=None, help="env steps per training")
    ap.add_argument("--episodes", type=int, default=100)
    ap.add_argument("--only", nargs="*", default=list(POLICIES))
    ap.add_argument("--skip-train", action="store_true", help="evaluate existing runs only")
    ap.add_argument("--skip-eval", action="store_true", help="train only")
    args = ap.parse_args()

    from sim2real.learn.distill import distill
    from sim2real.learn.envs import default_dr_path
    from sim2real.learn.evaluate import evaluate_policy
    from sim2real.learn.policy import load_policy
    from sim2real.learn.reality import load_reality, shipped_realities
    from sim2real.learn.report import markdown_table, write_policy_report
    from sim2real.learn.train import default_train_config, train
    from sim2real.learn.vec import ObsRoles

    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    fitted = out / "sysid" / "fitted.xml"
    if not fitted.is_file():
        print("identifying the real pendulum (sysid fit)...", flush=True)
        t = time.perf_counter()
        identify(out)
        print(f"  {time.perf_counter() - t:.0f} s", flush=True)
    our_fit = write_yaml(
        out / "realities" / "our-fit.yaml",
        {"description": "our sysid fit of the real DFKI pendulum (fitted.xml, its sidecar)",
         "model": str(fitted.resolve())},
    )  # fmt: skip
    default_terms = yaml.safe_load(default_dr_path(ENV).read_text())["terms"]
    act_dr = write_yaml(out / "dr_actuator.yaml", {"terms": default_terms + ACTUATOR_TERMS})
    cfg = default_train_config(ENV)
    if args.steps:
        cfg = cfg.model_copy(update={"total_env_steps": args.steps})
    setups = {
        "no-dr": {"dr": None},
        "dr": {"dr": "default"},
        "dr-identified": {
            "dr": fitted.parent / "dr.yaml",
            "env_config": {"model": str(fitted.resolve())},
        },
        "dr+actuator": {"dr": act_dr, "env_config": {"actuator": ACTUATOR}},
        "teacher": {"dr": "default", "roles": ObsRoles(actor=("policy", "privileged"))},
    }
    wall = {}
    if not args.skip_train:
        for name in [n for n in POLICIES if n in args.only]:
            print(f"training {name}...", flush=True)
            t = time.perf_counter()
            if name == "student":
                result = distill(out / "teacher", out / "student", quiet=True)
            else:
                result = train(out / name, ENV, train_config=cfg, quiet=True, **setups[name])
            wall[name] = time.perf_counter() - t
            print(f"  {result.summary()} ({wall[name]:.0f} s)", flush=True)

    if args.skip_eval:
        return
    worlds = [load_reality(p) for p in shipped_realities().values()] + [load_reality(our_fit)]
    results = {}
    for name in [n for n in POLICIES if (out / n / "policy.pt").is_file()]:
        t = time.perf_counter()
        policy = load_policy(out / name)
        results[name] = evaluate_policy(policy, worlds, episodes=args.episodes)
        print(f"evaluated {name} ({time.perf_counter() - t:.0f} s)", flush=True)
        for r in results[name]:
            print(f"  {r.line()}")
    report = write_policy_report(
        out / "report", {str(out / k): v for k, v in results.items()}, worlds
    )
    print()
    print(markdown_table(results))
    print(f"\nreport: {report}")


if __name__ == "__main__":
    main()
