"""An actuator model inside the MuJoCo loop: each step, the actuator's torque on one joint
is computed from the joint's state and applied as a generalised force (``qfrc_applied``),
with the joint's external torque ``-qfrc_bias`` (gravity, Coriolis) and its inertia (the
diagonal of the mass matrix, armature included) passed in the actuator state.

The joint's own damping, frictionloss and position actuator should be off (the model's
friction and controller replace them); :func:`attach` zeroes them and sets the armature.
Imports MuJoCo lazily (the module is imported by the CLI only inside commands).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sim2real.actuators.models import ActuatorState


class MujocoActuatorLoop:
    """Drive joint ``joint`` of ``(model, data)`` with runtime actuator ``act``."""

    def __init__(self, model: Any, data: Any, joint: str, act: Any, kp_fw: float, vin_V: float):
        import mujoco

        self.mj = mujoco
        self.model, self.data, self.act = model, data, act
        jid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, joint)
        if jid < 0:
            raise KeyError(f"no joint {joint!r} in the model")
        self.dof = int(model.jnt_dofadr[jid])
        self.qpos = int(model.jnt_qposadr[jid])
        self._dense = np.zeros((model.nv, model.nv))
        self.state = ActuatorState(dt_s=float(model.opt.timestep), kp_fw=kp_fw, vin_V=vin_V)

    def attach(self) -> None:
        """Turn the joint's passive terms and actuators off; set the actuator's armature."""
        from sim2real.sim.model import refresh_simple_bodies

        m = self.model
        m.dof_damping[self.dof] = 0.0
        m.dof_frictionloss[self.dof] = 0.0
        m.dof_armature[self.dof] = float(self.act.armature_kgm2)
        m.actuator_gainprm[:] = 0.0
        m.actuator_biasprm[:] = 0.0
        refresh_simple_bodies(m)  # else a rotor on its own axis keeps its compiled armature

    def step(self, command: float, enabled: bool = True) -> float:
        """One ``mj_step`` with the actuator's torque for ``command``; returns the torque."""
        m, d = self.model, self.data
        self.mj.mj_forward(m, d)
        self.state.tau_ext_Nm = -float(d.qfrc_bias[self.dof])
        self.mj.mj_fullM(m, d, self._dense)
        self.state.inertia_kgm2 = float(self._dense[self.dof, self.dof])
        self.state.enabled = enabled
        tau = float(self.act.torque(command, d.qpos[self.qpos], d.qvel[self.dof], self.state))
        d.qfrc_applied[self.dof] = tau
        self.mj.mj_step(m, d)
        return tau
