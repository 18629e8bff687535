"""The real data sets: every log reads through its built-in mapping, and short
identifications of the DFKI pendulum beat the published model and find the added mass.
Budgets are small (tests are not benchmarks: see benchmarks/bench_sysid.py)."""

import numpy as np
import pytest

from sim2real.sim.builtin import BUILTINS
from sim2real.sim.logs import read_log
from sim2real.sim.mapping import load_mapping
from sim2real.sysid.fit import FitConfig
from sim2real.sysid.objective import ObjectiveConfig
from sim2real.sysid.run import identify

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name", list(BUILTINS))
def test_real_logs_read_with_builtin_mappings(real_data, name):
    b = BUILTINS[name]
    mp = load_mapping(b.mapping)
    for rel in b.fit_logs + b.holdout_logs:
        log = read_log(real_data / rel, mp)
        assert log.time_s.size > 500 and np.isfinite(log.qpos).all()
        assert (np.diff(log.time_s) > 0).all()
    if name == "servo-bam-xl330":  # lift_and_drop: the drop (torque off) is not simulated
        log = read_log(real_data / b.fit_logs[1], mp)
        assert 0.2 < log.valid.mean() < 0.5


def cfg(seconds, max_evals=2000, max_segments=64):
    return FitConfig(objective=ObjectiveConfig(max_segments=max_segments), time_budget_s=seconds,
                     bootstrap=0, restarts=0, max_evals=max_evals)  # fmt: skip


def test_pendulum_holdout_beats_published_model(real_data):
    b = BUILTINS["pendulum-dfki"]
    hold = [real_data / p for p in b.holdout_logs[1::3]]  # ddp and direct collocation
    quick = cfg(120, max_evals=500)
    result = identify("pendulum-dfki", [real_data / b.fit_logs[0]], holdout=hold, cfg=quick)
    for h in (0.5, 2.0):
        assert result.holdout_errors[h].rmse_rad < result.reference_errors[h].rmse_rad


def test_added_kilogram_raises_the_first_moment(real_data):
    base = real_data / "pendulum-dfki/energy_shaping/data_measured.csv"
    heavy = real_data / "pendulum-dfki/energy_shaping/data_measured_1kg.csv"
    # a budget in evaluations (not seconds) on 16 segments: the same work on any machine
    quick = cfg(120, max_evals=400, max_segments=16)
    light = identify("pendulum-dfki", [base], cfg=quick, reference=False)
    loaded = identify("pendulum-dfki", [heavy], cfg=quick, reference=False)
    added = loaded.derived["m_cx_kg_m"] - light.derived["m_cx_kg_m"]
    # about 1 kg somewhere along the 0.5 m rod: m cx grows by roughly 0.3 to 0.7 kg m
    assert 0.3 < added < 0.8, added
