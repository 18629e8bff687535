"""Domain randomization terms: distributions, operations and modes with fixed seeds, the
sysid ``dr.yaml`` plug-in, and the errors of bad YAML files."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from sim2real.core.errors import InputError
from sim2real.learn.envs import default_dr_path, make_vec
from sim2real.learn.randomization import (
    Randomization,
    Randomizer,
    Term,
    load_randomization,
    randomization_from_dict,
)
from sim2real.params.space import ParamSpace

ENV = "sim2real/PendulumSwingup-v0"
N = 20_000


def _space() -> ParamSpace:
    return ParamSpace.model_validate(
        {
            "params": [
                {"name": "mass_kg", "target": "body.mass:pendulum", "nominal": 2.0,
                 "bounds": [0.0, 100.0]},
                {"name": "damping", "target": "joint.damping:shoulder", "nominal": 0.5,
                 "bounds": [0.0, 0.6]},
            ]
        }
    )  # fmt: skip


def _draw(**term) -> np.ndarray:
    t = Term(name="t", target="mass_kg", mode="reset", **term)
    values = np.tile(_space().nominal(), (N, 1))
    Randomizer(Randomization(terms=[t]), _space()).apply(
        [*Randomizer(Randomization(terms=[t]), _space()).bound], values, np.arange(N),
        np.random.default_rng(0),
    )  # fmt: skip
    return values[:, 0]


def test_uniform_scale():
    v = _draw(distribution="uniform", range=(0.8, 1.2), operation="scale")
    assert v.min() >= 1.6 and v.max() <= 2.4
    assert v.mean() == pytest.approx(2.0, abs=0.01)
    assert v.std() == pytest.approx(0.8 / np.sqrt(12), rel=0.03)


def test_uniform_add_and_absolute():
    v = _draw(distribution="uniform", range=(-0.1, 0.3), operation="add")
    assert v.min() >= 1.9 and v.max() <= 2.3 and v.mean() == pytest.approx(2.1, abs=0.01)
    v = _draw(distribution="uniform", range=(5.0, 6.0), operation="absolute")
    assert v.min() >= 5.0 and v.max() <= 6.0 and v.mean() == pytest.approx(5.5, abs=0.01)


def test_log_uniform_is_uniform_in_log():
    v = _draw(distribution="log_uniform", range=(0.5, 2.0), operation="absolute")
    assert v.min() >= 0.5 and v.max() <= 2.0
    assert np.median(v) == pytest.approx(1.0, rel=0.03)  # geometric midpoint
    assert np.mean(v < 0.707) == pytest.approx(0.25, abs=0.015)


def test_normal_and_log_normal():
    v = _draw(distribution="normal", range=(1.0, 0.1), operation="scale")
    assert v.mean() == pytest.approx(2.0, abs=0.005) and v.std() == pytest.approx(0.2, rel=0.03)
    v = _draw(distribution="log_normal", range=(3.0, 0.2), operation="absolute")
    assert np.median(v) == pytest.approx(3.0, rel=0.02)
    assert np.log(v).std() == pytest.approx(0.2, rel=0.03)


def test_truncation_bounds_redraw_and_physical_clip():
    v = _draw(distribution="normal", range=(2.0, 1.0), operation="absolute", bounds=(1.5, 2.5))
    assert v.min() >= 1.5 and v.max() <= 2.5
    # redrawn, not clipped: no pile-up at the bounds
    assert np.mean(v == 1.5) + np.mean(v == 2.5) == 0.0
    # the environment's bounds clip a normal draw's tails (damping in [0, 0.6])
    t = Term(name="d", target="damping", mode="reset", distribution="normal", range=(1.0, 1.0),
             operation="scale")  # fmt: skip
    values = np.tile(_space().nominal(), (1000, 1))
    r = Randomizer(Randomization(terms=[t]), _space())
    r.apply(r.bound, values, np.arange(1000), np.random.default_rng(1))
    assert values[:, 1].max() == 0.6 and values[:, 1].min() == 0.0
    assert np.all(values[:, 0] == 2.0)


@pytest.mark.parametrize(
    "term",
    [
        {"range": (0.0, 2.0), "operation": "scale"},  # up to 1.0
        {"distribution": "log_uniform", "range": (0.1, 0.7)},
        {"distribution": "normal", "range": (0.8, 0.1)},  # its centre
        {"distribution": "normal", "range": (0.5, 0.1), "bounds": (0.2, 0.9)},
    ],
)
def test_a_term_beyond_the_bounds_is_refused_not_clipped(term):
    # clipped, a uniform range beyond the bounds would pile its draws up on the bound
    t = Term(name="d", target="damping", mode="reset", **term)
    with pytest.raises(
        InputError, match=r"'d' gives damping values? .* outside its bounds \[0, 0.6\]"
    ):
        Randomizer(Randomization(terms=[t]), _space(), source="dr.yaml")
    # asked for, the same term's values are clipped to the bounds
    t = Term(name="d", target="damping", mode="reset", clip=True, **term)
    values = np.tile(_space().nominal(), (1000, 1))
    r = Randomizer(Randomization(terms=[t]), _space())
    r.apply(r.bound, values, np.arange(1000), np.random.default_rng(1))
    assert values[:, 1].min() >= 0.0 and values[:, 1].max() <= 0.6


def test_pattern_matches_names_and_targets_independently():
    t = Term(name="all", target="*", mode="reset", range=(0.5, 1.2), operation="scale")
    r = Randomizer(Randomization(terms=[t]), _space())
    assert list(r.bound[0].columns) == [0, 1]
    t = Term(name="j", target="joint.*:shoulder", mode="reset", range=(1, 1), operation="scale")
    assert list(Randomizer(Randomization(terms=[t]), _space()).bound[0].columns) == [1]


def _dr(tmp_path, terms, name="dr.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"terms": terms}))
    return path


def test_modes_startup_reset_interval(tmp_path):
    path = _dr(
        tmp_path,
        [
            {"name": "m", "target": "mass_kg", "mode": "startup", "range": [0.8, 1.2],
             "operation": "scale"},
            {"name": "d", "target": "damping_Nm_s", "mode": "reset", "range": [0.5, 1.5],
             "operation": "scale"},
            {"name": "b", "target": "env.obs_bias_q", "mode": "interval",
             "interval_s": [0.1, 0.1], "range": [-0.1, 0.1]},
        ],
    )  # fmt: skip
    env = make_vec(ENV, 4, seed=0, dr=path, config={"episode_s": 0.25})
    env.reset()
    col = env.space.names.index
    mass0 = env.values[:, col("mass_kg")].copy()
    damp0 = env.values[:, col("damping_Nm_s")].copy()
    bias = []
    for _ in range(24):  # until just before the end of the first episode (25 steps)
        env.step(np.zeros((4, 1)))
        bias.append(env.values[:, col("obs_bias_q")].copy())
    bias = np.array(bias)
    # interval: redrawn every 10 steps (after steps 10 and 20), constant in between
    assert np.all(bias[0] == 0.0) and np.all(bias[8] == 0.0)
    assert np.all(bias[9] != 0.0) and np.array_equal(bias[9], bias[18])
    assert np.all(bias[19] != bias[18])
    env.step(np.zeros((4, 1)))  # episode ends: reset terms redrawn, startup kept
    assert np.array_equal(env.values[:, col("mass_kg")], mass0)
    assert np.all(env.values[:, col("damping_Nm_s")] != damp0)
    assert len(set(mass0)) == 4 and np.all(np.abs(mass0 / env.nominal[col("mass_kg")] - 1) <= 0.2)
    assert np.all(env.values[:, col("obs_bias_q")] == 0.0)  # back to nominal at reset
    env.reset(seed=0)  # a seeded reset redraws startup values reproducibly
    assert np.array_equal(env.values[:, col("mass_kg")], mass0)


def test_push_term_applies_a_torque_for_push_duration(tmp_path):
    path = _dr(
        tmp_path,
        [{"name": "push", "target": "env.push_Nm", "mode": "interval", "interval_s": [0.05, 0.05],
          "range": [2.0, 2.0]}],
    )  # fmt: skip
    cfg = {"init_q_rad": 0.0, "init_qvel_rad_s": 0.0, "params": {"frictionloss_Nm": 0.0}}
    pushed = make_vec(ENV, 1, seed=0, dr=path, config=cfg)
    calm = make_vec(ENV, 1, seed=0, dr=None, config=cfg)
    pushed.reset(), calm.reset()
    active = []
    for _ in range(8):
        pushed.step(np.zeros((1, 1)))
        calm.step(np.zeros((1, 1)))
        active.append(pushed._observe()["privileged"][0, 3])
    # fires after step 5 and lasts push_duration_s = 0.1 s = 10 control steps
    assert active == [0, 0, 0, 0, 1, 1, 1, 1]
    assert pushed.stepper.qvel[0, 0] > calm.stepper.qvel[0, 0] + 0.1


def test_default_dr_loads_and_randomizes_within_its_ranges():
    dr = load_randomization("default", default_dr_path(ENV))
    assert {t.mode for t in dr.terms} == {"startup", "reset", "interval"}
    env = make_vec(ENV, 64, seed=0)
    env.reset()
    col = env.space.names.index
    mass, com = env.values[:, col("mass_kg")], env.values[:, col("com_z_m")]
    assert mass.min() >= 0.12 and mass.max() <= 0.98
    # log-uniform: the median near the geometric mean of the bounds (0.343), not the midpoint
    assert 0.22 < np.median(mass) < 0.5
    assert com.min() >= -0.63 and com.max() <= -0.47
    m_cx = -mass * com  # the published fit (0.102) and ours (0.431) both inside the draws
    assert m_cx.min() < 0.102 and m_cx.max() > 0.431
    delay = env.values[:, col("delay_s")]
    assert delay.min() >= 0.0 and delay.max() <= 0.025 and delay.std() > 0.003


def test_sysid_dr_yaml_plugs_in(tmp_path):
    space = {
        "params": [
            {"name": "mass_kg", "target": "body.mass:pendulum", "nominal": 0.2,
             "bounds": [0.15, 0.25], "scale": "log",
             "prior": {"kind": "normal", "mean": 0.2, "std": 0.02}},
            {"name": "delay_s", "target": "extra.delay_s", "nominal": 0.01,
             "bounds": [0.005, 0.02]},
        ]
    }  # fmt: skip
    path = tmp_path / "dr.yaml"
    path.write_text(yaml.safe_dump(space))
    dr = load_randomization(path)
    assert [t.mode for t in dr.terms] == ["reset", "reset"]
    assert [t.distribution for t in dr.terms] == ["normal", "uniform"]
    env = make_vec(ENV, 500, seed=0, dr=path)
    env.reset()
    col = env.space.names.index
    mass = env.values[:, col("mass_kg")]
    assert mass.min() >= 0.15 and mass.max() <= 0.25
    assert mass.mean() == pytest.approx(0.2, abs=0.004)
    assert mass.std() == pytest.approx(0.02, rel=0.15)  # a little under: truncated at 2.5 std
    delay = env.values[:, col("delay_s")]
    assert delay.min() >= 0.005 and delay.max() <= 0.02
    assert delay.mean() == pytest.approx(0.0125, abs=0.0006)


@pytest.mark.parametrize(
    ("terms", "field", "words"),
    [
        (
            [{"name": "a", "target": "mass_kg", "mode": "reset", "range": [1, 2]},
             {"name": "b", "target": "dampin_Nm_s", "mode": "reset", "range": [1, 2]}],
            "terms[1].target", "damping_Nm_s",
        ),
        ([{"name": "a", "target": "mass_kg", "mode": "reset", "range": [2, 1]}],
         "terms[0].range", "inverted"),
        ([{"name": "a", "target": "mass_kg", "mode": "sometimes", "range": [1, 2]}],
         "terms[0].mode", "startup"),
        ([{"name": "a", "target": "mass_kg", "mode": "reset", "range": [1, 2],
           "distribution": "cauchy"}], "terms[0].distribution", "uniform"),
        ([{"name": "a", "target": "mass_kg", "mode": "reset", "range": [1, 2],
           "operation": "multiply"}], "terms[0].operation", "scale"),
        ([{"name": "a", "target": "mass_kg", "mode": "reset"}], "terms[0].range", "missing"),
        # a misspelt field was reported as the one it left missing, "range: missing field"
        ([{"name": "a", "target": "mass_kg", "mode": "reset", "rnage": [1, 2]}],
         "terms[0].rnage", "unknown field; did you mean 'range'?"),
        ([{"name": "a", "target": "mass_kg", "mode": "interval", "range": [1, 2]}],
         "terms[0].interval_s", "interval"),
        ([{"name": "lag", "target": "delay_s", "mode": "reset", "range": [0.0, 0.3]}],
         "terms[0].range", "delay_s values 0 to 0.3, outside its bounds [0, 0.1]"),
    ],
)  # fmt: skip
def test_bad_yaml_names_file_and_field(tmp_path, terms, field, words):
    path = _dr(tmp_path, terms)
    with pytest.raises(InputError) as err:
        make_vec(ENV, 1, dr=path)
    assert err.value.field == field
    assert words in str(err.value)
    assert str(path) in str(err.value)


def test_sysid_parameter_unknown_to_the_env_is_named(tmp_path):
    path = tmp_path / "dr.yaml"
    bad = {"name": "x", "target": "joint.stiffnes:shoulder", "nominal": 0.0, "bounds": [0, 1]}
    path.write_text(yaml.safe_dump({"params": [bad]}))
    with pytest.raises(InputError) as err:
        make_vec(ENV, 1, dr=path)
    assert err.value.field == "params[0].target"


def test_not_a_dr_document():
    with pytest.raises(InputError) as err:
        randomization_from_dict({"foo": 1}, "x.yaml")
    assert err.value.field == "terms"
    with pytest.raises(InputError):
        load_randomization("/nonexistent/dr.yaml")


def test_sysid_joint_block_draws_together_with_the_fit_covariance(tmp_path):
    # ln(mass) and the (negative) centre of mass correlated as a fit of a pendulum that pins
    # m cx much better than m gives them; the env must draw them jointly
    cov = np.array([[0.04, 0.019], [0.019, 0.01]])  # ln(mass) sd 0.2, com sd 0.1 m, r 0.95
    space = {
        "params": [
            {"name": "mass_kg", "target": "body.mass:pendulum", "nominal": 0.8,
             "bounds": [0.2, 3.0], "scale": "log"},
            {"name": "com_z_m", "target": "body.com_z:pendulum", "nominal": -0.5,
             "bounds": [-1.2, -0.15]},
        ],
        "joint": {"names": ["mass_kg", "com_z_m"], "mean": [float(np.log(0.8)), -0.5],
                  "cov": cov.tolist()},
    }  # fmt: skip
    path = tmp_path / "dr.yaml"
    path.write_text(yaml.safe_dump(space))
    dr = load_randomization(path)
    assert dr.terms == [] and len(dr.joint) == 1
    env = make_vec(ENV, 4000, seed=0, dr=path)
    env.reset()
    col = env.space.names.index
    z = np.column_stack([np.log(env.values[:, col("mass_kg")]), env.values[:, col("com_z_m")]])
    # sample covariance of 4000 draws: within about 3 standard errors of the given one
    assert np.cov(z, rowvar=False) == pytest.approx(cov, rel=0.1, abs=1e-5)
    assert np.corrcoef(z, rowvar=False)[0, 1] == pytest.approx(0.95, abs=0.01)
    # independent draws would leave ln(m cx) wider than ln(m) (sd 0.28); jointly: about 0.07
    mcx = env.values[:, col("mass_kg")] * -env.values[:, col("com_z_m")]
    assert np.log(mcx).std() < 0.5 * z[:, 0].std()


def test_joint_block_target_unknown_to_the_env_is_named(tmp_path):
    space = {
        "params": [{"name": "x", "target": "joint.stiffnes:shoulder", "nominal": 0.1,
                    "bounds": [0.0, 1.0]}],
        "joint": {"names": ["x"], "mean": [0.1], "cov": [[0.01]]},
    }  # fmt: skip
    path = tmp_path / "dr.yaml"
    path.write_text(yaml.safe_dump(space))
    with pytest.raises(InputError) as err:
        make_vec(ENV, 1, dr=path)
    assert err.value.field == "joint[0].targets[0]"
