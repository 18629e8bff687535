"""Seed sweeps: the seed range grammar, the keep-the-best rule on validation worlds, the files a
sweep leaves, and a stopped sweep that continues."""

import json
from pathlib import Path

import pytest

from sim2real.core.errors import InputError
from sim2real.core.local_jobs import local_runner
from sim2real.learn.reality_sets import RealitySets, reality_sets
from sim2real.learn.seeds import (
    BEST_LINK,
    SEEDS_FILE,
    SeedScore,
    SeedSweep,
    parse_seeds,
    train_seeds,
)
from sim2real.learn.train import TrainConfig

ENV = "sim2real/PendulumSwingup-v0"


@pytest.mark.parametrize(
    ("text", "seeds"),
    [("0-4", [0, 1, 2, 3, 4]), ("3", [3]), ("1,3,7", [1, 3, 7]), ("0-2, 9", [0, 1, 2, 9])],
)
def test_seed_ranges(text, seeds):
    assert parse_seeds(text) == seeds


@pytest.mark.parametrize(
    ("text", "why"),
    [("4-0", "empty range"), ("", "give seeds"), ("-1", "give seeds"), ("a-b", "give seeds"),
     ("1,1", "twice"), ("0-2,2", "twice"),
     ("0-100000000", "over 1000 seeds"),  # filled memory with runs before any began
     ("99999999999999999999", "numpy's seed range")],
)  # fmt: skip
def test_bad_seed_ranges_name_the_option(text, why):
    with pytest.raises(InputError, match=why) as err:
        parse_seeds(text)
    assert err.value.source == "--seeds"


def _score(seed, success, ret):
    worlds = [{"world": "w", "success_rate": success, "mean_return": ret}]
    return SeedScore(seed, Path(f"seed-{seed}"), {}, worlds)


def test_best_is_highest_validation_success_then_return():
    scores = [_score(0, 0.5, 900.0), _score(1, 0.9, 100.0), _score(2, 0.9, 300.0)]
    assert max(scores, key=SeedScore.key).seed == 2
    nan = _score(3, float("nan"), float("nan"))  # a seed whose worlds were all skipped
    assert max([nan, _score(4, 0.0, -5.0)], key=SeedScore.key).seed == 4


@pytest.mark.parametrize("env_id", [ENV, "sim2real/PendubotSwingup-v0"])
def test_shipped_worlds_are_disjoint_and_run_in_their_task(env_id):
    import numpy as np

    from sim2real.learn.reality import load_reality, reality_env

    sets = reality_sets(env_id)
    assert sets.validation and sets.evaluation
    assert not set(sets.validation) & set(sets.evaluation)
    for name in sets.validation + sets.evaluation:
        env = reality_env(load_reality(name), env_id, {}, 2, seed=0)
        env.reset(seed=0)
        assert np.isfinite(env.step(np.zeros((2, env.action_dim))).reward).all()
    with pytest.raises(ValueError, match="in both"):
        RealitySets(validation=["a", "b"], evaluation=["b"])


def test_sweep_keeps_the_best_on_validation_and_continues(tmp_path):
    cfg = TrainConfig(total_env_steps=8 * 16 * 2, num_envs=8, steps_per_env=16)
    kw = {"train_config": cfg, "dr": "default"}
    worlds = reality_sets(ENV).validation
    calls = []

    def runner(jobs):  # in this process, recording what ran
        calls.append(len(jobs))
        return local_runner(1)(jobs)

    sweep = train_seeds(
        tmp_path, ENV, [0, 1], train_kw=kw, validation=worlds, episodes=4, run_jobs=runner
    )
    doc = json.loads((tmp_path / SEEDS_FILE).read_text())
    assert [s["seed"] for s in doc["seeds"]] == [0, 1]
    assert doc["validation_worlds"] == worlds
    per_seed = {s["seed"]: s for s in doc["seeds"]}
    assert {w["world"] for w in per_seed[0]["validation"]} == set(worlds)  # no training world
    expect = max(doc["seeds"], key=lambda s: (s["validation_success"], s["validation_return"]))
    assert doc["best_seed"] == sweep.best.seed == expect["seed"]
    assert (tmp_path / BEST_LINK).resolve() == (tmp_path / f"seed-{expect['seed']}").resolve()
    assert (tmp_path / BEST_LINK / "policy.pt").is_file()
    report = json.loads((tmp_path / "report" / "eval.json").read_text())
    assert sorted(report) == [str(tmp_path / "seed-0"), str(tmp_path / "seed-1")]
    assert (tmp_path / "report" / "training_curves.png").is_file()
    # the two seeds trained differently (the seed reached the weights)
    assert per_seed[0]["train"]["mean_return"] != per_seed[1]["train"]["mean_return"]

    metrics = (tmp_path / "seed-1" / "metrics.csv").read_text()
    again = train_seeds(
        tmp_path, ENV, [0, 1], train_kw=kw, validation=worlds, episodes=4, run_jobs=runner
    )
    assert (tmp_path / "seed-1" / "metrics.csv").read_text() == metrics  # nothing retrained
    assert again.best.seed == sweep.best.seed
    # `--resume` without `--steps`: every seed finishes its own run's total, not the settings'
    longer = {**kw, "train_config": cfg.model_copy(update={"total_env_steps": 8 * 16 * 4})}
    train_seeds(tmp_path, ENV, [0, 1], train_kw=longer, validation=worlds, episodes=4,
                run_jobs=runner, own_totals=True)  # fmt: skip
    assert (tmp_path / "seed-1" / "metrics.csv").read_text() == metrics
    train_seeds(tmp_path, ENV, [0, 1], train_kw=longer, validation=worlds, episodes=4,
                run_jobs=runner)  # fmt: skip
    assert len((tmp_path / "seed-1" / "metrics.csv").read_text().splitlines()) == 5  # to 4


def test_sweep_takes_the_next_stage_for_every_seed(tmp_path):
    """`--seeds 0-1 --resume --dr ...`: every seed's run resumes on the stage's conditions; run
    again it continues that stage; a seed without a run is refused before anything trains."""
    import torch
    import yaml

    from sim2real.learn.train import TRAIN_STATE_FILE, read_metrics

    def config(iterations):
        return TrainConfig(total_env_steps=8 * 16 * iterations, num_envs=8, steps_per_env=16)

    smooth = tmp_path / "smooth.yaml"
    smooth.write_text(yaml.safe_dump({"terms": [
        {"name": "friction", "target": "frictionloss_Nm", "mode": "reset",
         "distribution": "uniform", "range": [0.0, 0.0], "operation": "absolute"}]}))  # fmt: skip
    out, worlds = tmp_path / "sweep", reality_sets(ENV).validation
    kw = {"train_config": config(1), "dr": "default"}
    train_seeds(
        out, ENV, [0, 1], train_kw=kw, validation=worlds, episodes=2, run_jobs=local_runner(1)
    )
    stage = {"dr": str(smooth)}
    for _ in range(2):
        train_seeds(out, ENV, [0, 1], train_kw={**kw, "train_config": config(2)},
                    validation=worlds, episodes=2, run_jobs=local_runner(1),
                    new_conditions=stage)  # fmt: skip
    for seed in (0, 1):
        state = torch.load(out / f"seed-{seed}" / TRAIN_STATE_FILE, weights_only=False)
        assert state["dr"] == str(smooth) and state["train_config"]["seed"] == seed
        assert [(s["from_iteration"], s["dr"]) for s in state["stages"]] == [
            (0, "default"), (1, str(smooth))]  # fmt: skip
        assert len(read_metrics(out / f"seed-{seed}")) == 2
    with pytest.raises(InputError, match="no run of seed 2 to resume"):
        train_seeds(out, ENV, [0, 1, 2], train_kw=kw, validation=worlds, new_conditions=stage)
    assert not (out / "seed-2").exists()


def test_sweep_refuses_missing_worlds_before_training(tmp_path):
    cfg = TrainConfig(total_env_steps=64, num_envs=4, steps_per_env=16)
    with pytest.raises(InputError, match="no such file"):
        train_seeds(tmp_path, ENV, [0], train_kw={"train_config": cfg}, validation=["nope"])
    assert not (tmp_path / "seed-0").exists()
    with pytest.raises(InputError, match="no validation worlds"):
        train_seeds(tmp_path, ENV, [0], train_kw={"train_config": cfg}, validation=[])


def test_cli_sweep_prints_every_seed_and_the_kept_one(tmp_path):
    from cli_helpers import assert_one_line_error, run_cli

    settings = tmp_path / "tiny.yaml"
    settings.write_text("num_envs: 8\nsteps_per_env: 16\n")
    out = tmp_path / "sweep"
    args = ("policy", "train", ENV, "--settings", str(settings), "--steps", "256")
    proc = run_cli(*args, "--out", str(out), "--seeds", "0-1")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[0].startswith("seed 0: validation success")
    assert lines[1].startswith("seed 1: validation success")
    best = json.loads((out / SEEDS_FILE).read_text())["best_seed"]
    assert lines[-1].startswith(f"best: seed {best} ")
    assert "<- kept" in lines[best]
    # each seed's progress, labelled, on stderr (the workers' bars would draw over each other)
    progress = sorted(proc.stderr.strip().splitlines())
    assert [line.split(" steps ")[0] for line in progress] == [
        "seed 0: train 256/256",
        "seed 1: train 256/256",
    ], proc.stderr
    quiet = run_cli(*args, "--out", str(tmp_path / "quiet"), "--seeds", "0", "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr

    bad = run_cli(*args, "--out", str(tmp_path / "bad"), "--seeds", "3-1")
    assert_one_line_error(bad, "--seeds", "empty range")
    assert not (tmp_path / "bad").exists()
    stage = ("policy", "train", ENV, "--seeds", "0-1", "--resume", "--dr", "none")
    nothing = run_cli(*stage, "--out", str(tmp_path / "none"))
    assert_one_line_error(nothing, "holds no run of seed 0 to resume")
    assert not (tmp_path / "none").exists()


def test_sweep_lines_name_each_seeds_kept_iteration():
    watched = SeedScore(0, Path("seed-0"), {"success_rate": 0.5, "kept_iteration": 420.0}, [])
    plain = SeedScore(1, Path("seed-1"), {"success_rate": 0.4}, [])
    lines = SeedSweep(Path("OUT"), [watched, plain], watched, ["w"]).lines()
    assert lines[0].endswith("(training 50 %, policy of iteration 420)  <- kept")
    assert lines[1].endswith("(training 40 %)")
