"""A curriculum in the training settings (``stages``): one run through each stage's conditions,
the same as the stages resumed by hand; checked before anything trains."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import yaml
from train_helpers import mass_friction_dr

from sim2real.core.errors import InputError
from sim2real.learn.curriculum import PLAN_FILE
from sim2real.learn.train import TRAIN_STATE_FILE, TrainConfig, read_metrics, train

ENV = "sim2real/PendulumSwingup-v0"
BATCH = 8 * 16


def _config(iterations: int, stages=()) -> TrainConfig:
    return TrainConfig(total_env_steps=BATCH * iterations, num_envs=8, steps_per_env=16,
                       stages=list(stages))  # fmt: skip


FREE_START = {"until_env_steps": BATCH * 2, "dr_terms": {"friction": {"range": [0.0, 0.0]}},
              "training_env": {"init_random_share": 0.5}}  # fmt: skip


def _state(run):
    return torch.load(run / TRAIN_STATE_FILE, weights_only=False)


def _curve(run):
    return [{k: v for k, v in r.items() if not k.endswith("_s")} for r in read_metrics(run)]


def test_a_curriculum_is_its_stages_resumed_by_hand(tmp_path):
    rough = mass_friction_dr(tmp_path / "rough.yaml", [0.2, 0.3])
    run, by_hand = tmp_path / "run", tmp_path / "by_hand"
    train(run, ENV, dr=rough, train_config=_config(4, [FREE_START]), quiet=True)

    stage_dr = run / "stages" / "stage-0.dr.yaml"
    terms = {t["name"]: t for t in yaml.safe_load(stage_dr.read_text())["terms"]}
    assert terms["friction"]["range"] == [0.0, 0.0] and terms["mass"]["range"] == [0.5, 0.6]
    state = _state(run)
    assert [(s["from_iteration"], s["dr"]) for s in state["stages"]] == [
        (0, str(stage_dr)), (2, rough)]  # fmt: skip
    assert state["stages"][0]["env_config"]["init_random_share"] == 0.5
    assert "init_random_share" not in state["env_config"]
    assert len(yaml.safe_load((run / PLAN_FILE).read_text())) == 2

    train(by_hand, ENV, dr=str(stage_dr), env_config={"init_random_share": 0.5},
          train_config=_config(2), quiet=True)  # fmt: skip
    train(by_hand, ENV, train_config=_config(4), resume=True,
          new_conditions={"dr": rough, "env_config": {}}, quiet=True)  # fmt: skip
    np.testing.assert_equal(_curve(run), _curve(by_hand))  # NaN = NaN: no episode ended yet

    # resumed with more steps: the last stage goes on, no stage is repeated or added
    train(run, ENV, train_config=_config(5), resume=True, quiet=True)
    assert len(read_metrics(run)) == 5 and len(_state(run)["stages"]) == 2
    with pytest.raises(InputError, match="from its settings' stages"):
        train(run, ENV, train_config=_config(6), resume=True, new_conditions={"dr": None})


@pytest.mark.parametrize(
    ("stage", "field", "why"),
    [
        ({"dr_terms": {"fricton": {"range": [0, 0]}}}, "stages[0].dr_terms", "no term 'fricton'"),
        ({"dr_terms": {"friction": {"mode": "sometimes"}}}, "stages[0].dr_terms", "'reset'"),
        (
            {"dr_terms": {"friction": {"range": [-0.25, 0.25]}}},
            "stages[0].dr_terms",
            "outside its bounds",
        ),
        ({"training_env": {"history": 5}}, "stages[0]", "give it to every stage"),
        ({"until_env_steps": BATCH * 4}, "total_env_steps", "end within the settings' stages"),
    ],
)
def test_bad_stages_are_refused_before_training(tmp_path, stage, field, why):
    rough = mass_friction_dr(tmp_path / "rough.yaml", [0.2, 0.3])
    run = tmp_path / "run"
    with pytest.raises(InputError, match=why) as err:
        train(run, ENV, dr=rough, train_config=_config(4, [{**FREE_START, **stage}]), quiet=True)
    assert field in str(err.value.field) + str(err.value)
    assert not run.exists()  # not even a stage's randomization file


def test_cli_names_the_settings_file_and_the_stage(tmp_path):
    from cli_helpers import assert_one_line_error, run_cli

    settings = tmp_path / "staged.yaml"
    settings.write_text(
        "num_envs: 8\nsteps_per_env: 16\ntotal_env_steps: 512\n"
        "stages:\n  - {until_env_steps: 256, training_env: {init_goal_shar: 1.0}}\n"
    )
    proc = run_cli("policy", "train", ENV, "--settings", settings, "--out", tmp_path / "run")
    assert_one_line_error(proc, str(settings), "stages[0].training_env.init_goal_shar", "unknown")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("plan", "why"),
    [
        ("- until_env_steps: 256\n  until_env_steps: 512\n", "given twice"),
        ("[]\n", "non-empty list of stages"),
        ("- {until_env_steps: 256}\n", "a stage needs dr, env_config, until_env_steps"),
    ],
)
def test_a_damaged_plan_is_refused_on_resume_naming_the_file(tmp_path, plan, why):
    run = tmp_path / "run"
    train(run, ENV, train_config=_config(2, [{"until_env_steps": BATCH}]), quiet=True)
    (run / PLAN_FILE).write_text(plan)
    with pytest.raises(InputError, match=why) as err:
        train(run, ENV, train_config=_config(3), resume=True, quiet=True)
    assert str(run / PLAN_FILE) in str(err.value)
