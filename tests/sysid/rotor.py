"""A rotor driven by a motor about a vertical axis (no gravity torque): (I + armature) qdd =
u - damping qd. Its log is simulated here with plain ``mj_step`` at the true values, so what
the identification code computes can be compared with the truth and with an independent
simulation."""

from __future__ import annotations

import mujoco
import numpy as np
from sim.one_body import one_body_xml

from sim2real.params.space import Param, ParamSpace
from sim2real.sim.logs import RobotLog
from sim2real.sim.model import sim_model_from_xml

DT = 0.002
TRUTH = {"damping": 0.08, "armature": 0.01}


def rotor_xml(damping: float = TRUTH["damping"], armature: float = TRUTH["armature"]) -> str:
    return one_body_xml(
        damping=damping, armature=armature, inertia=(0.02, 0.02, 0.02), timestep=DT,
        integrator="RK4",
    )  # fmt: skip


def rotor_sim():
    return sim_model_from_xml(rotor_xml())


def rotor_space(damping: float = 0.2, armature: float = 0.002) -> ParamSpace:
    """damping and armature free, at nominal values away from the truth."""
    return ParamSpace(
        params=[
            Param(name="damping", target="joint.damping:j", nominal=damping, bounds=(0.0, 0.5)),
            Param(name="armature", target="joint.armature:j", nominal=armature, bounds=(0.0, 0.05)),
        ]
    )


def controls(n: int) -> np.ndarray:
    t = np.arange(n) * DT
    return 0.3 * np.sin(2 * np.pi * 0.7 * t) + 0.2 * np.sin(2 * np.pi * 1.9 * t + 1.0)


def simulate(xml: str, u: np.ndarray, q0: float = 0.0, v0: float = 0.0, coulomb_Nm: float = 0.0):
    """(qpos, qvel) at each sample: state k, then u[k] is applied for one step, with a smooth
    Coulomb torque -Fc (2/pi) atan(qd / 0.01 rad/s) from the step's starting velocity."""
    model = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(model)
    d.qpos[0], d.qvel[0] = q0, v0
    q, v = np.empty(len(u)), np.empty(len(u))
    for k, uk in enumerate(u):
        q[k], v[k] = d.qpos[0], d.qvel[0]
        d.ctrl[0] = uk
        d.qfrc_applied[0] = -coulomb_Nm * 2 / np.pi * np.arctan(d.qvel[0] / 0.01)
        mujoco.mj_step(model, d)
    return q, v


def rotor_log(seconds: float = 4.0, coulomb_Nm: float = 0.0) -> RobotLog:
    n = round(seconds / DT)
    u = controls(n)
    q, v = simulate(rotor_xml(), u, coulomb_Nm=coulomb_Nm)
    t = np.arange(n) * DT
    return RobotLog("rotor.csv", t, q[:, None], v[:, None], u[:, None], ["j"], ["m"],
                    np.ones(n, bool), dt_s=DT)  # fmt: skip
