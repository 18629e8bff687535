"""A short fit on real logs beats the nominal model; the published BAM parameters load."""

from __future__ import annotations

import numpy as np

from sim2real.actuators.catalog import make_config
from sim2real.actuators.fit import evaluate, fit_actuator
from sim2real.actuators.published import load_published
from sim2real.actuators.servo_log import read_servo_log


def test_short_fit_beats_nominal(real_data):
    folder = real_data / "servo-bam-xl330" / "processed"
    logs = [read_servo_log(p) for p in sorted(folder.glob("*.json"))]
    train = [log for log in logs if log.kp_fw == 200]
    assert len(train) == 4 and not train[1].enabled.all()  # lift_and_drop drops
    fit = fit_actuator(make_config("coulomb-viscous"), train, max_evals=120, popsize=10)
    assert fit.train_mae_rad < 0.9 * fit.nominal_mae_rad
    assert np.isclose(evaluate(fit.config, train), fit.train_mae_rad)
    space = fit.config.param_space()
    assert np.all(space.nominal() >= space.lower()) and np.all(space.nominal() <= space.upper())


def test_published_params_load(real_data):
    folder = real_data / "servo-bam-xl330" / "published-params"
    for m, kind in enumerate(["coulomb-viscous", "stribeck", "load-dependent"], start=1):
        cfg, q_offset = load_published(folder / f"m{m}.json")
        assert cfg.friction == kind and abs(q_offset) < 0.1
    cfg, _ = load_published(folder / "m6.json")
    assert cfg.values()["load_friction_motor_quad"] > 0


def test_diverging_candidate_is_scored_not_nan(real_data):
    from sim2real.actuators.bench import DIVERGED_RAD, mae, simulate

    log = read_servo_log(sorted((real_data / "servo-bam-xl330" / "processed").glob("*.json"))[0])
    cfg = make_config("coulomb-viscous")
    values = {"kt_Nm_A": np.array([0.387, 2.0]), "R_ohm": np.array([4.0, 0.5])}
    values["armature_kgm2"] = np.array([0.0018, 1e-5])
    cost = mae(simulate(cfg, [log], values), [log])
    assert np.isfinite(cost[0]) and cost[0] < 1.0 and cost[1] == DIVERGED_RAD


def test_a_short_logs_padding_does_not_score_a_candidate_as_diverged(real_data):
    from dataclasses import replace

    from sim2real.actuators.bench import DIVERGED_RAD, mae

    log = read_servo_log(sorted((real_data / "servo-bam-xl330" / "processed").glob("*.json"))[0])
    short = replace(log, t_s=log.t_s[:100], q_rad=log.q_rad[:100], enabled=log.enabled[:100])
    pred = np.zeros((1, 2, len(log.t_s)))  # (candidates, logs, samples), padded to the longest
    pred[0, 1, 100:] = np.inf  # what the short log's padded tail may run off to
    cost = mae(pred, [log, short])
    assert np.isfinite(cost[0]) and cost[0] != DIVERGED_RAD
    pred[0, 1, 50] = np.inf  # its own samples diverging: still diverged
    assert mae(pred, [log, short])[0] == DIVERGED_RAD
