"""Training that keeps its best iterate on the validation worlds (``validate_every``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from learn.toy_env import TOY_ENV_ID, make_toy_vec

from sim2real.core.errors import InputError
from sim2real.learn.evaluate import evaluate_policy
from sim2real.learn.policy import load_policy
from sim2real.learn.reality import load_reality
from sim2real.learn.reality_sets import reality_sets
from sim2real.learn.train import TIMING_COLUMNS, TRAIN_STATE_FILE, TrainConfig, read_metrics, train
from sim2real.learn.validation_watch import (
    VALIDATION_FILE,
    VALIDATION_SEED,
    BestOnValidation,
    read_validation,
)
from sim2real.learn.vec import ObsRoles

ENV = "sim2real/PendulumSwingup-v0"
TEACHER = ObsRoles(actor=("policy", "privileged"), critic=("policy", "privileged"))
SHORT = {"episode_s": 0.5}  # short episodes: quick validations (their worlds take it too)


def _config(iterations: int, validate_every: int) -> TrainConfig:
    return TrainConfig(
        total_env_steps=8 * 16 * iterations,
        num_envs=8,
        steps_per_env=16,
        checkpoint_every=2,
        validate_every=validate_every,
        validation_episodes=2,
        noise_correlation_s=0.3,
    )


def _model(run) -> dict[str, torch.Tensor]:
    return torch.load(run / TRAIN_STATE_FILE, weights_only=False)["model"]


def _curve(run) -> np.ndarray:
    return np.array(
        [[v for k, v in r.items() if k not in TIMING_COLUMNS] for r in read_metrics(run)]
    )


def test_policy_is_the_best_validated_iterate(tmp_path):
    run = tmp_path / "run"
    result = train(
        run, ENV, env_config=SHORT, train_config=_config(5, validate_every=2), quiet=True
    )
    rows = read_validation(run)
    assert [r["iteration"] for r in rows] == [2, 4, 5]  # every 2 iterations and the last
    keys = [(r["success"], r["mean_return"]) for r in rows]
    kept = [r for r in rows if r["kept"]]
    assert rows[0]["kept"] == 1
    for k, row in enumerate(rows):  # kept exactly when it beats every earlier row
        assert row["kept"] == (all(keys[k] > earlier for earlier in keys[:k]))
    policy = load_policy(run)
    assert policy.meta.iteration == kept[-1]["iteration"] == result.kept["iteration"]
    # the kept policy scores what its row says, on the same draws
    worlds = [load_reality(n) for n in reality_sets(ENV).validation]
    again = evaluate_policy(policy, worlds, episodes=2, seed=VALIDATION_SEED, training=False)
    assert np.mean([r.mean_return for r in again]) == pytest.approx(kept[-1]["mean_return"])
    for r in again:
        assert r.success_rate == kept[-1][f"success:{r.world}"]


def test_validation_leaves_the_training_unchanged(tmp_path):
    plain, watched = tmp_path / "plain", tmp_path / "watched"
    train(plain, ENV, env_config=SHORT, train_config=_config(3, validate_every=0), quiet=True)
    train(watched, ENV, env_config=SHORT, train_config=_config(3, validate_every=1), quiet=True)
    a, b = _model(plain), _model(watched)
    for key in a:
        assert torch.equal(a[key], b[key]), key
    np.testing.assert_array_equal(_curve(plain), _curve(watched))
    assert not (plain / VALIDATION_FILE).exists()
    assert load_policy(plain).meta.iteration == 3  # without: the latest


def test_resume_keeps_the_validation_record(tmp_path):
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    train(straight, ENV, env_config=SHORT, train_config=_config(4, validate_every=1), quiet=True)
    train(resumed, ENV, env_config=SHORT, train_config=_config(2, validate_every=1), quiet=True)
    train(
        resumed,
        ENV,
        env_config=SHORT,
        train_config=_config(4, validate_every=1),
        resume=True,
        quiet=True,
    )
    assert read_validation(straight) == read_validation(resumed)
    pa, pb = load_policy(straight), load_policy(resumed)
    assert pa.meta.iteration == pb.meta.iteration
    for key, value in pa.actor.state_dict().items():
        assert torch.equal(value, pb.actor.state_dict()[key]), key


def test_a_task_without_validation_worlds_is_refused_before_training(tmp_path):
    cfg = TrainConfig(total_env_steps=64, num_envs=4, steps_per_env=16, validate_every=1)
    with pytest.raises(InputError, match="no validation worlds"):
        train(tmp_path / "run", TOY_ENV_ID, train_config=cfg, make_env=make_toy_vec, quiet=True)
    assert not (tmp_path / "run" / TRAIN_STATE_FILE).exists()


def test_a_teacher_no_world_can_judge_keeps_its_latest(tmp_path):
    # motor-lag adds an actuator model, hence a longer privileged group than the teacher's:
    # every validation world skipped leaves nothing to compare, so the latest is kept
    watch = BestOnValidation(tmp_path, [load_reality("motor-lag")], episodes=2)
    run = tmp_path / "teacher"
    train(run, ENV, env_config=SHORT, train_config=_config(2, 0), roles=TEACHER, quiet=True)
    policy = load_policy(run)
    for iteration in (1, 2):
        assert watch.evaluate(policy.actor, policy.meta, iteration, 256 * iteration)
    assert load_policy(tmp_path).meta.iteration == 2
    assert [r["kept"] for r in read_validation(tmp_path)] == [1, 1]
