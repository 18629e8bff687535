"""System identification on the real data sets, in one run: our fit (``sysid fit``'s settings)
against the fit of an earlier commit (``--baseline``, run from a ``git archive`` of it in a
subprocess, with its own defaults) and against MuJoCo's own ``mujoco.sysid`` (``--peer``,
see ``sysid_peer.py``), with wall times, parameters and hold-out position RMSE of each, all
judged by our evaluation (same segments from the same measured states, same logged
controls); plus repeatability (``--seeds``: fits with different seeds and extra random
starts, the largest parameter difference in % and in reported sigma).

python benchmarks/bench_sysid.py [--only pendulum,pendulum-1kg,double,servo] [--baseline REV]
    [--baseline-budgets 8,40] [--peer 0.5,1,2] [--scipy] [--seeds 1,2] [--starts 2]
    [--variants no-overlap,raw-states,l2,vel-weight-0.05,2s-segments]

- pendulum: fit on pd/system_identification, hold out energy_shaping, ddp, ilqr,
  direct_collocation (target: fit <= 10 s; hold-out RMSE no worse than the baseline's).
- pendulum-1kg: fit on energy_shaping with and without the added 1 kg (m cx must grow).
- double: fit on trajectories 00-02, hold out 03 (target: fit <= 60 s).
- servo: the XL330 bench at kp 200 through the built-in ``servo-bam-xl330``.
Times are wall times of the library call (``identify``: reading, fitting, uncertainty,
evaluation); the peer's is its optimizer call. Record ``uptime`` beside the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from sim2real.core.data import data_root, real_data
from sim2real.sim.builtin import BUILTINS
from sim2real.sysid.evaluate import prediction_errors
from sim2real.sysid.run import fit_config_for, identify

CASES = {"pendulum": "pendulum-dfki", "double": "double-pendulum-dfki", "servo": "servo-bam-xl330"}
_ES = "pendulum-dfki/energy_shaping/data_measured"

BASELINE_SCRIPT = """
import json, sys, time
import numpy as np
from sim2real.core.data import real_data
from sim2real.sim.builtin import BUILTINS
from sim2real.sysid.fit import FitConfig
from sim2real.sysid.objective import ObjectiveConfig
from sim2real.sysid.run import identify
model, fit, hold = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
b = BUILTINS[model]
budget = float(sys.argv[5]) if len(sys.argv) > 5 else b.time_budget_s
cfg = FitConfig(objective=ObjectiveConfig(segment_s=b.segment_s), time_budget_s=budget,
                seed=int(sys.argv[4]))
t0 = time.perf_counter()
r = identify(model, [real_data(p) for p in fit], holdout=[real_data(p) for p in hold], cfg=cfg)
print(json.dumps({"seconds": time.perf_counter() - t0, "names": r.space.names, "budget": budget,
                  "values": [float(v) for v in r.fit.values], "derived": r.derived,
                  "evaluations": r.fit.evaluations,
                  "holdout": {str(h): e.rmse_rad for h, e in r.holdout_errors.items()}}))
"""


def fmt_errs(errs: dict) -> str:
    return ", ".join(f"{h:g} s {e.rmse_rad:.4f}" for h, e in errs.items())


def run_ours(model: str, fit: list[str], hold: list[str], **kw):
    cfg = fit_config_for(model, **kw)
    t0 = time.perf_counter()
    result = identify(model, [real_data(p) for p in fit], holdout=[real_data(p) for p in hold],
                      cfg=cfg, reference=bool(hold))  # fmt: skip
    return result, time.perf_counter() - t0


def baseline_tree(rev: str) -> Path:
    """``src`` of commit ``rev`` extracted into a temporary folder."""
    root = Path(tempfile.mkdtemp(prefix="sysid-baseline-"))
    repo = Path(__file__).resolve().parents[1]
    archive = subprocess.run(["git", "-C", str(repo), "archive", rev, "src"], check=True,
                             capture_output=True).stdout  # fmt: skip
    subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
    return root / "src"


def run_baseline(
    src: Path, model: str, fit: list[str], hold: list[str], seed: int, budget: str
) -> dict:
    env = dict(os.environ, PYTHONPATH=str(src))
    if data_root() is not None:
        env["SIM2REAL_DATA"] = str(data_root())
    argv = [sys.executable, "-c", BASELINE_SCRIPT, model, json.dumps(fit), json.dumps(hold),
            str(seed), *([budget] if budget else [])]  # fmt: skip
    out = subprocess.run(argv, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def scipy_trf(result) -> tuple[np.ndarray, float, float]:
    """The other bounded least-squares optimizer, scipy's trust-region reflective, on the same
    residuals (Huber loss, same thresholds), Jacobian and start as our fit."""
    from scipy.optimize import least_squares

    from sim2real.sysid.fit import build_objective
    from sim2real.sysid.lsq import Problem

    space = result.space
    obj = build_objective(result.sim, space, result.logs, fit_config_for(result.model_name))
    problem = Problem(obj, space.nominal())
    free = space.free_mask()
    start = result.fit.init.values if result.fit.cost_init < result.fit.cost_nominal else None
    x0 = space.to_unit(space.nominal() if start is None else start)[free]
    d = obj.deltas()

    def huber(z: np.ndarray) -> np.ndarray:  # scipy's loss of z = r^2: per-residual thresholds
        a = np.sqrt(z)
        inside = a <= d
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.stack([np.where(inside, z, 2 * d * a - d * d),
                             np.where(inside, 1.0, d / a),
                             np.where(inside, 0.0, -d / (2 * z * a))])  # fmt: skip

    last: dict = {}

    def fun(x: np.ndarray) -> np.ndarray:
        last["x"], last["r"] = x.copy(), problem.residuals(x)[0]
        return last["r"]

    def jac(x: np.ndarray) -> np.ndarray:
        r = last["r"] if np.array_equal(last.get("x"), x) else problem.residuals(x)[0]
        return problem.jacobian(x, r)

    t0 = time.perf_counter()
    res = least_squares(fun, x0, jac=jac, bounds=(0.0, 1.0), method="trf", loss=huber,
                        max_nfev=100)  # fmt: skip
    seconds = time.perf_counter() - t0
    x = np.clip(res.x, 0.0, 1.0)
    return problem.values(x)[0], seconds, problem.cost(x)


VARIANTS = {
    "no-overlap": lambda seg: {"stride_s": seg},
    "raw-states": lambda seg: {"state_filter_s": 0.0},
    "l2": lambda seg: {"huber_delta": 1e6},
    "vel-weight-0.05": lambda seg: {"vel_weight": 0.05},
    "2s-segments": lambda seg: {"segment_s": 2.0},
}
"""Objective settings changed one at a time (``--variants``), to diagnose differences."""


def dr_spread(result, n: int = 4000) -> None:
    """Spread of the derived J and m cx under dr.yaml's joint draws against the same marginals
    drawn independently (what a per-parameter dr.yaml gives)."""
    from sim2real.sysid.outputs import derived_quantities

    dr = result.dr_space()
    rng = np.random.default_rng(0)
    for label, space in (("joint", dr), ("independent", dr.model_copy(update={"joint": None}))):
        rows = [derived_quantities(result.sim, result.space, v) for v in space.sample(n, rng)]
        J = np.log([r["J_kg_m2"] for r in rows])
        mcx = np.log([r["m_cx_kg_m"] for r in rows])
        print(
            f"  dr.yaml draws, {label}: sd ln J {J.std():.3f}, sd ln m cx {mcx.std():.3f}, "
            f"sd ln(J / m cx) {(J - mcx).std():.3f}, corr {np.corrcoef(J, mcx)[0, 1]:.2f}"
        )


def per_run(result, values_by: dict[str, np.ndarray]) -> None:
    """Hold-out RMSE per run for each labelled parameter set (our space)."""
    for log in result.holdout:
        row = []
        for label, values in values_by.items():
            e = prediction_errors(result.sim, result.space, values, [log])
            row.append(f"{label} " + "/".join(f"{x.rmse_rad:.3f}" for x in e.values()))
        print(f"    {log.source.split('real/')[-1]}: " + "; ".join(row))


def case(name: str, args, src: Path | None) -> None:
    model = CASES[name]
    b = BUILTINS[model]
    fit, hold = list(b.fit_logs), list(b.holdout_logs)
    result, wall = run_ours(model, fit, hold, seed=args.seed)
    f = result.fit
    print(f"\n== {model}: ours {wall:.1f} s (fit {f.seconds:.1f} s, {f.evaluations} parameter "
          f"sets, {'converged' if f.converged else 'NOT converged'})")  # fmt: skip
    for line in result.summary_lines()[1:]:
        print("  " + line)
    values_by = {"ours": f.values}
    if result.reference is not None:
        ref = result.reference
        print(f"  {ref.label} hold-out: {fmt_errs(result.reference_errors)}")
    for budget in args.baseline_budgets.split(",") if src is not None else []:
        base = run_baseline(src, model, fit, hold, args.seed, budget)
        v = np.array([base["values"][base["names"].index(n)] if n in base["names"]
                      else result.space.params[k].nominal
                      for k, n in enumerate(result.space.names)])  # fmt: skip
        label = f"baseline {base['budget']:g}s"
        values_by[label] = v
        errs = prediction_errors(result.sim, result.space, v, result.holdout)
        print(f"  {label} ({args.baseline}, CMA-ES budget {base['budget']:g} s): "
              f"{base['seconds']:.1f} s ({base['evaluations']} evaluations); hold-out by its "
              "own code: " + ", ".join(f"{h} s {x:.4f}" for h, x in base["holdout"].items())
              + f"; by ours: {fmt_errs(errs)}")  # fmt: skip
        print("    values: " + ", ".join(f"{n} {x:.5g}" for n, x in zip(base["names"],
                                                                 base["values"], strict=True))
              + "".join(f", {k} {x:.5g}" for k, x in base["derived"].items()))  # fmt: skip
    if args.scipy:
        v, sec, cost = scipy_trf(result)
        values_by["scipy trf"] = v
        errs = prediction_errors(result.sim, result.space, v, result.holdout)
        print(f"  scipy least_squares (trf) on our residuals from the same start: {sec:.1f} s, "
              f"cost {cost:.6g} (ours {f.cost:.6g}); hold-out {fmt_errs(errs)}")  # fmt: skip
    for chunk in [float(c) for c in args.peer.split(",")] if args.peer else []:
        from sysid_peer import peer_fit

        try:
            v, sec, notes = peer_fit(result.sim, result.space, result.logs, chunk)
        except ValueError as err:  # no chunk of that length fits
            print(f"  mujoco.sysid, {chunk:g} s chunks: {err}")
            continue
        values_by[f"peer {chunk:g}s"] = v
        errs = prediction_errors(result.sim, result.space, v, result.holdout)
        print(
            f"  mujoco.sysid, {notes[-1]}: {sec:.1f} s; hold-out {fmt_errs(errs)}; "
            + ", ".join(f"{n} {x:.4g}" for n, x in zip(result.space.names, v, strict=True))
        )
    per_run(result, values_by)
    if result.derived:
        dr_spread(result)
    for name_ in [v for v in args.variants.split(",") if v]:
        cfg = fit_config_for(model, bootstrap=0)
        cfg.objective = cfg.objective.model_copy(update=VARIANTS[name_](b.segment_s))
        t0 = time.perf_counter()
        other = identify(model, [real_data(p) for p in fit], holdout=[real_data(p) for p in hold],
                         cfg=cfg, reference=False)  # fmt: skip
        print(f"  variant {name_}: {time.perf_counter() - t0:.1f} s, hold-out "
              f"{fmt_errs(other.holdout_errors)} (diagnosis only: judged on the hold-out)")  # fmt: skip
    for seed in [int(s) for s in args.seeds.split(",")] if args.seeds else []:
        again, wall2 = run_ours(model, fit, [], seed=seed, starts=args.starts)
        free = result.space.free_mask()
        rel = np.abs(again.fit.values - f.values) / np.maximum(np.abs(f.values), 1e-12)
        sig = np.abs(again.fit.values - f.values) / np.maximum(result.param_std(), 1e-300)
        ok = (rel <= 0.02) | (sig <= 1.0) | ~free
        print(f"  repeat: seed {seed}, {args.starts} extra random starts: {wall2:.1f} s, cost "
              f"{again.fit.cost:.6g} (first {f.cost:.6g}); largest difference "
              f"{100 * rel[free].max():.3g} % / {sig[free].max():.3g} sigma; within 2 % or "
              f"1 sigma: {'all' if ok.all() else 'NOT ' + str(np.array(result.space.names)[~ok])}")  # fmt: skip


def pendulum_1kg(args) -> None:
    light, w1 = run_ours("pendulum-dfki", [f"{_ES}.csv"], [], seed=args.seed)
    loaded, w2 = run_ours("pendulum-dfki", [f"{_ES}_1kg.csv"], [], seed=args.seed)
    d0, d1 = light.derived, loaded.derived
    dm, dJ = d1["m_cx_kg_m"] - d0["m_cx_kg_m"], d1["J_kg_m2"] - d0["J_kg_m2"]
    print(f"\n== pendulum 1 kg: fits {w1:.1f} s and {w2:.1f} s")
    print(f"  energy_shaping      : J {d0['J_kg_m2']:.4f}, m cx {d0['m_cx_kg_m']:.4f}")
    print(f"  energy_shaping + 1kg: J {d1['J_kg_m2']:.4f}, m cx {d1['m_cx_kg_m']:.4f}")
    print(f"  added: m cx +{dm:.4f} kg m, J +{dJ:.4f} kg m^2 "
          f"(1 kg at {dJ / dm if dm > 0 else float('nan'):.3f} m: J / m cx of the addition)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="pendulum,pendulum-1kg,double,servo")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baseline", default=None, help="git revision to compare with")
    parser.add_argument("--baseline-budgets", default="", help="its CMA-ES budgets [s], e.g. 8,40")
    parser.add_argument("--scipy", action="store_true", help="also scipy's least_squares (trf)")
    parser.add_argument("--peer", default="", help="mujoco.sysid chunk lengths [s], e.g. 0.5,2")
    parser.add_argument("--seeds", default="", help="seeds of repeat fits, e.g. 1,2")
    parser.add_argument("--starts", type=int, default=2, help="extra random starts of repeats")
    parser.add_argument("--variants", default="", help=f"objective variants: {','.join(VARIANTS)}")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).parent))
    src = baseline_tree(args.baseline) if args.baseline else None
    print(f"uptime: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1, 5 min load)")
    for name in args.only.split(","):
        if name == "pendulum-1kg":
            pendulum_1kg(args)
        else:
            case(name, args, src)
    print(f"\nuptime: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1, 5 min load)")


if __name__ == "__main__":
    main()
