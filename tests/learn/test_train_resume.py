"""Checkpoints and resume: a killed run continues exactly; the run folder's files."""

from __future__ import annotations

from importlib import resources

import numpy as np
import pytest
import torch
import yaml
from learn.toy_env import TOY_ENV_ID, make_toy_vec

from sim2real.core.errors import InputError
from sim2real.learn.policy import load_policy
from sim2real.learn.train import (
    TIMING_COLUMNS,
    TRAIN_STATE_FILE,
    TrainConfig,
    default_train_config,
    env_slug,
    load_train_config,
    read_metrics,
    train,
)


def _config(
    iterations: int, noise_correlation_s: float = 0.0, sde: bool = False, schedule: str = "adaptive"
) -> TrainConfig:
    return TrainConfig(
        total_env_steps=8 * 16 * iterations,
        num_envs=8,
        steps_per_env=16,
        checkpoint_every=2,
        noise_correlation_s=noise_correlation_s,
        sde_resample_steps=5,  # not a divisor of the 16-step rollout: the counter is state too
        net={"state_dependent_noise": sde},
        ppo={"schedule": schedule},
    )


class KilledError(Exception):
    """Stands for the process being killed."""


def _killed_after(steps: int):
    def make(*args, **kw):
        env = make_toy_vec(*args, **kw)
        inner, count = env.step, [0]

        def step(action):
            count[0] += 1
            if count[0] > steps:
                raise KilledError
            return inner(action)

        env.step = step
        return env

    return make


def _learned_state(run):
    return torch.load(run / TRAIN_STATE_FILE, weights_only=False)["model"]


def _curve(run) -> np.ndarray:
    rows = read_metrics(run)
    return np.array([[v for k, v in r.items() if k not in TIMING_COLUMNS] for r in rows])


@pytest.mark.parametrize(
    "how",
    [
        "killed",
        "extended",
        "killed-correlated-noise",
        "killed-state-dependent-noise",
        "killed-linear-schedule",
    ],
)
def test_resume_continues_exactly(tmp_path, how):
    noise_s = 0.2 if how.endswith("correlated-noise") else 0.0  # the noise state is saved too
    sde = how.endswith("state-dependent-noise")
    schedule = "linear" if how.endswith("linear-schedule") else "adaptive"
    straight = tmp_path / "straight"
    config = _config(4, noise_s, sde, schedule)
    train(straight, TOY_ENV_ID, train_config=config, make_env=make_toy_vec, quiet=True)

    resumed = tmp_path / "resumed"
    if how.startswith("killed"):
        # killed half-way through iteration 4: the last checkpoint is iteration 2, but the
        # curve already has 3 rows, which the resume must drop and recompute
        with pytest.raises(KilledError):
            train(
                resumed,
                TOY_ENV_ID,
                train_config=config,
                make_env=_killed_after(56),
                quiet=True,
            )
        assert len(read_metrics(resumed)) == 3
        train(resumed, TOY_ENV_ID, resume=True, make_env=make_toy_vec, quiet=True)
    else:
        train(resumed, TOY_ENV_ID, train_config=_config(2), make_env=make_toy_vec, quiet=True)
        train(
            resumed,
            TOY_ENV_ID,
            train_config=_config(4),
            resume=True,
            make_env=make_toy_vec,
            quiet=True,
        )

    a, b = _learned_state(straight), _learned_state(resumed)
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key
    pa, pb = load_policy(straight), load_policy(resumed)
    for key, value in pa.actor.state_dict().items():
        assert torch.equal(value, pb.actor.state_dict()[key]), key
    assert pb.meta.iteration == 4
    curve_a, curve_b = _curve(straight), _curve(resumed)
    assert curve_a.shape == (4, curve_a.shape[1])
    np.testing.assert_array_equal(curve_a, curve_b)


def test_a_resume_to_fewer_steps_than_done_is_refused(tmp_path):
    train(tmp_path, TOY_ENV_ID, train_config=_config(2), make_env=make_toy_vec, quiet=True)
    with pytest.raises(InputError, match="fewer than the 256 the run has done") as err:
        train(tmp_path, TOY_ENV_ID, train_config=_config(1), resume=True, make_env=make_toy_vec)
    assert err.value.source == "--steps"  # was exit 0 having done nothing


def test_resume_from_another_environment_is_refused(tmp_path):
    train(tmp_path, TOY_ENV_ID, train_config=_config(1), make_env=make_toy_vec, quiet=True)
    with pytest.raises(InputError) as err:
        train(tmp_path, "sim2real/PendulumSwingup-v0", resume=True, make_env=make_toy_vec)
    assert err.value.field == "env_id" and TOY_ENV_ID in str(err.value)
    with pytest.raises(InputError, match="env_id"):
        load_policy(tmp_path, expected_env_id="sim2real/PendulumSwingup-v0")
    with pytest.raises(InputError, match="already holds a run"):
        train(tmp_path, TOY_ENV_ID, train_config=_config(1), make_env=make_toy_vec, quiet=True)


def test_missing_or_corrupt_run_folder_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no trained policy"):
        load_policy(tmp_path / "nowhere")
    with pytest.raises(InputError, match="no checkpoint"):
        train(tmp_path / "nowhere", TOY_ENV_ID, resume=True, make_env=make_toy_vec)
    (tmp_path / "policy.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(InputError, match=r"policy\.pt"):
        load_policy(tmp_path)


def test_run_folder_holds_config_curve_and_tensorboard(tmp_path):
    cfg = _config(2)
    result = train(tmp_path, TOY_ENV_ID, train_config=cfg, make_env=make_toy_vec, quiet=True)
    resolved = yaml.safe_load((tmp_path / "config.yaml").read_text())
    assert TrainConfig(**resolved["train"]) == cfg  # write -> read -> equal
    assert resolved["env_id"] == TOY_ENV_ID
    assert resolved["roles"] == {"actor": ["policy"], "critic": ["policy", "privileged"]}
    rows = read_metrics(tmp_path)
    assert [r["env_steps"] for r in rows] == [128, 256]
    assert result.env_steps == 256 and result.deployable
    assert list((tmp_path / "tb").glob("events.out.tfevents.*"))
    policy = load_policy(tmp_path)
    assert policy.env_id == TOY_ENV_ID and policy.deployable and policy.dr == "default"
    action = policy.act(make_toy_vec(TOY_ENV_ID, 3).reset(seed=1))
    assert action.shape == (3, 1) and np.all(np.abs(action) <= 1.0)


def test_shipped_pendulum_settings_load():
    assert env_slug("sim2real/PendulumSwingup-v0") == "pendulum_swingup"
    shipped = resources.files("sim2real.learn") / "configs" / "pendulum_swingup.train.yaml"
    assert shipped.is_file()
    with resources.as_file(shipped) as path:
        assert default_train_config("sim2real/PendulumSwingup-v0") == load_train_config(path)


def test_partial_settings_change_only_what_they_name_over_the_tasks_own(tmp_path):
    """`--settings` with only `total_env_steps: 2048` replaced the pendulum's whole shipped
    settings (gamma 0.99 for 0.995, the adaptive learning rate for the linear schedule, no
    noise correlation, validation or energy reward): it names what it changes, as --steps."""
    env_id = "sim2real/PendulumSwingup-v0"
    shipped = default_train_config(env_id)
    path = tmp_path / "partial.yaml"
    path.write_text("total_env_steps: 2048\nppo: {gamma: 0.99}\ntraining_env: {history: 2}\n")
    cfg = load_train_config(path, env_id)
    assert cfg.total_env_steps == 2048 and cfg.ppo.gamma == 0.99
    assert cfg.ppo.schedule == shipped.ppo.schedule == "linear"  # a mapping merges key by key
    assert cfg.ppo.learning_rate == shipped.ppo.learning_rate
    assert cfg.noise_correlation_s == shipped.noise_correlation_s == 0.3
    assert cfg.validate_every == shipped.validate_every == 30
    assert cfg.training_env == {"reward": {"energy": 0.5}, "history": 2}
    assert cfg.net == shipped.net
    assert load_train_config(path).ppo.schedule == "adaptive"  # the file alone: the defaults


def test_bad_training_settings_name_the_file_and_field(tmp_path):
    path = tmp_path / "train.yaml"
    path.write_text("num_envs: 8\nppo:\n  gamma: 1.5\n")
    with pytest.raises(InputError) as err:
        load_train_config(path)
    assert err.value.field == "ppo.gamma" and "train.yaml" in str(err.value)
    path.write_text("num_env: 8\n")
    with pytest.raises(InputError, match="num_env"):
        load_train_config(path)
    # each was a traceback: a list, a negative layer width, minibatches of no step (NaN losses)
    for text, needle in [
        ("- a\n- b\n", "expected a mapping of settings"),
        ("net: {actor_hidden: [64, -1]}\n", "greater than 0"),
        ("num_envs: 8\nsteps_per_env: 32\nppo: {minibatches: 1000}\n", "ppo.minibatches"),
        ("seed: 4294967296\n", "less than or equal"),
    ]:
        path.write_text(text)
        with pytest.raises(InputError, match=needle) as err:
            load_train_config(path)
        assert "train.yaml" in str(err.value)


def test_training_env_fields_reach_training_only(tmp_path):
    from sim2real.learn.evaluate import task_config

    env_id = "sim2real/PendulumSwingup-v0"
    cfg = TrainConfig(total_env_steps=64, num_envs=4, steps_per_env=16,
                      training_env={"init_q_rad": 3.0, "init_qvel_rad_s": 2.0})  # fmt: skip
    train(tmp_path / "a", env_id, train_config=cfg, quiet=True)
    recorded = load_policy(tmp_path / "a").env_config
    assert recorded["init_q_rad"] == 3.0 and recorded["init_qvel_rad_s"] == 2.0
    # an explicit environment config wins; evaluation starts as the task says
    train(tmp_path / "b", env_id, env_config={"init_q_rad": 1.0}, train_config=cfg, quiet=True)
    recorded = load_policy(tmp_path / "b").env_config
    assert recorded["init_q_rad"] == 1.0 and recorded["init_qvel_rad_s"] == 2.0
    assert "init_q_rad" not in task_config(recorded)


def test_a_given_reward_adds_to_the_settings_reward_instead_of_replacing_it(tmp_path):
    """The pendulum's settings train with energy shaping (training_env reward); a user's
    --env-config `reward: {action_rate: 0.1}` used to drop it silently (a shallow merge)."""
    env_id = "sim2real/PendulumSwingup-v0"
    cfg = TrainConfig(total_env_steps=64, num_envs=4, steps_per_env=16,
                      training_env={"reward": {"energy": 0.5}, "history": 2})  # fmt: skip
    given = {"reward": {"action_rate": 0.1}, "history": 4}
    train(tmp_path / "a", env_id, env_config=given, train_config=cfg, quiet=True)
    recorded = load_policy(tmp_path / "a").env_config
    assert recorded["reward"] == {"energy": 0.5, "action_rate": 0.1}
    assert recorded["history"] == 4  # a plain field given wins as before
    shipped = default_train_config(env_id).training_env
    assert shipped["reward"]["energy"] > 0  # what the section in RESULTS measured
