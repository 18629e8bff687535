"""The MuJoCo wrapper (``sim.model``): joints and actuators by name, values written and read
back, the sidecar, and a written mass, inertia or armature acting in the simulation also on
bodies MuJoCo treats as "simple" (a cart on a slider, a rotor about its centre of mass), each
checked against a model compiled with that value in its XML."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
import yaml
from sim.one_body import one_body_xml

from sim2real.core.errors import InputError
from sim2real.params.space import Param, ParamSpace
from sim2real.sim.model import (
    SIDECAR_SUFFIX,
    ensure_actuators,
    load_sim_model,
    sim_model_from_xml,
)


def body_on(joint: str, mass: float = 1.0, armature: float = 0.01, izz: float = 0.02) -> str:
    """A simple body (see ``one_body``) on a ``joint`` (hinge or slide)."""
    return one_body_xml(joint, mass=mass, armature=armature, inertia=(0.03, 0.03, izz))


def trajectory(model: mujoco.MjModel, steps: int = 200) -> np.ndarray:
    d = mujoco.MjData(model)
    out = np.empty(steps)
    for k in range(steps):
        d.ctrl[0] = np.sin(0.05 * k)
        mujoco.mj_step(model, d)
        out[k] = d.qpos[0]
    return out


def space_of(name: str, target: str, nominal: float, bounds: tuple[float, float]) -> ParamSpace:
    return ParamSpace(params=[Param(name=name, target=target, nominal=nominal, bounds=bounds)])


@pytest.mark.parametrize(
    ("joint", "target", "value", "compiled"),
    [
        ("slide", "body.mass:b", 3.0, {"mass": 3.0}),
        ("hinge", "joint.armature:j", 0.05, {"armature": 0.05}),
        ("hinge", "body.inertia_z:b", 0.05, {"izz": 0.05}),
    ],
)
def test_a_written_value_acts_on_a_simple_body(joint, target, value, compiled):
    # MuJoCo caches a simple body's mass matrix when compiling (dof_M0): without refreshing
    # it, the cart keeps moving as if its mass were 1 kg (1.5 m off after 0.4 s here)
    sim = sim_model_from_xml(body_on(joint))
    assert sim.model.dof_simplenum.any()  # the case at hand
    model, _ = sim.instantiate(space_of("p", target, value, (0.001, 10.0)), [value])
    expected = trajectory(mujoco.MjModel.from_xml_string(body_on(joint, **compiled)))
    assert trajectory(model) == pytest.approx(expected, abs=1e-12)
    assert np.abs(expected - trajectory(sim.model)).max() > 1e-3  # the value matters


def test_writing_again_into_a_used_copy_is_exact():
    # the batched simulation writes each parameter set into pooled copies: absolute values
    sim = sim_model_from_xml(body_on("slide"))
    space = space_of("mass_kg", "body.mass:b", 1.0, (0.1, 10.0))
    model, extras = sim.instantiate(space, [5.0])
    handles = sim.resolve(space)
    sim.apply(model, extras, handles, [2.0])
    expected = trajectory(mujoco.MjModel.from_xml_string(body_on("slide", mass=2.0)))
    assert trajectory(model) == pytest.approx(expected, abs=1e-12)
    assert sim.read(space, model) == pytest.approx([2.0])
    assert sim.read(space) == pytest.approx([1.0])  # the base model is untouched


def test_joints_and_actuators_by_name():
    sim = sim_model_from_xml(body_on("hinge"))
    assert sim.joint_index("j") == (0, 0)
    assert sim.actuator_index("m") == 0
    assert sim.dof_names == ["j"]
    with pytest.raises(InputError, match=r"log\.csv: jj: no hinge or slide joint 'jj'.*close"):
        sim.joint_index("jj", "log.csv")
    with pytest.raises(InputError, match="no actuator 'motor'"):
        sim.actuator_index("motor")


def test_missing_actuators_are_added_as_torque_motors():
    spec = mujoco.MjSpec.from_string(body_on("hinge").replace('<motor name="m" joint="j"/>', ""))
    assert ensure_actuators(spec, ["j", "nonexistent"]) == ["j"]
    model = spec.compile()
    assert model.nu == 1 and model.actuator_gainprm[0, 0] == 1.0
    # torque = ctrl: 1 N m on 0.02 + 0.01 kg m^2 (inertia + armature) from rest
    d = mujoco.MjData(model)
    d.ctrl[0] = 1.0
    mujoco.mj_forward(model, d)
    assert d.qacc[0] == pytest.approx(1.0 / 0.03)
    assert ensure_actuators(spec, ["j"]) == []  # already driven


def test_sidecar_restores_exact_terms(tmp_path):
    path = tmp_path / "cart.xml"
    path.write_text(body_on("slide"))
    plain = load_sim_model(path)
    assert plain.extras.coulomb_Nm.tolist() == [0.0] and plain.notes == []
    sidecar = {
        "native": {"body.mass:b": 2.5},
        "extras": {"coulomb_Nm": {"j": 0.3}, "delay_s": 0.004},
    }
    (tmp_path / f"cart{SIDECAR_SUFFIX}").write_text(yaml.safe_dump(sidecar))
    sim = load_sim_model(path)
    assert sim.extras.coulomb_Nm.tolist() == [0.3] and sim.extras.delay_s == 0.004
    assert sim.model.body_mass[1] == 2.5
    # the mass written by the sidecar acts, simple body or not
    expected = trajectory(mujoco.MjModel.from_xml_string(body_on("slide", mass=2.5)))
    assert trajectory(sim.model) == pytest.approx(expected, abs=1e-12)
    assert any("sidecar" in n for n in sim.notes)


def test_missing_or_broken_files_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="model file not found"):
        load_sim_model(tmp_path / "none.xml")
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody><body>")
    with pytest.raises(InputError, match="could not read"):
        load_sim_model(bad)
