"""Synthetic logs of the built-in pendulum with known parameters (noise-free), as CSV, and one
converged fit of the first shared by the tests that only read a fit."""

import numpy as np
import pytest

from sim2real.params.space import ParamSpace, load_param_space
from sim2real.sim.batch import BatchSimulator
from sim2real.sim.builtin import BUILTINS
from sim2real.sim.model import load_sim_model

TRUTH = {"mass_kg": 0.3, "damping_Nm_s": 0.08, "frictionloss_Nm": 0.0, "torque_bias_Nm": 0.05}
"""Known values; the others stay at the built-in's nominal (arm 0.6124 m, no delay)."""


def synth_pendulum_csv(path, seconds=6.0, seed=0, values=None, space: ParamSpace | None = None):
    """Simulate the built-in pendulum (``space`` with ``values``, default: its spec with
    TRUTH) under a sum of sines and write time, position, velocity, torque."""
    b = BUILTINS["pendulum-dfki"]
    sim = load_sim_model(b.mjcf)
    space = (space or load_param_space(b.spec)).replace(TRUTH if values is None else values)
    dt = sim.model.opt.timestep
    t = np.arange(round(seconds / dt)) * dt
    rng = np.random.default_rng(seed)
    tau = sum(a * np.sin(2 * np.pi * f * t + p) for a, f, p in
              zip(rng.uniform(0.3, 0.8, 4), (0.3, 0.7, 1.3, 2.1), rng.uniform(0, 6, 4), strict=True))  # fmt: skip
    res = BatchSimulator(sim, space, nthread=1).run(
        space.nominal(), [[0.0]], [[0.0]], tau[None, :, None]
    )
    q, qd = res.qpos[0, :-1, 0], res.qvel[0, :-1, 0]
    rows = np.column_stack([t, q, qd, tau])
    np.savetxt(path, rows, delimiter=",", header="time,position,velocity,torque", comments="")
    return path, space


@pytest.fixture(scope="session")
def synth_csv(tmp_path_factory):
    return synth_pendulum_csv(tmp_path_factory.mktemp("synth") / "synth.csv")


@pytest.fixture(scope="session")
def synth_fit(synth_csv):
    """``sysid fit``'s default fit of the built-in pendulum on the synthetic log."""
    from sim2real.sysid.run import fit_config_for, identify

    path, _ = synth_csv
    cfg = fit_config_for("pendulum-dfki", bootstrap=200)
    return identify("pendulum-dfki", [path], cfg=cfg, reference=False)
