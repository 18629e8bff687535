"""ParamSpace: validation, unit-cube mapping, sampling and YAML round trips."""

import numpy as np
import pytest
import yaml

from sim2real.core.errors import InputError
from sim2real.params.space import JointPrior, Param, ParamSpace, Prior, load_param_space


def space():
    return ParamSpace(
        params=[
            Param(name="mass", target="body.mass:a", nominal=1.0, bounds=(0.1, 10.0), scale="log"),
            Param(name="damp", target="joint.damping:j", nominal=0.5, bounds=(0.0, 2.0)),
            Param(name="fixed", target="option.gravity", nominal=9.81, bounds=(9.81, 9.81)),
        ]
    )


def test_unit_cube_mapping_by_hand():
    s = space()
    # log scale: u = 0.5 is the geometric mean of the bounds, sqrt(0.1 * 10) = 1
    # linear: u = 0.25 of [0, 2] is 0.5; a fixed parameter maps to 0 and back to its value
    assert np.allclose(s.from_unit(np.array([0.5, 0.25, 0.7])), [1.0, 0.5, 9.81])
    assert np.allclose(s.to_unit(np.array([1.0, 0.5, 9.81])), [0.5, 0.25, 0.0])
    vals = np.array([[0.2, 1.7, 9.81], [7.0, 0.0, 9.81]])
    assert np.allclose(s.from_unit(s.to_unit(vals)), vals)
    assert s.free_mask().tolist() == [True, True, False]


def test_yaml_round_trip_is_equal(tmp_path):
    s = space()
    s.params[1] = s.params[1].model_copy(update={"prior": Prior(kind="normal", mean=0.5, std=0.1)})
    s.to_yaml(tmp_path / "spec.yaml")
    assert load_param_space(tmp_path / "spec.yaml") == s


def test_sampling_respects_bounds_and_prior():
    s = space()
    s.params[1] = s.params[1].model_copy(update={"prior": Prior(kind="normal", mean=0.5, std=0.1)})
    x = s.sample(20000, np.random.default_rng(0))
    assert x.shape == (20000, 3)
    assert (x[:, 0] >= 0.1).all() and (x[:, 0] <= 10).all()
    # uniform in log: the median is the geometric mean 1.0
    assert np.median(x[:, 0]) == pytest.approx(1.0, rel=0.05)
    assert x[:, 1].mean() == pytest.approx(0.5, abs=0.005)
    assert x[:, 1].std() == pytest.approx(0.1, rel=0.03)
    assert (x[:, 2] == 9.81).all()


@pytest.mark.parametrize(
    ("param", "needle"),
    [
        ({"name": "a", "target": "t", "nominal": 1, "bounds": [2, 0]}, "lower 2.0 > upper 0.0"),
        ({"name": "a", "target": "t", "nominal": 5, "bounds": [0, 1]}, "outside"),
        ({"name": "a", "target": "t", "nominal": 1, "bounds": [0, 2], "scale": "log"}, "log"),
        ({"name": "a", "target": "t", "nominal": 1, "bounds": [0, 2], "sclae": "log"}, "sclae"),
    ],
)
def test_bad_specs_name_the_parameter(tmp_path, param, needle):
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump({"params": [param]}))
    with pytest.raises(InputError) as err:
        load_param_space(path)
    assert "params.a" in str(err.value) and needle in str(err.value)


def test_an_unknown_field_is_named_as_the_field_its_message_is_about(tmp_path):
    # `value` for `nominal` was reported as "params.a.nominal: unknown field; ... expected one
    # of: name, target, nominal, ...": the field of the missing error, the unknown one's text
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump({"params": [{"name": "a", "target": "t", "value": 1.0}]}))
    with pytest.raises(InputError) as err:
        load_param_space(path)
    assert err.value.field == "params.a.value"
    assert err.value.message.startswith("unknown field;")


def test_duplicate_names_and_replace():
    p = {"name": "a", "target": "t", "nominal": 1.0, "bounds": (0.0, 2.0)}
    with pytest.raises(ValueError, match="duplicate"):
        ParamSpace(params=[Param(**p), Param(**p)])
    s = space().replace(mass=20.0, damp=1.5)
    assert s.nominal().tolist() == [10.0, 1.5, 9.81]  # clipped to the bounds


def test_joint_prior_draws_follow_its_covariance_and_round_trip(tmp_path):
    # ln(mass) and damping correlated at -0.6; the fixed parameter is untouched
    cov = [[0.09, -0.0072], [-0.0072, 0.0016]]  # sd 0.3 (ln), 0.04
    s = space().model_copy(
        update={"joint": JointPrior(names=["mass", "damp"], mean=[0.0, 0.5], cov=cov)}
    )
    s = ParamSpace.model_validate(s.model_dump())
    x = s.sample(20000, np.random.default_rng(1))
    z = np.column_stack([np.log(x[:, 0]), x[:, 1]])
    assert z.mean(axis=0) == pytest.approx([0.0, 0.5], abs=0.01)
    assert np.cov(z, rowvar=False) == pytest.approx(np.array(cov), rel=0.05)
    assert (x[:, 2] == 9.81).all()
    s.to_yaml(tmp_path / "dr.yaml")
    assert load_param_space(tmp_path / "dr.yaml") == s
    assert s.replace(mass=2.0).joint == s.joint
    # the file says its joint parameters' priors are for reading (an edit changed nothing)
    assert (tmp_path / "dr.yaml").read_text().startswith("# mass, damp: drawn together")


@pytest.mark.parametrize(
    ("joint", "needle"),
    [
        ({"names": ["a", "zz"], "mean": [0, 0], "cov": [[1, 0], [0, 1]]}, "unknown parameters zz"),
        ({"names": ["a"], "mean": [0, 0], "cov": [[1]]}, "mean needs 1"),
        ({"names": ["a", "b"], "mean": [0, 0], "cov": [[1, 2], [2, 1]]}, "positive semi"),
        ({"names": ["a", "b"], "mean": [0, 0], "cov": [[1, 0.5], [0.4, 1]]}, "symmetric"),
    ],
)
def test_bad_joint_prior_is_named(tmp_path, joint, needle):
    params = [{"name": n, "target": "t", "nominal": 0.5, "bounds": [0, 1]} for n in ("a", "b")]
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump({"params": params, "joint": joint}))
    with pytest.raises(InputError) as err:
        load_param_space(path)
    assert needle in str(err.value)
