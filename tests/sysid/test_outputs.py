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
from sim2real.sysid.run import fit_config_for

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
            Param(name="m", target="t", nominal=1.0, bounds=(0.1, 10.0), scale="log"),
        ]
    )
    # unit-cube sd 0.025 (a: 0.25), 0.1 (b: 0.055), 0.05 (m: 0.05 * ln 100 = 0.23 in ln m)
    cov_unit = np.diag([0.025, 0.1, 0.05]) ** 2
    dr = dr_space(space, np.array([2.0, 1.0, 2.0]), cov_unit)
    assert dr.params[0].bounds == pytest.approx((1.0, 3.0))  # 4 std each side
    assert dr.params[1].bounds == pytest.approx((0.78, 1.05))  # clipped to the spec's bounds
    assert dr.params[2].bounds == pytest.approx((2 * np.exp(-4 * 0.23026), 2 * np.exp(4 * 0.23026)), rel=1e-3)  # fmt: skip
    assert dr.params[0].prior.std == pytest.approx(0.25)
    assert dr.params[2].prior.kind == "log_normal"
    assert dr.params[2].prior.std == pytest.approx(0.05 * np.log(100))
    j = dr.joint
    assert j.names == ["a", "b", "m"] and j.mean == pytest.approx([2.0, 1.0, np.log(2.0)])
    assert np.diag(j.cov) == pytest.approx([0.25**2, 0.055**2, (0.05 * np.log(100)) ** 2])
    tiny = dr_space(space, np.array([2.0, 1.0, 2.0]), np.zeros((3, 3)))
    assert tiny.params[0].bounds == pytest.approx((1.96, 2.04))  # floor: 2 % of the value 2.0
    assert tiny.joint is None


def test_dr_yaml_draws_follow_the_fit_covariance(synth_fit, tmp_path):
    """dr.yaml draws the free parameters jointly with the fit's covariance (in scale
    coordinates: ln for the log-scale mass): sample covariance of 20000 draws against it.
    Centred mid-range so that no bound truncates the draws (the synthetic truth puts the
    friction and the delay at 0, their lower bounds)."""
    result = synth_fit
    result.write(tmp_path / "fitted.xml")
    written = load_param_space(tmp_path / "dr.yaml")
    assert written.joint == result.dr_space().joint
    space, free = result.space, np.flatnonzero(result.space.free_mask())
    cov_unit = result.fit.uncertainty.cov_unit
    mid = space.from_unit(np.where(space.free_mask(), 0.5, 0.0))
    dr = dr_space(space, mid, cov_unit)
    log = np.array([space.params[j].scale == "log" for j in free])
    lo, hi = space.lower()[free], space.upper()[free]
    span = np.where(log, np.log(np.where(log, hi, 2.0) / np.where(log, lo, 1.0)), hi - lo)
    want = cov_unit * np.outer(span, span)
    x = dr.sample(20000, np.random.default_rng(0))[:, free]
    got = np.cov(np.where(log, np.log(np.where(log, x, 1.0)), x), rowvar=False)
    sd = np.sqrt(np.diag(want))
    # variances within 5 %, correlations within 0.03 (sampling error of 20000 draws: ~1 %)
    assert np.diag(got) == pytest.approx(np.diag(want), rel=0.05)
    assert got / np.outer(sd, sd) == pytest.approx(want / np.outer(sd, sd), abs=0.03)
    assert np.abs(want / np.outer(sd, sd) - np.eye(len(free))).max() > 0.3  # correlated


def test_written_config_reads_back_equal(tmp_path, synth_fit):
    result = synth_fit
    result.write(tmp_path / "fitted.xml")
    doc = yaml.safe_load((tmp_path / "fitted.config.yaml").read_text())
    assert FitConfig.model_validate(doc["fit"]) == fit_config_for("pendulum-dfki", bootstrap=200)
    assert ParamSpace.model_validate({"params": doc["spec_params"]}) == result.space


def test_errors_of_a_delay_longer_than_the_default_history(synth_csv):
    # 80 ms: more than the 50 ms of earlier controls segments keep by default
    from sim2real.sim.logs import read_log, resample_log
    from sim2real.sim.mapping import load_mapping
    from sim2real.sysid.evaluate import prediction_errors

    path, _ = synth_csv
    sim = load_sim_model(B.mjcf)
    log = resample_log(read_log(path, load_mapping(B.mapping)), sim.model.opt.timestep)
    space = ParamSpace(params=[Param(name="d", target="extra.delay_s", nominal=0.08,
                                     bounds=(0.0, 0.1))])  # fmt: skip
    late = prediction_errors(sim, space, np.array([0.08]), [log])
    on_time = prediction_errors(sim, space, np.array([0.0]), [log])
    assert late[0.5].rmse_rad > on_time[0.5].rmse_rad > 0


def test_a_torque_offset_reaches_a_geared_motors_joint_in_the_mjcf(tmp_path):
    """A user's <motor gear="6">: the offset was written as biasprm without biastype (MuJoCo
    ignored it) and, once kept, at the motor's scale, 6x too large at the joint (a probe)."""
    (tmp_path / "p.xml").write_text(
        '<mujoco><option gravity="0 0 0"/><worldbody><body name="rod">'
        '<joint name="pivot" type="hinge" axis="0 1 0"/><geom size="0.05" mass="1"/></body>'
        '</worldbody><actuator><motor name="drive" joint="pivot" gear="6"/></actuator></mujoco>'
    )
    sim = load_sim_model(tmp_path / "p.xml")
    space = ParamSpace(params=[
        Param(name="off", target="extra.offset:pivot", nominal=0.09, bounds=(-1, 1))
    ])  # fmt: skip
    text, _, _ = fitted_mjcf(sim, space, space.nominal())
    m = mujoco.MjModel.from_xml_string(text)
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)  # ctrl 0: only the bias acts
    assert m.actuator_biastype[0] == mujoco.mjtBias.mjBIAS_AFFINE
    assert d.qfrc_actuator[0] == pytest.approx(0.09)
