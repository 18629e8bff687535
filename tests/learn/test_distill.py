"""DAgger distillation on the toy rotor: a privileged teacher (it reads the motor gain) becomes
a deployable student close to it."""

from __future__ import annotations

import pytest
from learn.toy_env import TOY_ENV_ID, make_toy_vec

from sim2real.core.errors import InputError
from sim2real.learn.distill import DistillConfig, distill, run_episodes
from sim2real.learn.export import export_policy
from sim2real.learn.policy import load_policy
from sim2real.learn.train import TrainConfig, train
from sim2real.learn.vec import ObsRoles

TEACHER = ObsRoles(actor=("policy", "privileged"))


def _train_teacher(run, cfg: TrainConfig) -> None:
    train(run, TOY_ENV_ID, train_config=cfg, roles=TEACHER, make_env=make_toy_vec, quiet=True)


@pytest.mark.slow
def test_student_gets_close_to_the_teacher_and_is_deployable(tmp_path):
    _train_teacher(tmp_path / "teacher", TrainConfig(total_env_steps=32 * 40 * 20, num_envs=32,
                                                      steps_per_env=40))  # fmt: skip
    teacher = load_policy(tmp_path / "teacher")
    assert not teacher.deployable

    dcfg = DistillConfig(num_envs=32, rounds=8, steps_per_round=40, eval_episodes=128)
    result = distill(
        tmp_path / "teacher", tmp_path / "student", dcfg, make_env=make_toy_vec, quiet=True
    )
    student = load_policy(tmp_path / "student")
    assert student.deployable and student.roles.actor == ("policy",)
    assert student.meta.kind == "distill" and student.env_id == TOY_ENV_ID
    # the teacher has learnt something, and the student keeps most of it (returns are
    # negative: the ratio is teacher / student)
    assert result.teacher_success > 0.6
    assert result.return_ratio > 0.85
    # an independent evaluation of the saved student agrees with the reported one
    again = run_episodes(
        make_toy_vec(TOY_ENV_ID, 128, seed=dcfg.seed + 1), student.act, seed=dcfg.seed + 1
    )
    assert again.mean_return == pytest.approx(result.student_return, rel=1e-6)
    export_policy(tmp_path / "student", tmp_path / "export")
    assert (tmp_path / "export" / "policy.onnx").is_file()


def test_student_must_read_deployable_groups(tmp_path):
    _train_teacher(
        tmp_path / "teacher", TrainConfig(total_env_steps=64, num_envs=4, steps_per_env=16)
    )
    bad = DistillConfig(student_actor=("policy", "privileged"), rounds=1)
    with pytest.raises(InputError, match="deployable"):
        distill(tmp_path / "teacher", tmp_path / "s", bad, make_env=make_toy_vec, quiet=True)
    with pytest.raises(InputError, match="no trained policy"):
        distill(tmp_path / "nowhere", tmp_path / "s", make_env=make_toy_vec, quiet=True)
