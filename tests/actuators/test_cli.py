"""``sim2real actuator``: bad input gives one line naming the file and field, exit 2, and no
output (for ``fit``, ``fit --model auto`` and ``compare``); a fit whose parameter ends at its
bound says so and exits 0; a short fit, replay, comparison and automatic choice on real logs."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import numpy as np
import pytest
import yaml
from cli_helpers import assert_one_line_error, figures_drawn, run_cli

from sim2real.actuators.run import fit_actuator
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


COMMANDS = {
    "fit": ("fit", "--model", "coulomb-viscous"),
    "auto": ("fit", "--model", "auto"),
    "compare": ("compare", "--models", "coulomb-viscous"),
}


def _bad(tmp_path, name: str, edit, command: str = "fit") -> tuple:
    """A good log at kp 100 and the edited one at kp 200 (two gains: what auto and compare
    need), through ``command``."""
    good = tmp_path / "good.json"
    good.write_text(json.dumps(_log() | {"kp": 100}))
    data = _log()
    edit(data)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data))
    out = tmp_path / (f"{name}.yaml" if command != "compare" else name)
    args = ("actuator", *COMMANDS[command], "--logs", good, path, "--out", out)
    return run_cli(*args, "--max-evals", "16", "--restarts", "0"), path, out


def _disable(d):
    for e in d["entries"]:
        e["torque_enable"] = False


def _empty(d):
    d["entries"] = []


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
        (_empty, "entries"),
        (_drop, "entries[5].position"),
        (_mixed, "entries[20].kp"),
        (_backwards, "entries[7].timestamp"),
    ],
)
def test_bad_logs(tmp_path, edit, field):
    proc, path, out = _bad(tmp_path, edit.__name__, edit)
    assert_one_line_error(proc, str(path), field)
    assert not out.exists()


def _as_ms(d):
    for e in d["entries"]:
        e["timestamp"] *= 1000.0


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"mass": -0.49}, "mass"),
        ({"kp": 0}, "kp"),
        ({"length": 0.0}, "length"),
        ({"dt": 0.005, "edit": _as_ms}, "entries[].timestamp"),  # milliseconds, dt in seconds
        ({"edit": _as_ms}, "entries[].timestamp"),  # no dt: replayed 5 s a step before (a probe)
        ({"edit": lambda d: d["entries"][3].update(torque_enable="maybe")}, "torque_enable"),
    ],
)
def test_impossible_headers_and_units_are_refused(tmp_path, change, field):
    data = _log()
    change = dict(change)
    change.pop("edit", lambda d: None)(data)
    path = tmp_path / "log.json"
    path.write_text(json.dumps(data | change))
    with pytest.raises(InputError) as err:
        read_servo_log(path)
    assert field in err.value.field


def test_a_gap_is_said_and_a_gain_written_as_text_is_read(tmp_path):
    """Two runs in one file were replayed across their gap without a word (a probe)."""
    data = _log() | {"kp": "200"}
    for e in data["entries"][20:]:
        e["timestamp"] += 1.0
    path = tmp_path / "log.json"
    path.write_text(json.dumps(data))
    with pytest.warns(UserWarning, match="1 gap.*two runs in one file"):
        assert read_servo_log(path).kp_fw == 200.0


def test_torque_enable_as_text_is_read_as_said(tmp_path):
    data = _log()
    data["entries"][3]["torque_enable"] = "false"  # not truthy: the sample is off
    path = tmp_path / "log.json"
    path.write_text(json.dumps(data | {"dt": 0.005}))
    assert read_servo_log(path).enabled.tolist() == [True] * 3 + [False] + [True] * 36


@pytest.mark.parametrize(("command", "edit"), [("auto", _disable), ("compare", _empty)])
def test_a_gain_without_valid_samples(tmp_path, command, edit):
    """The kp-200 log has no usable sample: the choice by leave one gain out stops before
    fitting anything, naming that log and field; nothing written."""
    proc, path, out = _bad(tmp_path, edit.__name__, edit, command)
    field = "torque_enable" if edit is _disable else "entries"
    assert_one_line_error(proc, str(path), field)
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["good.json", path.name]
    )


def test_auto_needs_two_gains_and_unknown_candidates_are_refused(tmp_path):
    path = tmp_path / "one.json"
    path.write_text(json.dumps(_log()))
    out = tmp_path / "a.yaml"
    proc = run_cli("actuator", "fit", "--logs", path, "--model", "auto", "--out", out)
    assert_one_line_error(proc, "--logs", "kp", "two gains")
    proc = run_cli(
        "actuator", "fit", "--logs", path, "--model", "auto", "--candidates", "m7", "--out", out
    )
    assert_one_line_error(proc, "--candidates", "m7")
    assert not out.exists()


def test_fit_at_a_bound_is_said_and_flagged(tmp_path):
    """Logs of a servo with a 0.06 kg m^2 armature, three times the model's upper bound
    (0.02): the fit ends there, says so on the console (exit 0) and in the YAML."""
    from sim2real.actuators.bench import simulate
    from sim2real.actuators.models import DCServoConfig

    truth = DCServoConfig(friction="coulomb-viscous", params={"armature_kgm2": 0.06})
    paths = []
    for kp in (100, 400):
        data = _log(400) | {"kp": kp}
        entries = data["entries"]
        goal = 1.2 * np.sin(np.arange(len(entries)) * 0.005 * 3.0)
        for e, g in zip(entries, goal, strict=True):
            e["goal_position"] = float(g)
        path = tmp_path / f"kp{kp}.json"
        path.write_text(json.dumps(data))
        q = simulate(truth, [read_servo_log(path)])[0, 0]
        for e, qi in zip(entries, q, strict=True):
            e["position"] = float(qi)
        path.write_text(json.dumps(data))
        paths.append(path)
    out = tmp_path / "act.yaml"
    proc = run_cli(
        "actuator", "fit", "--logs", *paths, "--model", "coulomb-viscous", "--max-evals",
        "2000", "--restarts", "0", "--out", out,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "WARNING: fitted parameter at its bound: armature_kgm2 (upper bound 0.02" in (
        proc.stdout
    )
    doc = yaml.safe_load(out.read_text())
    assert any(n.startswith("armature_kgm2 (upper") for n in doc["fit"]["at_bounds"])
    assert doc["actuator"]["params"]["armature_kgm2"] == pytest.approx(0.02, rel=0.01)
    # out of sample by default: each gain predicted by a fit on the other
    assert set(doc["fit"]["leave_one_gain_out"]) == {"kp 100", "kp 400"}


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
        fit_actuator([path], "x", "pd")
    with pytest.raises(InputError, match="--holdout-kp: no log at kp 400"):
        fit_actuator([path], "servo-bam-xl330", "pd", holdout_kp=400)
    with pytest.raises(InputError, match="none left"):
        fit_actuator([path], "servo-bam-xl330", "pd", holdout_kp=200)
    copy = tmp_path / "copy.json"
    copy.write_text(path.read_text())
    with pytest.raises(InputError, match=r"same recording as .*ok\.json: given twice"):
        fit_actuator([path, copy], "servo-bam-xl330", "pd")
    assert not out.exists()


def test_help_imports_no_heavy_libraries():
    code = (
        "import sys; from sim2real.cli.main import app; import sim2real.cli.actuator; "
        "bad = {'mujoco', 'torch', 'open3d', 'matplotlib'} & set(sys.modules); assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert run_cli("actuator", "--help").returncode == 0


def test_fit_and_replay_real(real_data, tmp_path, figure_log):
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
    rows = list(csv.DictReader(pred.open()))
    plot = figures_drawn(figure_log)["pred.png"]["axes"][0]
    assert [line["label"] for line in plot["lines"]] == ["goal (command)", "measured", "predicted"]
    assert all(line["n"] == len(rows) for line in plot["lines"])  # every sample of the log
    assert plot["ylabel"] == "position [rad]" and "kp 400" in plot["title"]
    assert len(rows) == 1200
    assert {"time", "position_measured", "position_predicted", "goal_position"} <= set(rows[0])


def test_compare_and_auto_choose_by_held_out_gain(real_data, tmp_path, figure_log):
    """sin_sin at kp 100, 200 and 400; 400 held out: each model is judged by leave one gain
    out over kp 100 and 200, the choice made on that error, then fitted on both and judged
    on kp 400. ``fit --model auto`` makes the same choice."""
    folder = real_data / "servo-bam-xl330" / "processed"
    logs = [folder / f"2026-01-15_10h{n}.json" for n in ("28m10", "28m42", "29m14")]
    out = tmp_path / "cmp"
    brief = ("--max-evals", "96", "--popsize", "16", "--restarts", "0")
    proc = run_cli(
        "actuator", "compare", "--logs", *logs, "--models", "pd", "coulomb-viscous",
        "--holdout-kp", "400", *brief, "--out", out,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader((out / "comparison.csv").open()))
    assert [r["model"] for r in rows] == ["pd", "coulomb-viscous"]
    for r in rows:
        per_gain = [float(r["logo_kp100_mae_rad"]), float(r["logo_kp200_mae_rad"])]
        assert 0 < float(r["train_mae_rad"]) < 0.5 and 0 < float(r["holdout_mae_rad"]) < 0.5
        assert float(r["logo_mean_mae_rad"]) == pytest.approx(np.mean(per_gain), abs=1e-6)
    # the rule by hand: the lowest mean held-out-gain MAE, unless a model with fewer fitted
    # parameters is within 5 % of it (pd: 5 parameters, coulomb-viscous: 6)
    mean = {r["model"]: float(r["logo_mean_mae_rad"]) for r in rows}
    low = min(mean, key=mean.get)
    best = "pd" if mean["pd"] <= 1.05 * mean[low] else low
    assert f"chosen: {best}" in proc.stdout
    assert (out / "pd.yaml").is_file() and (out / "coulomb-viscous.yaml").is_file()
    positions, errors = figures_drawn(figure_log)["actuator_2026-01-15_10h29m14.png"]["axes"]
    labels = [line["label"] for line in positions["lines"]]
    assert labels[:2] == ["goal (command)", "measured"]
    assert [label.split(" (")[0] for label in labels[2:]] == ["pd", "coulomb-viscous"]
    assert errors["ylabel"] == "|error| [rad]" and len(errors["lines"]) == 2
    assert "Actuator models compared" in (out / "index.html").read_text()
    saved = yaml.safe_load((out / "pd.yaml").read_text())
    assert saved["fit"]["selection"]["chosen"] == best
    act = tmp_path / "auto.yaml"
    proc = run_cli(
        "actuator", "fit", "--logs", *logs, "--model", "auto", "--candidates", "pd",
        "coulomb-viscous", "--holdout-kp", "400", *brief, "--out", act,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    doc = yaml.safe_load(act.read_text())
    assert doc["fit"]["fitted_model"] == best and doc["fit"]["selection"]["chosen"] == best
    assert doc["fit"]["holdout_mae_rad"] > 0 and f"chosen: {best}" in proc.stdout
    bad = run_cli("actuator", "compare", "--logs", logs[0], "--models", "pdd", "--out", out)
    assert_one_line_error(bad, "--models", "pdd")
