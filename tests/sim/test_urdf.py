"""URDF through MuJoCo's compiler: torque actuators added for the driven joints, handles work;
a model read under other names (a task's), what refers to its elements following."""

import mujoco
import pytest
import yaml

from sim2real.core.errors import InputError
from sim2real.params.space import Param, ParamSpace
from sim2real.sim.model import load_sim_model
from sim2real.sim.names import NameMap

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


TWO_NAMES = """<mujoco>
  <worldbody>
    <body name="B1"><joint name="J1" type="hinge" axis="0 1 0" damping="0.3"/>
      <inertial pos="0 0 -0.3" mass="0.5" diaginertia="0.001 0.001 0.001"/>
      <body name="B2" pos="0 0 -0.3"><joint name="J2" type="hinge" axis="0 1 0"/>
        <inertial pos="0 0 -0.2" mass="0.4" diaginertia="0.001 0.001 0.001"/></body></body>
  </worldbody>
  <contact><exclude body1="B1" body2="B2"/></contact>
  <equality><joint joint1="J2" joint2="J1" active="false"/></equality>
  <actuator><motor name="J1" joint="J1"/><motor name="motor2" joint="J2"/></actuator>
  <sensor><jointpos name="p1" joint="J1"/><actuatorfrc name="f2" actuator="motor2"/>
    <framepos name="x2" objtype="body" objname="B2"/></sensor>
</mujoco>"""


def test_a_model_read_under_other_names_keeps_what_refers_to_them(tmp_path):
    """A task reads 'shoulder' where a robot's file says 'J1': the elements are renamed, and the
    actuators, sensors, couplings and excludes that named them follow (MuJoCo's spec does not:
    'unknown transmission target')."""
    path = tmp_path / "two.xml"
    path.write_text(TWO_NAMES)
    names = NameMap({"shoulder": "J1", "elbow": "J2"}, {"link1": "B1", "link2": "B2"}, "w.yaml")
    sim = load_sim_model(path, names=names)
    m = sim.model
    assert [m.joint(i).name for i in range(m.njnt)] == ["shoulder", "elbow"]
    assert m.body("link2").mass[0] == pytest.approx(0.4)
    assert m.dof_damping[m.joint("shoulder").dofadr[0]] == pytest.approx(0.3)
    # a joint's one actuator is named as the joint (the tasks find it so), its sensor follows
    assert [m.actuator(i).name for i in range(m.nu)] == ["shoulder", "elbow"]
    assert list(m.actuator_trnid[:, 0]) == [m.joint("shoulder").id, m.joint("elbow").id]
    assert m.sensor("f2").objid[0] == m.actuator("elbow").id
    assert m.sensor("x2").objid[0] == m.body("link2").id
    assert m.sensor("p1").objid[0] == m.joint("shoulder").id
    assert any("shoulder (J1)" in note for note in sim.notes)


def test_a_name_map_that_does_not_fit_the_model_names_the_field(tmp_path):
    path = tmp_path / "two.xml"
    path.write_text(TWO_NAMES)
    with pytest.raises(InputError) as err:
        load_sim_model(path, names=NameMap({"shoulder": "J3"}, source="w.yaml"))
    assert (err.value.source, err.value.field) == ("w.yaml", "joint_names.shoulder")
    assert "no joint 'J3'" in err.value.message and "the model's joints: J1, J2" in str(err.value)
    with pytest.raises(InputError, match="'J1' is already read as 'shoulder'"):
        load_sim_model(path, names=NameMap({"shoulder": "J1", "elbow": "J1"}))
    with pytest.raises(InputError, match="another body named 'B2'") as err:
        load_sim_model(path, names=NameMap(bodies={"B2": "B1"}))
    assert err.value.field == "body_names.B2"


def test_a_urdf_joint_read_under_the_task_name_gets_its_actuator_so_named(tmp_path):
    """A URDF has no actuators: the one added for a driven joint takes the name it is read by."""
    path = tmp_path / "arm.urdf"
    path.write_text(URDF)
    sim = load_sim_model(path, drive_joints=["shoulder"], names=NameMap({"shoulder": "hinge"}))
    m = sim.model
    assert m.nu == 1 and m.actuator(0).name == "shoulder"
    assert m.actuator_trnid[0, 0] == m.joint("shoulder").id
    assert m.dof_frictionloss[0] == pytest.approx(0.1)  # the URDF's <dynamics>, kept


def test_a_fitted_models_sidecar_in_its_own_names_applies_under_the_map(tmp_path):
    """A sysid sidecar names the model's own joints and bodies: read under a map, its exact
    terms were dropped without a word (no joint 'J1' among the dofs) or failed the target."""
    path = tmp_path / "fit.xml"
    path.write_text(TWO_NAMES)
    sidecar = {"native": {"body.mass:B2": 0.45, "joint.damping:J1": 0.2},
               "extras": {"coulomb_Nm": {"J1": 0.3}, "delay_s": 0.004}}  # fmt: skip
    (tmp_path / "fit.sidecar.yaml").write_text(yaml.safe_dump(sidecar))
    names = NameMap({"shoulder": "J1", "elbow": "J2"}, {"link2": "B2"})
    sim = load_sim_model(path, names=names)
    assert sim.model.body("link2").mass[0] == pytest.approx(0.45)
    assert sim.model.dof_damping[0] == pytest.approx(0.2)
    assert sim.extras.coulomb_Nm.tolist() == [0.3, 0.0] and sim.extras.delay_s == 0.004
