"""A spec that lets some candidates diverge: the fit penalises them and carries on."""

import numpy as np
import yaml

from sim2real.sim.builtin import BUILTINS
from sim2real.sysid.fit import FitConfig
from sim2real.sysid.run import identify


def test_diverging_candidates_are_penalised_not_fatal(synth_csv, tmp_path):
    path, _ = synth_csv
    spec = yaml.safe_load(BUILTINS["pendulum-dfki"].spec.read_text())
    for p in spec["params"]:
        if p["name"] == "damping_Nm_s":
            p["bounds"] = [-200.0, 0.5]  # strongly negative damping: the pendulum runs away
    bad = tmp_path / "spec.yaml"
    bad.write_text(yaml.safe_dump(spec))
    # random starts fall at strongly negative damping, where every segment diverges
    cfg = FitConfig(bootstrap=20, ls_init=False, starts=2, max_iter=20)
    result = identify("pendulum-dfki", [path], spec=bad, cfg=cfg, reference=False)
    assert result.fit.unstable_evaluations > 0
    assert np.isfinite(result.fit.cost) and result.fit.cost < result.fit.cost_nominal
    assert np.isfinite(result.train_errors[0.5].rmse_rad)


def test_model_path_needs_spec_and_mapping_and_fits_with_them(synth_csv, tmp_path):
    import pytest

    from sim2real.core.errors import InputError

    path, _ = synth_csv
    b = BUILTINS["pendulum-dfki"]
    xml = tmp_path / "my_pendulum.xml"
    xml.write_text(b.mjcf.read_text())
    with pytest.raises(InputError, match="parameter spec is needed"):
        identify(str(xml), [path])
    cfg = FitConfig(bootstrap=0, max_iter=3)
    result = identify(str(xml), [path], spec=b.spec, mapping=b.mapping, cfg=cfg)
    assert result.model_name == str(xml) and result.reference is None
    assert np.isfinite(result.fit.cost) and result.fit.cost <= result.fit.cost_nominal
