"""MJCF of one body on one joint along z, its centre of mass on the axis, driven by a motor:
the smallest model with a known equation of motion, (inertia_z + armature) qdd = u - damping
qd for a hinge (mass for a slide). MuJoCo marks such a body "simple" (a constant diagonal
mass matrix)."""

from __future__ import annotations


def one_body_xml(
    joint: str = "hinge",
    *,
    mass: float = 1.0,
    inertia: tuple[float, float, float] = (0.03, 0.03, 0.02),
    armature: float = 0.01,
    damping: float = 0.1,
    timestep: float = 0.002,
    integrator: str = "Euler",
) -> str:
    """Body ``b`` on joint ``j`` (``hinge`` or ``slide``), motor ``m``."""
    ixx, iyy, izz = inertia
    return f"""
<mujoco>
  <option timestep="{timestep}" integrator="{integrator}"/>
  <worldbody>
    <body name="b">
      <joint name="j" type="{joint}" axis="0 0 1" armature="{armature}" damping="{damping}"/>
      <inertial pos="0 0 0" mass="{mass}" diaginertia="{ixx} {iyy} {izz}"/>
    </body>
  </worldbody>
  <actuator><motor name="m" joint="j"/></actuator>
</mujoco>"""
