"""A small model with one of every element kind the parameter handles address."""

import mujoco
import pytest

TOY = """
<mujoco model="toy">
  <option timestep="0.002" integrator="implicitfast"/>
  <worldbody>
    <body name="upper">
      <joint name="shoulder" type="hinge" axis="0 1 0" damping="0.1" armature="0.01"
             frictionloss="0.05" stiffness="0.2"/>
      <inertial pos="0 0 -0.3" mass="1.0" diaginertia="0.01 0.02 0.03"/>
      <geom name="g_upper" type="capsule" fromto="0 0 0 0 0 -0.3" size="0.02" mass="0"
            contype="0" conaffinity="0" friction="0.8 0.005 0.0001"/>
      <body name="lower" pos="0 0 -0.3">
        <joint name="elbow" type="hinge" axis="0 1 0"/>
        <inertial pos="0 0 -0.2" mass="0.5" diaginertia="0.004 0.004 0.004"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor name="shoulder_motor" joint="shoulder" ctrlrange="-5 5" ctrllimited="true"/>
    <position name="elbow_servo" joint="elbow" kp="2.0" forcerange="-1 1" forcelimited="true"/>
  </actuator>
</mujoco>
"""


@pytest.fixture()
def toy_xml(tmp_path):
    path = tmp_path / "toy.xml"
    path.write_text(TOY)
    return path


@pytest.fixture()
def toy_model():
    return mujoco.MjModel.from_xml_string(TOY)
