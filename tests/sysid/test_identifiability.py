"""Identifiability from the data: a flat direction of a hand-made sensitivity, and a pendulum
whose mass, centre of mass and inertia are all free, so that the logs pin only m cx and J."""

import numpy as np
import pytest
import yaml

from sim2real.params.space import load_param_space
from sim2real.sim.builtin import BUILTINS
from sim2real.sysid.identifiability import Sensitivity, analyse
from sim2real.sysid.run import fit_config_for, identify

from .conftest import synth_pendulum_csv

B = BUILTINS["pendulum-dfki"]


def _sensitivity(jac: np.ndarray, blocks: int = 8) -> Sensitivity:
    """(S, n, F) Jacobians with small random residuals, all in the quadratic range."""
    rng = np.random.default_rng(0)
    S, n, F = jac.shape
    r = 0.1 * rng.standard_normal((S, n))
    return Sensitivity(np.full(F, 0.5), jac, r, np.ones((S, n)), r,
                       np.arange(S) % blocks, np.ones(S, bool))  # fmt: skip


def test_a_flat_combination_is_found_and_nothing_else():
    # residuals depend on a and b only through a + b (c is separate): the flat direction is
    # (1, -1, 0) / sqrt(2), by hand
    rng = np.random.default_rng(1)
    base = rng.standard_normal((16, 40, 2))
    jac = np.stack([base[..., 0], base[..., 0], base[..., 1]], axis=2)
    ident = analyse(_sensitivity(jac), ["a", "b", "c"])
    assert ident.unidentified.sum() == 1
    v = ident.null_space[:, 0]
    assert np.abs(v) == pytest.approx([2**-0.5, 2**-0.5, 0.0], abs=1e-9)
    assert v[0] * v[1] < 0
    assert ident.param_unidentified().tolist() == [True, True, False]
    assert np.isfinite(ident.std[~ident.unidentified]).all()
    assert "a" in ident.describe()[0] and "b" in ident.describe()[0]
    # the same with the columns independent: every direction identified
    jac = rng.standard_normal((16, 40, 3))
    assert not analyse(_sensitivity(jac), ["a", "b", "c"]).unidentified.any()


SPEC_MCI = {
    "params": [
        {"name": "mass_kg", "target": "body.mass:pendulum", "nominal": 0.16688,
         "bounds": [0.02, 5.0], "scale": "log"},
        {"name": "com_z_m", "target": "body.com_z:pendulum", "nominal": -0.6124,
         "bounds": [-1.2, -0.15]},
        {"name": "inertia_kg_m2", "target": "body.inertia:pendulum", "nominal": 0.01,
         "bounds": [0.0001, 0.1], "scale": "log"},
        {"name": "damping_Nm_s", "target": "joint.damping:shoulder", "nominal": 0.04707,
         "bounds": [0.0, 0.5]},
    ]
}  # fmt: skip


def test_mass_and_com_pinned_only_as_m_cx_and_J_are_reported_unidentified(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(SPEC_MCI))
    truth = {"mass_kg": 0.3, "com_z_m": -0.6124, "inertia_kg_m2": 0.01, "damping_Nm_s": 0.08}
    path, _ = synth_pendulum_csv(tmp_path / "mci.csv", values=truth,
                                 space=load_param_space(spec))  # fmt: skip
    result = identify(B.name, [path], spec=spec, cfg=fit_config_for(B.name, bootstrap=100),
                      reference=False)  # fmt: skip
    fit = result.fit
    # the one-dof pendulum's dynamics see J = I + m c^2 and m c only: one flat direction
    assert fit.unidentified == ["mass_kg", "com_z_m", "inertia_kg_m2"]
    assert fit.identifiability.unidentified.sum() == 1
    J, mcx = 0.01 + 0.3 * 0.6124**2, 0.3 * 0.6124  # 0.1225 kg m^2, 0.1837 kg m
    assert result.derived["J_kg_m2"] == pytest.approx(J, rel=0.01)
    assert result.derived["m_cx_kg_m"] == pytest.approx(mcx, rel=0.01)
    v = dict(zip(result.space.names, fit.values, strict=True))
    assert v["damping_Nm_s"] == pytest.approx(0.08, abs=0.002)
    # held where the flat direction's coordinate is the nominal's
    free = result.space.free_mask()
    u = result.space.to_unit(fit.values)[free] - result.space.to_unit(result.space.nominal())[free]
    assert abs(fit.identifiability.null_space[:, 0] @ u) < 1e-3
    # reported as such: no std for them, the damping keeps its own
    result.write(tmp_path / "out" / "fitted.xml")
    doc = yaml.safe_load((tmp_path / "out" / "fitted.params.yaml").read_text())
    by = {p["name"]: p for p in doc["params"]}
    assert not by["mass_kg"]["identified"] and "std" not in by["mass_kg"]
    assert by["damping_Nm_s"]["identified"] and by["damping_Nm_s"]["std"] < 0.01
    assert "unidentified direction" in doc["unidentified_directions"][0]
    assert any("unidentified" in line for line in result.summary_lines())
