"""Outputs: MJCF approximations with an exact sidecar, derived quantities, randomization
ranges, and the resolved config round trip."""

import mujoco
import numpy as np
import pytest
import yaml

from sim2real.params.space import Param, ParamSpace, load_param_space
from sim2real.sim.builtin import BUILTINS
from sim2real.sim.model import load_sim_model
from sim2real.sysid.fit import FitConfig
from sim2real.sysid.outputs import derived_quantities, dr_space, fitted_mjcf

B = BUILTINS["pendulum-dfki"]


def test_nominal_pendulum_matches_the_published_numbers_by_hand():
    # the built-in's nominal is the published fit: J = 0.06259 kg m^2, m cx = 0.1022 kg m
    sim = load_sim_model(B.mjcf)
    space = load_param_space(B.spec)
    d = derived_quantities(sim, space, space.nominal())
    assert d["J_kg_m2"] == pytest.approx(0.06259, rel=1e-3)
    assert d["m_cx_kg_m"] == pytest.approx(0.1022, rel=1e-3)


def test_terms_without_mujoco_equivalent_go_to_the_sidecar(tmp_path):
    sim = load_sim_model(B.mjcf)
    space = ParamSpace(
        params=[
            Param(name="fl", target="joint.frictionloss:shoulder", nominal=0.1, bounds=(0, 1)),
            Param(name="coul", target="extra.coulomb:shoulder", nominal=0.2, bounds=(0, 1)),
            Param(name="visc", target="extra.viscous:shoulder", nominal=0.03, bounds=(0, 1)),
            Param(name="off", target="extra.offset:shoulder", nominal=-0.05, bounds=(-1, 1)),
            Param(name="strib", target="extra.stribeck:shoulder", nominal=0.07, bounds=(0, 1)),
            Param(name="delay", target="extra.delay_s", nominal=0.01, bounds=(0, 0.1)),
        ]
    )
    text, sidecar, notes = fitted_mjcf(sim, space, space.nominal(), np.array([3.0]))
    m = mujoco.MjModel.from_xml_string(text)
    # exact equivalents folded in: damping 0.04707 + 0.03, bias 0.07586 - 0.05
    assert m.dof_damping[0] == pytest.approx(0.07707)
    assert m.actuator_biasprm[0, 0] == pytest.approx(0.02586)
    # approximation: smooth Coulomb 0.2 written as frictionloss on top of the native 0.1
    assert m.dof_frictionloss[0] == pytest.approx(0.3)
    assert any("Stribeck" in n for n in notes) and any("delay" in n for n in notes)
    (tmp_path / "fitted.xml").write_text(text)
    (tmp_path / "fitted.sidecar.yaml").write_text(yaml.safe_dump(sidecar))
    exact = load_sim_model(tmp_path / "fitted.xml")
    assert exact.model.dof_frictionloss[0] == pytest.approx(0.1)  # native value restored
    e = exact.extras
    assert (e.coulomb_Nm[0], e.stribeck_Nm[0], e.delay_s) == pytest.approx((0.2, 0.07, 0.01))
    assert e.viscous_Nm_s[0] == 0.0 and e.offset_Nm[0] == 0.0  # already in the MJCF


def test_dr_ranges_follow_the_uncertainty():
    space = ParamSpace(
        params=[
            Param(name="a", target="t", nominal=1.0, bounds=(0.0, 10.0)),
            Param(name="b", target="t", nominal=1.0, bounds=(0.5, 1.05)),
        ]
    )
    dr = dr_space(space, np.array([2.0, 1.0]), np.array([0.25, 0.1]))
    assert dr.params[0].bounds == pytest.approx((1.5, 2.5))  # 2 std each side
    assert dr.params[1].bounds == pytest.approx((0.8, 1.05))  # clipped to the spec's bounds
    assert dr.params[0].prior.std == pytest.approx(0.25)
    tiny = dr_space(space, np.array([2.0, 1.0]), np.array([0.0, 0.0]))
    assert tiny.params[0].bounds == pytest.approx((1.96, 2.04))  # floor: 2 % of the value 2.0


def test_written_config_reads_back_equal(tmp_path, synth_csv):
    from sim2real.sysid.run import identify

    path, _ = synth_csv
    cfg = FitConfig(time_budget_s=2, max_evals=30, bootstrap=0, restarts=0, seed=3)
    result = identify("pendulum-dfki", [path], cfg=cfg, reference=False)
    result.write(tmp_path / "fitted.xml")
    doc = yaml.safe_load((tmp_path / "fitted.config.yaml").read_text())
    assert FitConfig.model_validate(doc["fit"]) == cfg
    assert ParamSpace.model_validate({"params": doc["spec_params"]}) == result.space
