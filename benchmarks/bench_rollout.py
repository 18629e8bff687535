"""Batched simulation throughput: the wrapper (``BatchSimulator.run``) against bare
``mujoco.rollout`` on the same model, the same parameter sets and controls, in one run.

python benchmarks/bench_rollout.py [--model pendulum-dfki] [--batch 256] [--steps 500] [--repeat 7]

(a) bare: B model copies with the parameter values written by hand into their arrays, one
``mujoco.rollout`` call (one model per trajectory, one MjData per thread);
(b) ours: ``BatchSimulator.run`` with (B, P) values from the built-in spec (handles write the
values into pooled copies, delay and offset folded into the controls, states unpacked and
checked for divergence). Target: (b) / (a) <= 1.5. (a) and (b) alternate; medians over
``--repeat`` pairs.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import time

import mujoco
import numpy as np
from mujoco import rollout

from sim2real.params.space import load_param_space
from sim2real.sim.batch import BatchSimulator
from sim2real.sim.builtin import BUILTINS
from sim2real.sim.model import load_sim_model


def interleaved_medians(fa, fb, repeat: int) -> tuple[float, float, float]:
    """Medians of (a), of (b) and of the per-pair ratio b/a, alternating a and b so that a
    change of load on the shared machine hits both alike."""
    fa(), fb()  # warm-up
    ta, tb = [], []
    for _ in range(repeat):
        for fn, times in ((fa, ta), (fb, tb)):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    ratios = [b / a for a, b in zip(ta, tb, strict=True)]
    return statistics.median(ta), statistics.median(tb), statistics.median(ratios)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="pendulum-dfki", choices=list(BUILTINS))
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    b = BUILTINS[args.model]
    sim = load_sim_model(b.mjcf)
    space = load_param_space(b.spec)
    # the delay term has no bare equivalent: keep it at 0 in both (the wrapper still runs it)
    rng = np.random.default_rng(0)
    values = space.sample(args.batch, rng, use_prior=False)
    if "delay_s" in space.names:
        values[:, space.index("delay_s")] = 0.0
    B, T, m = args.batch, args.steps, sim.model
    nthread = os.cpu_count() or 1
    ctrl = rng.normal(0, 0.5, (B, T, m.nu))
    q0 = np.tile(m.qpos0, (B, 1)) + rng.normal(0, 0.3, (B, m.nq))
    v0 = np.zeros((B, m.nv))

    bare_models = []
    handles = sim.resolve(space)
    for v in values:  # bare: values written by hand (setup not timed)
        mc = copy.copy(m)
        e = sim.extras.copy()
        sim.apply(mc, e, handles, v)
        bare_models.append(mc)
    datas = [mujoco.MjData(m) for _ in range(nthread)]
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state0 = np.zeros((B, mujoco.mj_stateSize(m, spec)))
    state0[:, 1 : 1 + m.nq] = q0

    def bare():
        return rollout.rollout(bare_models, datas, state0, ctrl)

    wrapper = BatchSimulator(sim, space, nthread=nthread)

    def ours():
        return wrapper.run(values, q0, v0, ctrl)

    t_bare, t_ours, ratio = interleaved_medians(bare, ours, args.repeat)
    res = ours()
    ref = bare()[0]
    diff = float(np.abs(res.qpos[:, 1:] - ref[:, :, 1 : 1 + m.nq]).max())
    steps = B * T
    print(f"model {args.model}: {B} trajectories x {T} steps, {nthread} threads")
    print(f"(a) bare mujoco.rollout   {1e3 * t_bare:8.1f} ms  {steps / t_bare / 1e6:.2f} M steps/s")
    print(f"(b) BatchSimulator.run    {1e3 * t_ours:8.1f} ms  {steps / t_ours / 1e6:.2f} M steps/s")
    print(f"ratio (b)/(a) = {ratio:.3f} (median of per-pair ratios; target <= 1.5); "
          f"max |q_b - q_a| = {diff:.1e}")  # fmt: skip


if __name__ == "__main__":
    main()
