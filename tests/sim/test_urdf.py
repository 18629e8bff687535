"""URDF through MuJoCo's compiler: torque actuators added for the driven joints, handles work."""

import mujoco
import pytest

from sim2real.core.errors import InputError
from sim2real.params.space import Param, ParamSpace
from sim2real.sim.model import load_sim_model

URDF = """<robot name="arm">
  <link name="base"/>
  <link name="arm">
    <inertial><origin xyz="0 0 -0.4"/><mass value="0.7"/>
      <inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="hinge" type="continuous"><parent link="base"/><child link="arm"/>
    <axis xyz="0 1 0"/><dynamics damping="0.02" friction="0.1"/></joint>
</robot>"""


def test_urdf_loads_with_a_torque_actuator(tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_text(URDF)
    sim = load_sim_model(path, drive_joints=["hinge"])
    m = sim.model
    assert m.nu == 1 and mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_ACTUATOR, 0) == "hinge"
    assert m.actuator_gainprm[0, 0] == 1.0 and m.actuator_gear[0, 0] == 1.0
    assert m.dof_damping[0] == pytest.approx(0.02)  # URDF <dynamics> kept
    assert m.dof_frictionloss[0] == pytest.approx(0.1)
    space = ParamSpace(
        params=[Param(name="m", target="body.mass:arm", nominal=0.7, bounds=(0.1, 2))]
    )
    model, _ = sim.instantiate(space, [1.3])
    assert model.body("arm").mass[0] == pytest.approx(1.3)


def test_a_urdf_link_on_a_fixed_joint_keeps_its_name_and_a_dropped_gear_is_said(tmp_path):
    """MuJoCo fused a link on a fixed joint into its parent (a spec naming it failed: 'no body
    named bob'), and drops <transmission> silently (a gear of 6 fitted a sixth of the torque)."""
    bob = """<link name="bob"><inertial><mass value="0.3"/>
      <inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="bob_fix" type="fixed"><parent link="arm"/><child link="bob"/>
    <origin xyz="0 0 -0.5"/></joint>
  <transmission name="t"><joint name="hinge"/>
    <actuator name="a"><mechanicalReduction>1.0</mechanicalReduction></actuator>
    <actuator name="m"><mechanicalReduction>6</mechanicalReduction></actuator></transmission>
</robot>"""
    path = tmp_path / "arm.urdf"
    path.write_text(URDF.replace("</robot>", bob))
    with pytest.warns(UserWarning, match="mechanicalReduction 6 is not applied"):
        sim = load_sim_model(path, drive_joints=["hinge"])
    space = ParamSpace(
        params=[Param(name="m", target="body.mass:bob", nominal=0.3, bounds=(0.1, 2))]
    )
    model, _ = sim.instantiate(space, [0.5])
    assert model.body("bob").mass[0] == pytest.approx(0.5)


def test_broken_model_file_is_one_input_error(tmp_path):
    path = tmp_path / "bad.xml"
    path.write_text("<mujoco><worldbody><body><joint type='hinge'/></body></worldbody>")
    with pytest.raises(InputError, match="MuJoCo could not read"):
        load_sim_model(path)
