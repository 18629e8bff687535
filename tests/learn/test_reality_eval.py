"""Realities (worlds other than the training one) and transfer evaluation: each shipped
reality changes the world it says it changes, bad reality files fail with the file and the
field, and the evaluation counts episodes and successes the environment reports."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from cli_helpers import assert_one_line_error, run_cli

from sim2real.core.errors import InputError
from sim2real.learn.envs import make_vec
from sim2real.learn.evaluate import evaluate_policy, run_policy
from sim2real.learn.reality import load_reality, reality_env, shipped_realities

ENV = "sim2real/PendulumSwingup-v0"


class ConstantPolicy:
    """Pushes with a constant action: never swings up."""

    env_id, dr, env_config = ENV, None, {}

    def __init__(self, action: float = 0.0):
        self.action = action

    def act(self, obs):
        return np.full((len(obs["policy"]), 1), self.action)


def _value(env, name: str) -> np.ndarray:
    return env.values[:, env.space.names.index(name)]


def test_shipped_realities_change_the_world():
    assert {"identified-shifted", "identified-heavy-laggy", "motor-lag"} <= set(shipped_realities())
    base = reality_env(load_reality("identified-shifted"), ENV, {}, 64, seed=3)
    base.reset(seed=3)
    nominal = base.space.nominal()
    mass = _value(base, "mass_kg") / nominal[base.space.names.index("mass_kg")]
    assert 0.8 <= mass.min() < 0.9 and 1.1 < mass.max() <= 1.2  # drawn per environment
    delay = _value(base, "delay_s")
    assert delay.min() >= 0.010 and delay.max() <= 0.020 and delay.std() > 0.002
    heavy = reality_env(load_reality("identified-heavy-laggy"), ENV, {}, 4, seed=3)
    heavy.reset(seed=3)
    assert _value(heavy, "mass_kg") == pytest.approx(
        1.2 * nominal[base.space.names.index("mass_kg")]
    )
    assert heavy.cfg.extra_delay_s == pytest.approx(0.020)
    motor = reality_env(load_reality("motor-lag"), ENV, {}, 2, seed=3)
    assert motor.actuator_cfg is not None and motor.actuator_cfg.kind == "torque"


def test_reality_keeps_the_policy_env_and_adds_delay():
    env = reality_env(load_reality("identified-heavy-laggy"), ENV, {"history": 5}, 2, seed=0)
    assert env.obs_groups["policy"].history == 5
    env = reality_env(
        load_reality("identified-heavy-laggy"), ENV, {"extra_delay_s": 0.005}, 2, seed=0
    )
    assert env.cfg.extra_delay_s == pytest.approx(0.025)


def test_a_reality_with_its_own_model_takes_that_models_parameters():
    """Friction given at training (of the training's model) reached every reality: the
    identified pendulum of identified-shifted ran with 0.2 N m, not its own 0.289 (a probe)."""
    trained = {"params": {"frictionloss_Nm": 0.2, "mass_kg": 0.9}}
    shifted = load_reality("identified-shifted")  # the built-in model, shifted per episode
    own = reality_env(shifted, ENV, {}, 8, seed=0)
    env = reality_env(shifted, ENV, trained, 8, seed=0)
    for e in (own, env):
        e.reset(seed=0)
    for name in ("frictionloss_Nm", "mass_kg"):
        assert _value(env, name) == pytest.approx(_value(own, name))
    assert _value(env, "frictionloss_Nm").min() > 0.8 * 0.28  # the published 0.289, +-20 %
    # a reality without a model changes the training's world: its parameters stay
    bare = shifted.model_copy(update={"model": None, "randomization": None})
    kept = reality_env(bare, ENV, trained, 2, seed=0)
    kept.reset(seed=0)
    assert _value(kept, "frictionloss_Nm") == pytest.approx(0.2)


def test_bad_reality_files(tmp_path):
    def write(name, doc):
        path = tmp_path / name
        path.write_text(yaml.safe_dump(doc))
        return path

    bad = write("params.yaml", {"params": {"mass_kgg": 0.2}})
    with pytest.raises(InputError) as err:
        reality_env(load_reality(bad), ENV, {}, 1, seed=0)
    assert err.value.source == str(bad) and "mass_kgg" in err.value.field
    assert "mass_kg" in str(err.value)  # the close match
    terms = {"terms": [{"name": "m", "target": "bodymass", "mode": "reset", "range": [1, 2]}]}
    bad = write("dr.yaml", {"randomization": terms})
    with pytest.raises(InputError) as err:
        reality_env(load_reality(bad), ENV, {}, 1, seed=0)
    assert err.value.source == str(bad) and err.value.field == "randomization.terms[0].target"
    inverted = {"terms": [{"name": "m", "target": "mass_kg", "mode": "reset", "range": [2, 1]}]}
    bad = write("inverted.yaml", {"randomization": inverted})
    with pytest.raises(InputError) as err:
        reality_env(load_reality(bad), ENV, {}, 1, seed=0)
    assert "randomization.terms[0]" in err.value.field
    with pytest.raises(InputError, match="model"):
        load_reality(write("model.yaml", {"model": "missing.xml"}))
    with pytest.raises(InputError, match="shipped"):
        load_reality("no-such-reality")
    with pytest.raises(InputError) as err:
        load_reality(write("field.yaml", {"extra_delay": 0.01}))
    assert err.value.field == "extra_delay"
    # a sysid dr.yaml given as a reality said "joint: Extra inputs are not permitted"
    fitted = {"params": [{"name": "mass_kg", "target": "body.mass:pendulum", "nominal": 0.9}]}
    for doc in (fitted, terms):
        with pytest.raises(InputError, match="a randomization file, not a reality"):
            load_reality(write("fit_dr.yaml", doc))


def test_reality_and_env_config_params_meet_the_bounds_dr_terms_meet(tmp_path):
    # a randomization file refused com_z_m +0.4; a reality or an env-config took it (and 800 kg
    # for 800 g, a torque limit of 0): one bounds table, one message, with a units hint
    from sim2real.learn.envs import check_env_builds

    for params, field, words in [
        ({"mass_kg": 800.0}, "params.mass_kg",
         "mass_kg value 800, outside its bounds [0.001, 10] (units? mass_kg is in kg)"),
        ({"com_z_m": 0.4}, "params.com_z_m", "com_z_m value 0.4, outside its bounds [-2, -0.01]"),
        ({"torque_limit_Nm": 0.0}, "params.torque_limit_Nm", "outside its bounds [0.01, 50]"),
    ]:  # fmt: skip
        path = tmp_path / "world.yaml"
        path.write_text(yaml.safe_dump({"model": "pendulum-dfki", "params": params}))
        with pytest.raises(InputError) as err:
            reality_env(load_reality(path), ENV, {}, 1, seed=0)
        assert (err.value.source, err.value.field) == (str(path), field)
        assert words in err.value.message
        with pytest.raises(InputError) as err:
            check_env_builds(ENV, {"params": params}, "bench.env.yaml", dr=None)
        assert (err.value.source, err.value.field) == ("bench.env.yaml", field)
        assert words in err.value.message


def test_files_of_other_tools_given_as_a_reality_say_how_to_use_them(tmp_path):
    # sysid fit's <stem>.params.yaml was called "a randomization file: give it to --dr"; there
    # it failed with "params.mass_kg.nominal: unknown field" (the field it lists)
    fit = tmp_path / "fit"
    fit.mkdir()
    summary = fit / "fitted.params.yaml"
    item = {"name": "mass_kg", "target": "body.mass:pendulum", "value": 0.6, "identified": True}
    summary.write_text(yaml.safe_dump({"model": "pendulum-dfki", "params": [item], "fit": {}}))
    for call in (load_reality, lambda p: make_vec(ENV, 1, dr=p)):
        with pytest.raises(InputError, match="this is sysid fit's parameter summary") as err:
            call(summary)
        assert f"put `model: {fit / 'fitted.xml'}` in a reality" in err.value.message
        assert f"{fit / 'dr.yaml'} randomizes around it" in err.value.message
    # the DFKI double pendulum's model_parameters.yml: "I1: Extra inputs are not permitted"
    dfki = tmp_path / "model_parameters.yml"
    keys = ["I1", "I2", "Ir", "b1", "b2", "cf1", "cf2", "g", "gr", "l1", "l2", "m1", "m2", "r1"]
    dfki.write_text(yaml.safe_dump(dict.fromkeys(keys, 0.1)))
    with pytest.raises(InputError, match=r"a DFKI model_parameters\.yml") as err:
        load_reality(dfki)
    assert "I2_com_kg_m2 = I2 - m2 r2^2" in err.value.message
    assert "armature2_kg_m2 = Ir gr^2" in err.value.message
    assert "pendubot-dfki-2.0" in err.value.message


def test_run_policy_counts_what_the_env_reports():
    env = reality_env(load_reality("identified-shifted"), ENV, {"episode_s": 0.5}, 4, seed=0)
    result = run_policy(ConstantPolicy(), env, episodes=6, seed=0, world="w")
    assert len(result.returns) == 6 and result.success_rate == 0.0
    # hanging still: the upright reward is near 0, the same for every episode
    assert np.all(np.abs(result.returns) < 1.0)
    results = evaluate_policy(
        ConstantPolicy(1.0), [load_reality("motor-lag")], episodes=3, num_envs=3
    )
    assert [r.world for r in results] == ["training conditions", "motor-lag"]
    assert all(len(r.returns) == 3 for r in results)


def test_cli_eval_errors(tmp_path):
    proc = run_cli("policy", "eval", tmp_path / "missing_run", "--reality", "motor-lag")
    assert_one_line_error(proc, "missing_run")
    proc = run_cli("policy", "train", "sim2real/PendulumSwingUp-v0", "--out", tmp_path / "r")
    assert_one_line_error(proc, "unknown environment", "PendulumSwingup-v0")


def test_teacher_is_skipped_where_its_privileged_layout_differs():
    from sim2real.learn.envs import make_vec
    from sim2real.learn.vec import ObsRoles

    teacher = ConstantPolicy()
    teacher.roles = ObsRoles(actor=("policy", "privileged"))
    teacher.obs_groups = make_vec(ENV, 1, dr=None).obs_groups  # trained without an actuator
    results = evaluate_policy(
        teacher, [load_reality("identified-shifted"), load_reality("motor-lag")], episodes=2
    )
    assert [r.skipped == "" for r in results] == [True, True, False]
    assert "privileged" in results[2].skipped and np.isnan(results[2].success_rate)
    assert results[2].to_dict()["episodes"] == 0


def test_quick_failures_do_not_outnumber_long_episodes():
    """Environment 0 fails at every step, environment 1 succeeds after 10: each gives its equal
    share of the episodes (the first to finish would all be environment 0's)."""
    from types import SimpleNamespace

    import numpy as np

    from sim2real.learn.evaluate import run_policy

    class TwoEnvs:
        num_envs, obs_groups = 2, {}

        def reset(self, seed=None):
            self.t = 0
            return {"policy": np.zeros((2, 1))}

        def step(self, action):
            self.t += 1
            ret = np.array([0.0, 5.0 if self.t % 10 == 0 else np.nan])
            success = np.array([0.0, 1.0])
            info = {"episode_return": ret, "episode_success": success}
            return SimpleNamespace(obs={"policy": np.zeros((2, 1))}, info=info)

    policy = SimpleNamespace(act=lambda obs: np.zeros((2, 1)))
    result = run_policy(policy, TwoEnvs(), episodes=6, seed=0, world="w")
    assert result.success_rate == 0.5
    assert sorted(result.returns.tolist()) == [0.0, 0.0, 0.0, 5.0, 5.0, 5.0]


def test_a_reality_of_another_robot_names_its_file():
    """A pendubot policy on a pendulum reality said only "elbow: no hinge or slide joint"."""
    from sim2real.core.errors import InputError

    with pytest.raises(InputError, match="not a model of sim2real/PendubotSwingup-v0") as err:
        reality_env(load_reality("our-fit"), "sim2real/PendubotSwingup-v0", {}, 2, seed=0)
    assert err.value.source.endswith("our-fit.yaml") and err.value.field == "model"
