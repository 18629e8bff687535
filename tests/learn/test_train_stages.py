"""Resuming a run on new training conditions (a curriculum's next stage): the randomization and
environment config replace the run's own from that iteration on, and the run records it."""

from __future__ import annotations

import pytest
import torch
import yaml
from train_helpers import mass_friction_dr

from sim2real.core.errors import InputError
from sim2real.learn.train import TRAIN_STATE_FILE, TrainConfig, read_metrics, train

ENV = "sim2real/PendulumSwingup-v0"


def _config(iterations: int) -> TrainConfig:
    return TrainConfig(total_env_steps=8 * 16 * iterations, num_envs=8, steps_per_env=16)


def _state(run):
    return torch.load(run / TRAIN_STATE_FILE, weights_only=False)


def test_resume_on_new_conditions_uses_and_records_them(tmp_path):
    rough, smooth = (
        mass_friction_dr(tmp_path / "rough.yaml", [0.2, 0.3]),
        mass_friction_dr(tmp_path / "smooth.yaml", [0, 0]),
    )
    run, plain = tmp_path / "run", tmp_path / "plain"
    for folder in (run, plain):
        train(folder, ENV, dr=rough, train_config=_config(2), quiet=True)
    new = {"dr": smooth, "env_config": {"reward": {"energy": 0.5}}}
    train(run, ENV, train_config=_config(4), resume=True, new_conditions=new, quiet=True)
    train(plain, ENV, train_config=_config(4), resume=True, quiet=True)

    state = _state(run)
    assert state["dr"] == smooth and state["env_config"]["reward"]["energy"] == 0.5
    assert [(s["from_iteration"], s["dr"]) for s in state["stages"]] == [(0, rough), (2, smooth)]
    config = yaml.safe_load((run / "config.yaml").read_text())
    assert config["dr"] == smooth and [s["from_iteration"] for s in config["stages"]] == [0, 2]
    assert "stages" not in yaml.safe_load((plain / "config.yaml").read_text())
    rows, plain_rows = read_metrics(run), read_metrics(plain)
    assert len(rows) == 4
    # the first two iterations are the plain run's; the energy reward counts from the third
    # (no episode ends in these few steps: the value loss is where the reward shows)
    assert [r["value_loss"] for r in rows[:2]] == [r["value_loss"] for r in plain_rows[:2]]
    assert rows[2]["value_loss"] != plain_rows[2]["value_loss"]
    # a plain resume afterwards keeps the new conditions
    train(run, ENV, train_config=_config(5), resume=True, quiet=True)
    assert _state(run)["dr"] == smooth and len(_state(run)["stages"]) == 2


def test_new_conditions_that_change_the_observations_are_refused(tmp_path):
    run = tmp_path / "run"
    train(
        run,
        ENV,
        dr=mass_friction_dr(tmp_path / "a.yaml", [0.2, 0.3]),
        train_config=_config(1),
        quiet=True,
    )
    before = (run / TRAIN_STATE_FILE).read_bytes()
    longer_history = {"env_config": {"history": 5}}  # the actor would read 5 frames, not 3
    with pytest.raises(InputError) as err:
        train(run, ENV, train_config=_config(2), resume=True, new_conditions=longer_history)
    assert err.value.field == "observations" and "start a new run" in str(err.value)
    assert (run / TRAIN_STATE_FILE).read_bytes() == before


def test_settings_a_resumed_run_cannot_take_are_refused(tmp_path):
    from cli_helpers import assert_one_line_error, run_cli

    proc = run_cli("policy", "train", ENV, "--out", tmp_path / "run", "--resume", "--seed", "3",
                   "--teacher")  # fmt: skip
    assert_one_line_error(proc, "--resume", "--seed", "--teacher", "keeps its own")
    assert not (tmp_path / "run").exists()


def test_a_stage_given_again_resumes_plainly(tmp_path):
    """The next stage's command run again (after an interruption) continues that stage: no
    second entry in the run's stages."""
    rough, smooth = (
        mass_friction_dr(tmp_path / "rough.yaml", [0.2, 0.3]),
        mass_friction_dr(tmp_path / "smooth.yaml", [0, 0]),
    )
    run = tmp_path / "run"
    train(run, ENV, dr=rough, train_config=_config(1), quiet=True)
    for total in (2, 3):
        train(run, ENV, train_config=_config(total), resume=True, new_conditions={"dr": smooth},
              quiet=True)  # fmt: skip
    assert [s["from_iteration"] for s in _state(run)["stages"]] == [0, 1]
    assert len(read_metrics(run)) == 3


def test_resume_without_steps_keeps_the_runs_own_total(tmp_path, monkeypatch):
    """`--resume` alone finishes the run's own budget (it took the shipped settings' total)."""
    from typer.testing import CliRunner

    import sim2real.learn.train as train_module
    from sim2real.cli.main import app

    monkeypatch.setattr(train_module, "default_train_config", lambda env_id: _config(4))
    run = tmp_path / "run"
    args = ["policy", "train", ENV, "--out", str(run), "--quiet"]
    first = CliRunner().invoke(app, [*args, "--steps", str(8 * 16 * 2)])
    assert first.exit_code == 0, first.output
    again = CliRunner().invoke(app, [*args, "--resume"])
    assert again.exit_code == 0, again.output
    assert len(read_metrics(run)) == 2 and _state(run)["env_steps"] == 8 * 16 * 2
