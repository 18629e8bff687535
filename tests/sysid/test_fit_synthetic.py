"""Identification on synthetic logs with known parameters: least squares start, the converged
least-squares fit, outputs a plain MuJoCo user can load, and repeatability."""

import mujoco
import numpy as np
import pytest
import yaml
from cli_helpers import figures_drawn

from sim2real.params.space import load_param_space
from sim2real.sim.builtin import BUILTINS
from sim2real.sim.logs import read_log, resample_log
from sim2real.sim.mapping import load_mapping
from sim2real.sim.model import load_sim_model
from sim2real.sysid.init_ls import linear_init
from sim2real.sysid.run import fit_config_for, identify

from .conftest import TRUTH

B = BUILTINS["pendulum-dfki"]


def test_least_squares_recovers_the_linear_parameters(synth_csv):
    path, _ = synth_csv
    sim = load_sim_model(B.mjcf)
    space = load_param_space(B.spec)
    log = resample_log(read_log(path, load_mapping(B.mapping)), sim.model.opt.timestep)
    init = linear_init(sim, space, [log])
    assert init is not None
    names = space.names
    # linear: mass (centre of mass fixed), damping, frictionloss, bias; not the arm or delay
    assert [names[i] for i in np.flatnonzero(init.linear)] == [
        "mass_kg", "damping_Nm_s", "frictionloss_Nm", "torque_bias_Nm"]  # fmt: skip
    got = dict(zip(names, init.values, strict=True))
    assert got["mass_kg"] == pytest.approx(TRUTH["mass_kg"], rel=0.01)
    assert got["damping_Nm_s"] == pytest.approx(TRUTH["damping_Nm_s"], abs=0.005)
    assert got["torque_bias_Nm"] == pytest.approx(TRUTH["torque_bias_Nm"], abs=0.005)
    assert got["frictionloss_Nm"] < 0.01


def test_fit_recovers_truth_and_writes_loadable_outputs(synth_fit, tmp_path, figure_log):
    result = synth_fit
    assert result.fit.converged and result.fit.unidentified == []
    v = dict(zip(result.space.names, result.fit.values, strict=True))
    arm = 0.6124
    # J = m arm^2 and m cx = m arm of the truth, by hand: 0.3 kg at 0.6124 m
    assert result.derived["m_cx_kg_m"] == pytest.approx(0.3 * arm, rel=0.01)
    assert result.derived["J_kg_m2"] == pytest.approx(0.3 * arm**2, rel=0.01)
    assert v["damping_Nm_s"] == pytest.approx(0.08, abs=0.003)
    assert v["torque_bias_Nm"] == pytest.approx(0.05, abs=0.003)
    assert v["delay_s"] < 0.002
    assert result.train_errors[0.5].rmse_rad < 0.005
    paths = result.write(tmp_path / "fitted.xml", tmp_path / "report")
    names = {p.name for p in paths}
    assert {"fitted.xml", "fitted.sidecar.yaml", "fitted.params.yaml", "dr.yaml",
            "fitted.config.yaml", "index.html"} <= names  # fmt: skip
    overlay = figures_drawn(figure_log)["overlay.png"]["axes"][0]
    measured, simulated = overlay["lines"][0], overlay["lines"][1]
    assert measured["label"] == "measured" and simulated["label"] == "simulated (fit)"
    assert overlay["xlabel"] == "time [s]" and overlay["ylabel"] == "shoulder [rad]"
    # simulated segments (one line each, the first labelled) start on the log and stay inside
    # its range: the fitted model follows the measured swing
    segments = [line for line in overlay["lines"][1:] if line["n"] > 1]
    assert len(segments) >= 2
    for seg in segments:
        assert measured["ymin"] - 0.05 <= seg["ymin"] and seg["ymax"] <= measured["ymax"] + 0.05
    assert max(seg["ymax"] - seg["ymin"] for seg in segments) > 0.5
    # plain MuJoCo loads the fitted model, with the identified values in its own fields
    m = mujoco.MjModel.from_xml_path(str(tmp_path / "fitted.xml"))
    assert m.body_mass[1] == pytest.approx(v["mass_kg"], rel=1e-5)
    assert m.dof_damping[0] == pytest.approx(v["damping_Nm_s"], rel=1e-5, abs=1e-9)
    assert m.actuator_biasprm[0, 0] == pytest.approx(v["torque_bias_Nm"], rel=1e-5, abs=1e-9)
    assert m.actuator_gainprm[0, 0] == 1.0 and m.actuator_gear[0, 0] == 1.0
    assert m.actuator_ctrlrange[0, 1] >= np.abs(result.logs[0].ctrl).max()
    params = yaml.safe_load((tmp_path / "fitted.params.yaml").read_text())
    assert params["converged"] is True
    assert all(p["identified"] and "std" in p and "ci95" in p for p in params["params"])
    dr = load_param_space(tmp_path / "dr.yaml")
    for p, val in zip(dr.params, result.fit.values, strict=True):
        assert p.bounds[0] <= val <= p.bounds[1]
    # drawn together: the free parameters not fitted at a bound (the truth's friction is 0)
    inside = [n for n, b in zip(result.space.names, result.fit.at_bound, strict=True) if not b]
    assert dr.joint is not None and dr.joint.names == inside
    # our loader restores the exact terms (the delay) from the sidecar
    again = load_sim_model(tmp_path / "fitted.xml")
    assert again.extras.delay_s == pytest.approx(v["delay_s"])


def test_plain_mujoco_user_reproduces_the_reported_error(synth_fit, tmp_path):
    """Independent check: plain mj_step on FITTED.xml with ctrl = logged torque, from the same
    initial states, gives the plain-MJCF error the fit reports."""
    result = synth_fit
    result.write(tmp_path / "fitted.xml")
    m = mujoco.MjModel.from_xml_path(str(tmp_path / "fitted.xml"))
    d = mujoco.MjData(m)
    segs = result.plain_errors[0.5].segs
    sq = []
    for s in range(len(segs)):
        mujoco.mj_resetData(m, d)
        d.qpos[:], d.qvel[:] = segs.qpos0[s], segs.qvel0[s]
        for k in range(segs.steps):
            d.ctrl[:] = segs.ctrl[s, segs.hist + k]
            mujoco.mj_step(m, d)
            sq.append((d.qpos[0] - segs.meas_q[s, k + 1, 0]) ** 2)
    assert np.sqrt(np.mean(sq)) == pytest.approx(result.plain_errors[0.5].rmse_rad, rel=1e-6)


def test_fits_repeat_across_seeds_starts_and_iteration_caps(synth_csv, synth_fit):
    """The fit stops on convergence: another seed with two extra random starts, or a higher
    iteration cap, gives the same parameters (within 2 % or the reported 1-sigma)."""
    path, _ = synth_csv
    first = synth_fit.fit
    std = synth_fit.param_std()
    for cfg in (fit_config_for(B.name, seed=1, starts=2, bootstrap=0),
                fit_config_for(B.name, max_iter=300, bootstrap=0)):  # fmt: skip
        reported: list[tuple[int, float]] = []
        other = identify(B.name, [path], cfg=cfg, reference=False,
                         progress=lambda n, cost, out=reported: out.append((n, cost))).fit  # fmt: skip
        assert other.converged
        # the progress ends where the fit does (it stopped at the last least-squares step)
        assert reported[-1] == (other.evaluations, other.cost)
        diff = np.abs(other.values - first.values)
        ok = (diff <= 0.02 * np.abs(first.values)) | (diff <= std)
        assert ok.all(), dict(zip(synth_fit.space.names, diff, strict=True))
