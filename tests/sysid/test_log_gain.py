"""A servo log is replayed with the controller gain its header states (``kp``): the model's
physical parameters, the log's gain. Synthetic logs of the built-in servo (noise-free) at
firmware kp 200 (the built-in's nominal gain) and 400 (twice the gain)."""

import json

import numpy as np
import pytest
import yaml
from cli_helpers import run_cli

from sim2real.params.space import load_param_space
from sim2real.sim.batch import BatchSimulator
from sim2real.sim.builtin import BUILTINS
from sim2real.sim.model import load_sim_model
from sim2real.sysid.run import evaluate_model

SERVO = BUILTINS["servo-bam-xl330"]
NOMINAL_KP = 200


def synth_servo_json(path, kp: int, seconds: float = 4.0):
    """The built-in servo at firmware ``kp`` (gain scaled from the nominal) following a sum of
    sines, as a BAM-style JSON log whose header states ``kp``."""
    sim = load_sim_model(SERVO.mjcf)
    space = load_param_space(SERVO.spec)
    space = space.replace({"kp_Nm_rad": space.nominal()[0] * kp / NOMINAL_KP})
    dt = sim.model.opt.timestep
    t = np.arange(round(seconds / dt)) * dt
    goal = 0.6 * np.sin(2 * np.pi * 0.7 * t) + 0.3 * np.sin(2 * np.pi * 1.9 * t + 1.0)
    res = BatchSimulator(sim, space, nthread=1).run(
        space.nominal(), [[0.0]], [[0.0]], goal[None, :, None]
    )
    q, qd = res.qpos[0, :-1, 0], res.qvel[0, :-1, 0]
    entries = [
        {"timestamp": a, "goal_position": g, "position": b, "speed": c, "torque_enable": True}
        for a, g, b, c in zip(t.tolist(), goal.tolist(), q.tolist(), qd.tolist(), strict=True)
    ]
    path.write_text(json.dumps({"kp": kp, "vin": 7.4, "dt": dt, "entries": entries}))
    return path


@pytest.fixture(scope="module")
def servo_logs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("servo")
    return {kp: synth_servo_json(folder / f"kp{kp}.json", kp) for kp in (200, 400)}


def test_eval_replays_a_log_at_the_kp_its_header_states(servo_logs):
    at_own = evaluate_model(SERVO.name, [servo_logs[200]])
    at_400 = evaluate_model(SERVO.name, [servo_logs[400]])
    # replayed with the kp 200 gain, the kp 400 log was off by 0.12 rad (0.5 s) and 0.18 (2 s)
    for h in (0.5, 2.0):
        assert at_400.errors[h].rmse_rad < 5e-3, at_400.errors[h].rmse_rad
        assert at_own.errors[h].rmse_rad < 5e-3
    assert any("kp 400" in line and "x 2" in line for line in at_400.summary_lines())
    assert not at_own.notes


def test_logs_of_two_gains_pool_like_one_evaluation(servo_logs):
    both = evaluate_model(SERVO.name, [servo_logs[400], servo_logs[200]])
    alone = [evaluate_model(SERVO.name, [servo_logs[kp]]).errors[0.5] for kp in (400, 200)]
    n = np.array([e.segments for e in alone])
    pooled = np.sqrt(np.sum(n * np.array([e.rmse_rad for e in alone]) ** 2) / n.sum())
    assert both.errors[0.5].rmse_rad == pytest.approx(pooled)
    segs = both.errors[0.5].segs  # the segments still point at their own log
    assert (segs.log_index[: alone[0].segments] == 0).all()
    assert (segs.log_index[alone[0].segments :] == 1).all()


def test_fit_records_its_kp_and_judges_a_hold_out_at_its_own(tmp_path, servo_logs):
    out = tmp_path / "fitted.xml"
    proc = run_cli("sysid", "fit", "--model", SERVO.name, "--log", servo_logs[200],
                   "--holdout", servo_logs[400], "--out", out, "--max-iter", "3")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert 'name="sim2real_log_kp"' in out.read_text()
    params = yaml.safe_load((tmp_path / "fitted.params.yaml").read_text())
    assert params["errors_rmse_rad"]["holdout"]["0.5s"] < 5e-3
    assert "kp 400 log(s) replayed with the servo gain x 2" in proc.stdout
    for plain in ([], ["--plain"]):
        ev = run_cli("sysid", "eval", "--model", out, "--log", servo_logs[400],
                     "--builtin-mapping", SERVO.name, *plain)  # fmt: skip
        assert ev.returncode == 0, ev.stderr
        rmse = float(ev.stdout.split("0.5 s segments: position RMSE ")[1].split()[0])
        assert rmse < 5e-3, ev.stdout


def test_a_log_without_kp_is_said_and_not_fitted_beside_logs_with_one(tmp_path, servo_logs):
    doc = json.loads(servo_logs[400].read_text())
    del doc["kp"]
    unstated = tmp_path / "nokp.json"
    unstated.write_text(json.dumps(doc))
    ev = evaluate_model(SERVO.name, [unstated, servo_logs[200]])
    assert ev.notes == ["1 log(s) state no kp: replayed at the model's kp 200"]
    lines = ev.summary_lines()  # each log's own figure beside the pooled one
    for name in ("nokp.json: ", "kp200.json: "):
        assert any(line.startswith("  ") and name in line for line in lines), lines
    proc = run_cli("sysid", "fit", "--model", SERVO.name, "--log", servo_logs[200],
                   "--log", unstated, "--out", tmp_path / "f.xml", "--max-iter", "3")  # fmt: skip
    assert proc.returncode == 2 and "nokp.json: kp: not stated" in proc.stderr, proc.stderr


def test_a_hold_out_that_is_a_training_log_is_refused(tmp_path, servo_logs):
    proc = run_cli("sysid", "fit", "--model", SERVO.name, "--log", servo_logs[200],
                   "--holdout", servo_logs[200], "--out", tmp_path / "f.xml")  # fmt: skip
    assert proc.returncode == 2 and "held out and fitted" in proc.stderr, proc.stderr
    assert not (tmp_path / "f.xml").exists()
