"""``sim2real actuator``: bad input gives one line naming the file and field, exit 2, and no
output; a short fit and a replay on real logs."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import numpy as np
import pytest
from cli_helpers import assert_one_line_error, run_cli

from sim2real.actuators.run import fit_command
from sim2real.actuators.servo_log import read_servo_log
from sim2real.core.errors import InputError


def _log(n: int = 40) -> dict:
    t = np.arange(n) * 0.005
    entries = [
        {
            "timestamp": float(ti),
            "goal_position": float(0.3 * np.sin(ti)),
            "position": 0.0,
            "speed": 0.0,
            "torque_enable": True,
        }
        for ti in t
    ]
    return {"mass": 0.49, "length": 0.1, "kp": 200, "vin": 7.4, "entries": entries}


def _bad(tmp_path, name: str, edit) -> tuple:
    data = _log()
    edit(data)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data))
    out = tmp_path / f"{name}.yaml"
    proc = run_cli("actuator", "fit", "--logs", path, "--model", "coulomb-viscous", "--out", out)
    return proc, path, out


def _disable(d):
    for e in d["entries"]:
        e["torque_enable"] = False


def _drop(d):
    del d["entries"][5]["position"]


def _mixed(d):
    for i, e in enumerate(d["entries"]):
        e["kp"] = 200 if i < 20 else 400


def _backwards(d):
    d["entries"][7]["timestamp"] = 0.0


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (_disable, "torque_enable"),
        (_drop, "entries[5].position"),
        (_mixed, "entries[20].kp"),
        (_backwards, "entries[7].timestamp"),
    ],
)
def test_bad_logs(tmp_path, edit, field):
    proc, path, out = _bad(tmp_path, edit.__name__, edit)
    assert_one_line_error(proc, str(path), field)
    assert not out.exists()


def test_mixed_gain_list(tmp_path):
    data = _log() | {"kp": [100, 200]}
    path = tmp_path / "kplist.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="kp: mixed gains"):
        read_servo_log(path)


def test_bad_model_bench_and_holdout(tmp_path):
    path = tmp_path / "ok.json"
    path.write_text(json.dumps(_log()))
    out = tmp_path / "a.yaml"
    proc = run_cli("actuator", "fit", "--logs", path, "--model", "nope", "--out", out)
    assert_one_line_error(proc, "--model")
    with pytest.raises(InputError, match="--bench"):
        fit_command([path], "x", "pd", out)
    with pytest.raises(InputError, match="--holdout-kp: no log at kp 400"):
        fit_command([path], "servo-bam-xl330", "pd", out, holdout_kp=400)
    with pytest.raises(InputError, match="none left"):
        fit_command([path], "servo-bam-xl330", "pd", out, holdout_kp=200)
    assert not out.exists()


def test_help_imports_no_heavy_libraries():
    code = (
        "import sys; from sim2real.cli.main import app; import sim2real.cli.actuator; "
        "bad = {'mujoco', 'torch', 'open3d', 'matplotlib'} & set(sys.modules); assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert run_cli("actuator", "--help").returncode == 0


def test_fit_and_replay_real(real_data, tmp_path):
    folder = real_data / "servo-bam-xl330" / "processed"
    logs = sorted(folder.glob("*.json"))
    a100, a400 = logs[0], logs[8]  # sin_sin at kp 100 and 400
    act = tmp_path / "act.yaml"
    proc = run_cli(
        "actuator", "fit", "--logs", a100, a400, "--model", "coulomb-viscous",
        "--holdout-kp", "400", "--max-evals", "64", "--out", act,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "hold-out MAE" in proc.stdout and act.exists()
    pred = tmp_path / "pred.csv"
    png = tmp_path / "pred.png"
    proc = run_cli("actuator", "replay", act, "--log", a400, "--out", pred, "--plot", png)
    assert proc.returncode == 0, proc.stderr
    assert png.stat().st_size > 1000
    rows = list(csv.DictReader(pred.open()))
    assert len(rows) == 1200
    assert {"time", "position_measured", "position_predicted", "goal_position"} <= set(rows[0])


def test_compare_writes_table_models_and_plots(real_data, tmp_path):
    folder = real_data / "servo-bam-xl330" / "processed"
    logs = [folder / "2026-01-15_10h28m10.json", folder / "2026-01-15_10h29m14.json"]
    out = tmp_path / "cmp"
    proc = run_cli(
        "actuator", "compare", "--logs", *logs, "--models", "pd", "coulomb-viscous",
        "--holdout-kp", "400", "--time-budget", "2", "--out", out,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = (out / "comparison.csv").read_text().splitlines()
    assert rows[0] == "model,train_mae_rad,holdout_mae_rad,fit_time_s" and len(rows) == 3
    for row in rows[1:]:
        _, train, hold, _ = row.split(",")
        assert 0 < float(train) < 0.5 and 0 < float(hold) < 0.5
    assert (out / "pd.yaml").is_file() and (out / "coulomb-viscous.yaml").is_file()
    assert (out / "actuator_2026-01-15_10h29m14.png").stat().st_size > 5000
    assert "Actuator models compared" in (out / "index.html").read_text()
    bad = run_cli("actuator", "compare", "--logs", logs[0], "--models", "pdd", "--out", out)
    assert_one_line_error(bad, "--models", "pdd")
