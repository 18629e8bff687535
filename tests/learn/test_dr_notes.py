"""What a randomization does that its user would not see: parameters they set that an absolute
term overwrites (a warning naming both files), a ``--dr`` file without a term (a note)."""

from __future__ import annotations

import warnings

import pytest
import yaml

from sim2real.learn.dr_notes import no_terms_note
from sim2real.learn.envs import check_env_builds
from sim2real.learn.reality import load_reality, reality_env

ENV = "sim2real/PendulumSwingup-v0"


def test_env_config_params_a_default_absolute_term_overwrites_are_warned_of():
    # the shipped DR draws mass_kg and com_z_m with operation: absolute: the bench's 3 kg never
    # reached an environment; its torque bias is drawn with operation: add (kept, as nominal)
    params = {"mass_kg": 3.0, "body.com_z:pendulum": -0.3, "torque_bias_Nm": 0.02}
    with pytest.warns(UserWarning) as caught:
        check_env_builds(ENV, {"params": params}, "bench.env.yaml")
    lines = [str(w.message) for w in caught]
    assert len(lines) == 2
    assert lines[0].startswith("bench.env.yaml: params.mass_kg = 3 is overwritten")
    assert "term 'mass' of" in lines[0] and "pendulum_swingup.dr.yaml" in lines[0]
    assert "give a --dr of your own without that term" in lines[0]
    assert "params.body.com_z:pendulum" in lines[1] and "term 'com'" in lines[1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env_builds(ENV, {"params": params}, "bench.env.yaml", dr=None)  # no DR: nothing


def test_a_reality_whose_randomization_overwrites_its_own_params_is_warned_of(tmp_path):
    path = tmp_path / "heavy.yaml"
    term = {"name": "m", "target": "mass_kg", "mode": "reset", "range": [0.5, 0.7],
            "operation": "absolute"}  # fmt: skip
    path.write_text(
        yaml.safe_dump({"params": {"mass_kg": 0.9}, "randomization": {"terms": [term]}})
    )
    with pytest.warns(UserWarning, match=r"heavy.yaml: params.mass_kg = 0.9 .* term 'm'"):
        reality_env(load_reality(path), ENV, {}, 1, seed=0)
    term["operation"] = "scale"  # around the reality's own mass: nothing to say
    path.write_text(
        yaml.safe_dump({"params": {"mass_kg": 0.9}, "randomization": {"terms": [term]}})
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reality_env(load_reality(path), ENV, {}, 1, seed=0)


def test_a_dr_file_without_terms_gets_a_note(tmp_path):
    empty, no_terms, some = tmp_path / "empty.yaml", tmp_path / "none.yaml", tmp_path / "dr.yaml"
    empty.write_text("")
    no_terms.write_text("terms: []\n")
    term = {"name": "m", "target": "mass_kg", "mode": "reset", "range": [0.5, 0.7]}
    some.write_text(yaml.safe_dump({"terms": [term]}))
    for path in (empty, no_terms):
        assert no_terms_note(path) == (
            f"note: {path} has no randomization terms: training without randomization"
        )
    assert no_terms_note(some) is None
    assert no_terms_note("default") is None and no_terms_note(None) is None
