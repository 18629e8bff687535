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


WELDED = """<robot name="ros">
  <joint name="base_weld" type="fixed"><parent link="world"/><child link="base"/>
    <origin xyz="0 0 1.2"/></joint>
  <link name="base">
    <collision><geometry><mesh filename="package://arm/meshes/base.stl"/></geometry></collision>
  </link>
  <link name="arm">
    <inertial><origin xyz="0 0 -0.4"/><mass value="0.7"/>
      <inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><mesh filename="meshes/arm.stl"/></geometry></collision>
  </link>
  <joint name="hinge" type="continuous"><parent link="base"/><child link="arm"/>
    <axis xyz="0 1 0"/></joint>
</robot>"""


def test_an_undeclared_world_link_welds_the_base_and_missing_meshes_are_dropped(tmp_path):
    """The ROS pattern (a fixed joint from an undeclared 'world') failed: 'URDF joint parent or
    child missing'; and a mesh file not shipped failed the compile ('Error opening file')."""
    path = tmp_path / "ros.urdf"
    path.write_text(WELDED)
    with pytest.warns(UserWarning, match="package://arm/meshes/base.stl, meshes/arm.stl"):
        sim = load_sim_model(path, drive_joints=["hinge"])
    m = sim.model
    assert m.njnt == 1 and m.jnt_type[0] == mujoco.mjtJoint.mjJNT_HINGE  # no free base joint
    assert m.ngeom == 0 and m.body("arm").mass[0] == pytest.approx(0.7)
    assert m.body("base").pos == pytest.approx([0, 0, 1.2])  # the weld's origin kept
    assert any("'world' is not declared" in note for note in sim.notes)


def test_a_misspelt_parent_link_is_still_an_error(tmp_path):
    # 'bsae' is not the world: 'base' would be a second root, so MuJoCo's error stands
    path = tmp_path / "typo.urdf"
    path.write_text(URDF.replace('<parent link="base"/>', '<parent link="bsae"/>'))
    with pytest.raises(InputError, match="parent or child missing"):
        load_sim_model(path)


def test_dfki_pendubot_urdf_loads_with_its_masses(real_data):
    """The DFKI double pendulum's identified URDF (undeclared world, meshes not shipped)."""
    path = real_data / "double-pendulum-dfki/identified/model_2.1/pendubot.urdf"
    sim = load_sim_model(path, drive_joints=["Joint1", "Joint2"])
    m = sim.model
    assert list(m.jnt_type) == [mujoco.mjtJoint.mjJNT_HINGE] * 2 and m.nu == 2
    masses = {name: m.body(name).mass[0] for name in ("base_link", "Link1", "Link2")}
    assert masses == pytest.approx(
        {"base_link": 1.0806, "Link1": 0.55938, "Link2": 0.60435}, abs=1e-5
    )
