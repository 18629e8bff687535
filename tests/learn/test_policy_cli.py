"""The policy commands end to end on the pendulum, as a user runs them (tiny budgets: the
point is the plumbing and the files, not the policy's quality): train, resume, eval against a
reality with a report, export and run the export with the robot-side runner, train a teacher,
refuse to export it, distill it, export the student."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from cli_helpers import assert_one_line_error, figures_drawn, run_cli

ENV = "sim2real/PendulumSwingup-v0"
pytestmark = pytest.mark.slow


def test_train_resume_eval_export_distill(tmp_path, figure_log):
    settings = tmp_path / "small.yaml"
    settings.write_text(yaml.safe_dump({"num_envs": 8, "steps_per_env": 32, "checkpoint_every": 1}))
    run = tmp_path / "run"
    proc = run_cli("policy", "train", ENV, "--settings", settings, "--steps", 512,
                   "--torch-threads", 2, "--out", run, "--quiet")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (run / "policy.pt").is_file() and (run / "metrics.csv").is_file()
    assert yaml.safe_load((run / "config.yaml").read_text())["train"]["torch_threads"] == 2
    assert any((run / "tb").iterdir())  # TensorBoard scalars
    rows = (run / "metrics.csv").read_text().splitlines()
    assert len(rows) == 1 + 2  # header + 512 / (8 x 32) iterations
    proc = run_cli("policy", "train", ENV, "--steps", 768, "--resume", "--out", run, "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert len((run / "metrics.csv").read_text().splitlines()) == 1 + 3  # one more iteration
    # the run's own thread count, recorded, is what resumes it exactly: no other one is taken
    proc = run_cli("policy", "train", ENV, "--resume", "--torch-threads", 1, "--out", run)
    assert_one_line_error(proc, "--resume", "--torch-threads")

    report = tmp_path / "eval"
    proc = run_cli("policy", "eval", run, "--env", ENV, "--reality", "motor-lag",
                   "--episodes", 2, "--report", report)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "motor-lag: success" in proc.stdout and "training conditions" in proc.stdout
    doc = json.loads((report / "eval.json").read_text())
    assert [w["world"] for w in doc[str(run)]] == ["training conditions", "motor-lag"]
    assert all(w["episodes"] == 2 for w in doc[str(run)])
    # piped: the grid's progress, its last state on stderr (all episodes done)
    assert proc.stderr.strip().splitlines()[-1].startswith("evaluate 100%"), proc.stderr
    returns, success = figures_drawn(figure_log)["training_curves.png"]["axes"]
    assert returns["ylabel"] == "mean episode return" and success["ylabel"] == "success [%]"
    # one point per PPO iteration of the run: the three rows of metrics.csv
    assert returns["lines"][0]["n"] == 3 and success["lines"][0]["n"] == 3
    low, high = success["lines"][0]["ymin"], success["lines"][0]["ymax"]  # None: no episode ended
    assert low is None or (low >= 0 and high <= 100)

    deploy = tmp_path / "deploy"
    proc = run_cli("policy", "export", run, "--out", deploy)
    assert proc.returncode == 0, proc.stderr
    spec = json.loads((deploy / "policy.json").read_text())
    assert spec["env"] == ENV and spec["history"] >= 1
    assert [t["name"] for t in spec["obs_terms"]] == ["q", "cos_q", "sin_q", "qvel", "prev_action"]
    from sim2real.learn.deploy import DeployedPolicy

    robot = DeployedPolicy(deploy)
    robot.reset()
    action = robot.act({"q": 0.1, "qvel": -0.3})
    assert action.shape == (1,) and np.all(np.abs(action) <= 1.0)

    teacher = tmp_path / "teacher"
    proc = run_cli("policy", "train", ENV, "--teacher", "--settings", settings, "--steps", 256,
                   "--out", teacher, "--quiet")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert_one_line_error(
        run_cli("policy", "export", teacher, "--out", tmp_path / "x"), "privileged"
    )
    student = tmp_path / "student"
    proc = run_cli("policy", "distill", teacher, "--rounds", 1, "--out", student, "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert "student return" in proc.stdout
    proc = run_cli("policy", "export", student, "--out", tmp_path / "student_deploy")
    assert proc.returncode == 0, proc.stderr


def test_policy_cli_bad_input(tmp_path):
    bad_dr = tmp_path / "dr.yaml"
    bad_dr.write_text(yaml.safe_dump({"terms": [{"name": "m", "target": "mass_kgg",
                                                  "mode": "reset", "range": [0.8, 1.2]}]}))  # fmt: skip
    proc = run_cli("policy", "train", ENV, "--dr", bad_dr, "--steps", 64, "--out", tmp_path / "r")
    assert_one_line_error(proc, str(bad_dr), "terms[0].target", "mass_kg")
    inverted = tmp_path / "inverted.yaml"
    inverted.write_text(yaml.safe_dump({"terms": [{"name": "m", "target": "mass_kg",
                                                   "mode": "reset", "range": [1.2, 0.8]}]}))  # fmt: skip
    proc = run_cli("policy", "train", ENV, "--dr", inverted, "--steps", 64, "--out", tmp_path / "r")
    assert_one_line_error(proc, str(inverted), "terms[0]")
    env_cfg = tmp_path / "env.yaml"
    env_cfg.write_text(yaml.safe_dump({"torque_limit": 2.0}))
    proc = run_cli("policy", "train", ENV, "--env-config", env_cfg, "--out", tmp_path / "r")
    assert_one_line_error(proc, str(env_cfg), "torque_limit")
    settings = tmp_path / "settings.yaml"
    settings.write_text(yaml.safe_dump({"training_env": {"init_q": 3.0}}))
    proc = run_cli("policy", "train", ENV, "--settings", settings, "--out", tmp_path / "r")
    assert_one_line_error(proc, str(settings), "training_env.init_q")
    # what only the built model tells fails before the run folder exists, named by the file
    # (these said "--model: ..." and "config: ..." after creating the folder)
    for fields, needles in (
        ({"model": "cartpole"}, ("model: cartpole", "neither a built-in model")),
        ({"control_dt": 0.0033}, ("control_dt", "not a multiple of the model's timestep")),
        ({"params": {"mass_kgg": 1.0}}, ("params.mass_kgg", "close matches: mass_kg")),
    ):
        env_cfg.write_text(yaml.safe_dump(fields))
        proc = run_cli("policy", "train", ENV, "--env-config", env_cfg, "--out", tmp_path / "r")
        assert_one_line_error(proc, f"{env_cfg}: ", *needles)
        assert not (tmp_path / "r").exists()


def test_a_runs_randomization_and_model_files_are_recorded_where_they_are(tmp_path, monkeypatch):
    """A run recorded `--dr fit1/dr.yaml` as typed: an eval from another folder read another
    fit's file silently; and a config's `model: ../fit1/fitted.xml` was read from the working
    folder, not beside the config as a reality's is (a probe)."""
    from sim2real.cli.policy import _dr_arg, _env_config_fields

    (tmp_path / "fit1").mkdir()
    (tmp_path / "fit1" / "fitted.xml").write_text("<mujoco/>")
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "a.yaml").write_text("model: ../fit1/fitted.xml\nhistory: 4\n")
    monkeypatch.chdir(tmp_path)
    assert _dr_arg("fit1/dr.yaml") == tmp_path / "fit1" / "dr.yaml"
    fields = _env_config_fields(Path("cfg/a.yaml"))
    assert Path(fields["model"]).resolve() == (tmp_path / "fit1" / "fitted.xml").resolve()
    assert Path(fields["model"]).is_absolute() and fields["history"] == 4
    (tmp_path / "cfg" / "b.yaml").write_text("model: fit1/fitted.xml\n")  # from the working folder
    assert Path(_env_config_fields(Path("cfg/b.yaml"))["model"]).is_absolute()
    (tmp_path / "cfg" / "c.yaml").write_text("model: pendulum-dfki\n")  # a built-in name stays
    assert _env_config_fields(Path("cfg/c.yaml"))["model"] == "pendulum-dfki"
