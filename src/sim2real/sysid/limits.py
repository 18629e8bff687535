"""Logged torques the model cannot apply: a joint's force limit (a URDF's ``effort``) below
what the robot was logged doing clips the simulated torque, and a fit bends its physics to
make up for it (a 0.5 N m effort clipped 36 % of an elbow's samples: the mass came out 0.38 kg
for 0.61, with no word)."""

from __future__ import annotations

import mujoco
import numpy as np

from sim2real.sim.logs import RobotLog
from sim2real.sim.model import SimModel
from sim2real.sysid.outputs import is_torque_actuator

SAID_ABOVE = 0.01
"""A share of samples beyond the limit above which it is said."""


def clipped_torque_notes(sim: SimModel, logs: list[RobotLog]) -> list[str]:
    """One note per direct torque actuator whose logged commands exceed its joint's force limit
    in more than ``SAID_ABOVE`` of the samples."""
    m = sim.model
    notes = []
    for a in range(m.nu):
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_ACTUATOR, a)
        joint = int(m.actuator_trnid[a, 0])
        if not is_torque_actuator(m, a) or not m.jnt_actfrclimited[joint]:
            continue
        scale = m.actuator_gainprm[a, 0] * m.actuator_gear[a, 0]
        torque = np.concatenate(
            [
                scale * log.ctrl[:, log.actuators.index(name)]
                for log in logs
                if name in log.actuators
            ]
            or [np.zeros(0)]
        )
        lo, hi = m.jnt_actfrcrange[joint]
        beyond = float(np.mean((torque < lo) | (torque > hi))) if torque.size else 0.0
        if beyond > SAID_ABOVE:
            joint_name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, joint)
            notes.append(
                f"{100 * beyond:.0f} % of the logged {name} torques lie beyond joint "
                f"{joint_name}'s force limit {lo:g}..{hi:g} N m (a URDF's effort?): the "
                "simulation clips them and the fit bends the physics to match; raise the limit"
            )
    return notes
