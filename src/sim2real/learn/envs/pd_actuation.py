"""Joint position targets through batched motor models (the action manager of a legged task):
the targets go through the same delay line as torques (:class:`Actuation`, at substep
resolution), then at every physics substep the motors' torques are computed in numpy for the
whole batch from the batch's joint states (:class:`~sim2real.actuators.joint_motors.JointMotors`:
PD, torque-speed envelope, strength, friction) and the batch advances by one substep in one
``mujoco.rollout`` call (the torques as ``ctrl`` of the model's torque motors). No Python loop
over environments: per control step, ``nsub`` rollout calls of one step each."""

from __future__ import annotations

import numpy as np

from sim2real.actuators.joint_motors import JointMotors
from sim2real.learn.envs.actuation import Actuation
from sim2real.sim.vecstep import BatchExtras, VecStepper


class PDActuation(Actuation):
    """Delay line and motors of ``stepper.num`` environments for the joints ``act``."""

    def __init__(
        self,
        stepper: VecStepper,
        act: tuple[np.ndarray, np.ndarray, np.ndarray],
        nsub: int,
        timestep: float,
        max_delay_s: float,
        motors: JointMotors,
    ) -> None:
        super().__init__(stepper, act, nsub, timestep, max_delay_s, None, {})
        self.runtime = motors  # saved and restored with the environment's state (networks)
        self.last_torque = np.zeros((self.num_envs, len(self.act_index)))
        self._ctrl = np.zeros((self.num_envs, 1, stepper.nu))

    @property
    def motors(self) -> JointMotors:
        return self.runtime

    def armature(self, actuator_values: dict[str, np.ndarray]) -> np.ndarray:
        """(N, J) reflected rotor inertia of the motors under their (randomized) values."""
        self.motors.update(actuator_values)
        return np.broadcast_to(self.motors.armature(), (self.num_envs, len(self.act_dof)))

    def reset_rows(self, rows: np.ndarray) -> None:
        super().reset_rows(rows)
        self.last_torque[rows] = 0.0

    def step(self, command: np.ndarray, qfrc: np.ndarray, extras: BatchExtras) -> None:
        """One control step toward the joint targets ``command`` (N, J) [rad] under the
        external forces ``qfrc`` (N, nsub, nv); ``last_torque`` is the last substep's."""
        targets = self.delayed(command)
        st, ctrl = self.stepper, self._ctrl
        for k in range(self.nsub):
            qvel = st.qvel
            tau = self.motors.torque(
                targets[:, k], st.qpos[:, self.act_qadr], qvel[:, self.act_dof]
            )
            ctrl[:, 0, self.act_index] = tau
            f = qfrc[:, k : k + 1]
            if self.friction:
                f = f + extras.friction_torque(qvel)[:, None]
            st.step(ctrl, f, None, states=False)
        self.last_torque = tau
