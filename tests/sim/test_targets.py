"""Each parameter handle writes what it should into MuJoCo's own model fields."""

import mujoco
import numpy as np
import pytest

from sim2real.core.errors import InputError
from sim2real.sim.extra import ExtraTerms
from sim2real.sim.targets import resolve_target


def bid(m, n):
    return mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, n)


def jid(m, n):
    return mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, n)


def aid(m, n):
    return mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_ACTUATOR, n)


def apply(m, target, value):
    e = ExtraTerms(m.nv)
    resolve_target(m, target).apply(m, e, value)
    return e


@pytest.mark.parametrize(
    ("target", "value", "field"),
    [
        ("body.mass:upper", 2.5, lambda m: m.body_mass[bid(m, "upper")]),
        ("body.inertia:lower", 0.05, lambda m: m.body_inertia[bid(m, "lower")].tolist()),
        ("body.inertia_y:upper", 0.07, lambda m: m.body_inertia[bid(m, "upper"), 1]),
        ("body.com_z:upper", -0.25, lambda m: m.body_ipos[bid(m, "upper"), 2]),
        ("body.com_x:lower", 0.01, lambda m: m.body_ipos[bid(m, "lower"), 0]),
        ("body.com_y:lower", 0.02, lambda m: m.body_ipos[bid(m, "lower"), 1]),
        ("body.inertia_x:upper", 0.05, lambda m: m.body_inertia[bid(m, "upper"), 0]),
        ("body.inertia_z:upper", 0.06, lambda m: m.body_inertia[bid(m, "upper"), 2]),
        ("joint.damping:shoulder", 0.3, lambda m: m.dof_damping[m.jnt_dofadr[jid(m, "shoulder")]]),
        ("joint.armature:elbow", 0.02, lambda m: m.dof_armature[m.jnt_dofadr[jid(m, "elbow")]]),
        ("joint.frictionloss:elbow", 0.4, lambda m: m.dof_frictionloss[m.jnt_dofadr[jid(m, "elbow")]]),
        ("joint.stiffness:shoulder", 1.5, lambda m: m.jnt_stiffness[jid(m, "shoulder")]),
        ("geom.friction:g_upper", 0.3, lambda m: m.geom_friction[0, 0]),
        ("actuator.gain:shoulder_motor", 3.0, lambda m: m.actuator_gainprm[aid(m, "shoulder_motor"), 0]),
        ("actuator.bias:shoulder_motor", -0.2, lambda m: m.actuator_biasprm[aid(m, "shoulder_motor"), 0]),
        ("actuator.bias_vel:shoulder_motor", -0.4, lambda m: m.actuator_biasprm[aid(m, "shoulder_motor"), 2]),
        ("actuator.ctrl_limit:shoulder_motor", 2.0, lambda m: m.actuator_ctrlrange[aid(m, "shoulder_motor")].tolist()),
        ("actuator.force_limit:elbow_servo", 0.5, lambda m: m.actuator_forcerange[aid(m, "elbow_servo")].tolist()),
        ("option.gravity", 3.7, lambda m: m.opt.gravity.tolist()),
        ("option.timestep", 0.001, lambda m: m.opt.timestep),
    ],
)  # fmt: skip
def test_handle_writes_the_mujoco_field(toy_model, target, value, field):
    before = np.copy(field(toy_model))
    apply(toy_model, target, value)
    after = field(toy_model)
    expected = {
        "body.inertia:lower": [value] * 3,
        "actuator.ctrl_limit:shoulder_motor": [-value, value],
        "actuator.force_limit:elbow_servo": [-value, value],
        "option.gravity": [0.0, 0.0, -value],
    }.get(target, value)
    assert np.allclose(after, expected)
    assert not np.allclose(before, after)


def test_inertia_scale_and_servo_gain(toy_model):
    m = toy_model
    apply(m, "body.inertia_scale:upper", 2.0)
    assert np.allclose(m.body_inertia[bid(m, "upper")], [0.02, 0.04, 0.06])
    # a position servo's bias mirrors its gain: force = kp (ctrl - q) stays a servo
    a = aid(m, "elbow_servo")
    apply(m, "actuator.gain:elbow_servo", 5.0)
    assert m.actuator_gainprm[a, 0] == 5.0 and m.actuator_biasprm[a, 1] == -5.0


def test_bias_turns_a_motor_affine(toy_model):
    m = toy_model
    a = aid(m, "shoulder_motor")
    assert m.actuator_biastype[a] == mujoco.mjtBias.mjBIAS_NONE
    apply(m, "actuator.bias:shoulder_motor", 0.3)
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    assert d.actuator_force[a] == pytest.approx(0.3)  # ctrl 0 -> the bias alone


def test_extra_terms_and_patterns(toy_model):
    m = toy_model
    e = apply(m, "extra.coulomb:*", 0.25)  # both joints
    assert e.coulomb_Nm.tolist() == [0.25, 0.25]
    e = apply(m, "extra.delay_s", 0.01)
    assert e.delay_s == 0.01
    e = apply(m, "extra.offset:elbow", -0.1)
    assert e.offset_Nm.tolist() == [0.0, -0.1]


@pytest.mark.parametrize(
    ("target", "needles"),
    [
        ("body.mass:uper", ["no body named 'uper'", "close matches: upper"]),
        ("joint.damping:elbw", ["no joint named 'elbw'", "elbow"]),
        ("body.masss:upper", ["unknown target field", "body.mass"]),
        ("joint.damping", ["needs a name pattern"]),
    ],
)
def test_unknown_names_list_close_matches(toy_model, target, needles):
    with pytest.raises(InputError) as err:
        resolve_target(toy_model, target, "spec.yaml")
    for needle in needles:
        assert needle in str(err.value)
