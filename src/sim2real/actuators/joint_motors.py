"""Electric joint motors of a legged robot, batched over environments and joints: the position
servo a quadruped's motor driver runs (Isaac Lab's and mjlab's ``DCMotor``), in numpy.

Per joint, with target ``q*`` [rad], position ``q`` [rad] and speed ``qd`` [rad/s]:

- PD on the joint: ``tau_pd = kp (q* - q) - kd qd`` [N m];
- torque-speed envelope of the motor (the back-EMF line through the peak torque ``tau_max``
  at rest and zero torque at ``v_max``, capped at ``tau_max``):
  ``tau_hi = clip(tau_max (1 - qd / v_max), 0, tau_max)``,
  ``tau_lo = clip(tau_max (-1 - qd / v_max), -tau_max, 0)``, ``tau = clip(tau_pd, tau_lo, tau_hi)``;
- motor strength: a factor on the delivered torque (a weaker or stronger unit than nominal);
- friction of the drive: smooth Coulomb ``c (2/pi) atan(qd / v_s)`` and viscous ``b qd``
  against the motion (:func:`sim2real.sim.friction.smooth_friction_torque`);
- reflected rotor inertia as armature: ``I_rotor * gear^2`` [kg m^2], added to the joint by
  the simulator;
- or, on the joints a learned actuator network is given for (``actuator fit --model net``,
  Hwangbo et al.'s history of position errors and speeds), the network's torque instead of
  the PD, envelope and friction (strength still applies; the armature is its bench's).

:class:`JointMotorsConfig` holds the motor types by joint pattern and the shared parameters
(their names are what randomization targets: ``actuator.strength``...);
:meth:`JointMotorsConfig.build` resolves them for a robot's joints into :class:`JointMotors`.
"""

from __future__ import annotations

import fnmatch
from typing import Any

import numpy as np
from pydantic import Field

from sim2real.core.errors import InputError
from sim2real.core.strict import StrictModel
from sim2real.params.space import Param, ParamSpace
from sim2real.sim.friction import smooth_friction_torque


class MotorType(StrictModel):
    """One motor and gearbox with the gains its driver runs."""

    tau_max_Nm: float = Field(..., gt=0, description="peak torque at the joint [N m]")
    v_max_rad_s: float = Field(..., gt=0, description="joint speed of zero torque [rad/s]")
    gear_ratio: float = Field(..., gt=0, description="gearbox ratio (rotor turns per joint turn)")
    kp_Nm_rad: float = Field(..., ge=0, description="position gain of the driver [N m/rad]")
    kd_Nms_rad: float = Field(..., ge=0, description="velocity gain of the driver [N m s/rad]")


SHARED = {  # name: (lower, upper, description)
    "rotor_inertia_kgm2": (0.0, 1e-2, "rotor inertia (armature = it x gear ratio^2) [kg m^2]"),
    "strength": (0.0, 3.0, "factor on the delivered torque [-]"),
    "coulomb_Nm": (0.0, 5.0, "Coulomb friction of the drive at the joint [N m]"),
    "viscous_Nms_rad": (0.0, 2.0, "viscous friction of the drive at the joint [N m s/rad]"),
}


class JointMotorsConfig(StrictModel):
    """The motors of a robot: a type per joint pattern (fnmatch, first match wins) and the
    parameters every motor shares (randomizable as ``actuator.<name>``)."""

    types: dict[str, MotorType] = Field(..., description="motor type by joint name pattern")
    rotor_inertia_kgm2: float = Field(
        ..., ge=0, description="rotor inertia; reflected to the joint as it x gear^2 [kg m^2]"
    )
    strength: float = Field(1.0, gt=0, description="factor on the delivered torque [-]")
    coulomb_Nm: float = Field(0.0, ge=0, description="Coulomb friction of the drive [N m]")
    viscous_Nms_rad: float = Field(0.0, ge=0, description="viscous friction [N m s/rad]")
    smooth_vel_rad_s: float = Field(
        0.05, gt=0, description="speed scale of the smooth Coulomb sign [rad/s]"
    )

    def param_space(self) -> ParamSpace:
        return ParamSpace(
            params=[
                Param(
                    name=n,
                    target=f"actuator.{n}",
                    nominal=float(getattr(self, n)),
                    bounds=(min(lo, getattr(self, n)), max(hi, getattr(self, n))),
                    description=desc,
                )
                for n, (lo, hi, desc) in SHARED.items()
            ]
        )

    def build(
        self,
        joints: tuple[str, ...] | list[str],
        source: str = "config",
        networks: dict[str, str] | None = None,
        dt_s: float | None = None,
    ) -> JointMotors:
        """The motors of ``joints`` (InputError naming a joint no pattern matches).
        ``networks``: learned actuator networks (YAML of ``actuator fit --model net``) by
        joint pattern, replacing the physical law of the joints they match (first match);
        they run every ``dt_s``."""
        rows = []
        for j in joints:
            match = first_match(self.types, j)
            if match is None:
                raise InputError(source, "motors.types", f"no motor type matches joint {j!r}")
            rows.append(match)
        motors = JointMotors(self, rows)
        if networks:
            motors.nets = _networks(list(joints), networks, source)
            motors.dt_s = dt_s
        return motors


class JointMotors:
    """Per-joint constants (J,) of :class:`JointMotorsConfig` and the batched torque law; the
    shared parameters are (N,) arrays per environment in ``p`` (set by :meth:`update`)."""

    def __init__(self, cfg: JointMotorsConfig, rows: list[MotorType]) -> None:
        self.cfg = cfg
        self.kp = np.array([r.kp_Nm_rad for r in rows])
        self.kd = np.array([r.kd_Nms_rad for r in rows])
        self.tau_max = np.array([r.tau_max_Nm for r in rows])
        self.v_max = np.array([r.v_max_rad_s for r in rows])
        self.gear = np.array([r.gear_ratio for r in rows])
        self.p = {n: np.array([float(getattr(cfg, n))]) for n in SHARED}
        self.nets: list[tuple[np.ndarray, object]] = []
        """(joint indices, :class:`~sim2real.actuators.network.ActuatorNet`) replacing the
        physical law on those joints."""
        self.dt_s: float | None = None

    def reset(self) -> None:
        for _, net in self.nets:
            net.reset()

    def reset_rows(self, rows: np.ndarray) -> None:
        """Forget the networks' histories of environments ``rows`` (a new episode)."""
        for idx, net in self.nets:  # the network's inputs are (N, joints) flattened
            net.reset_rows((np.asarray(rows)[:, None] * len(idx) + np.arange(len(idx))).ravel())

    def update(self, values: dict[str, np.ndarray]) -> None:
        """Per-environment values of the shared parameters, (N,) by name."""
        self.p.update({n: np.asarray(v, dtype=float) for n, v in values.items() if n in SHARED})

    def armature(self) -> np.ndarray:
        """(N, J) reflected rotor inertia [kg m^2] (a network's joints: its bench's)."""
        arm = self.p["rotor_inertia_kgm2"][:, None] * self.gear**2
        for idx, net in self.nets:
            arm = np.broadcast_to(arm, (arm.shape[0], len(self.gear))).copy()
            arm[:, idx] = net.armature_kgm2
        return arm

    def envelope(self, tau: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """``tau`` (N, J) clipped to the torque-speed envelope at speeds ``qd`` (N, J)."""
        hi = np.clip(self.tau_max * (1.0 - qd / self.v_max), 0.0, self.tau_max)
        lo = np.clip(self.tau_max * (-1.0 - qd / self.v_max), -self.tau_max, 0.0)
        return np.clip(tau, lo, hi)

    def torque(self, target: np.ndarray, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """(N, J) joint torque [N m] for position targets ``target`` at ``q``, ``qd``."""
        p = self.p
        strength = p["strength"][:, None]
        tau = strength * self.envelope(self.kp * (target - q) - self.kd * qd, qd)
        if np.any(p["coulomb_Nm"]) or np.any(p["viscous_Nms_rad"]):
            c, b = p["coulomb_Nm"][:, None], p["viscous_Nms_rad"][:, None]
            tau = tau + smooth_friction_torque(qd, c, b, 0.0, 1.0, self.cfg.smooth_vel_rad_s)
        if self.nets:
            from sim2real.actuators.models import ActuatorState

            state = ActuatorState(dt_s=self.dt_s)
            for idx, net in self.nets:  # the network learned the whole drive, friction too
                net_tau = net.torque(target[:, idx], q[:, idx], qd[:, idx], state)
                tau[:, idx] = strength * net_tau
        return tau


def first_match(table: dict[str, Any], name: str) -> Any:
    """The value of the first pattern (fnmatch) of ``table`` that matches ``name``; None when
    none does."""
    return next((v for p, v in table.items() if fnmatch.fnmatchcase(name, p)), None)


def _networks(joints: list[str], networks: dict[str, str], source: str) -> list:
    """(indices, runtime) per network pattern; a YAML that is not a network is refused."""
    from sim2real.actuators.models import load_actuator
    from sim2real.actuators.network import NetConfig

    taken, out = set(), []
    for pattern, path in networks.items():
        cfg = load_actuator(path)
        if not isinstance(cfg, NetConfig):
            raise InputError(source, f"actuator_networks.{pattern}", f"{path} is no network")
        idx = [
            k for k, j in enumerate(joints) if fnmatch.fnmatchcase(j, pattern) and k not in taken
        ]
        if not idx:
            raise InputError(source, f"actuator_networks.{pattern}", "matches no joint")
        taken.update(idx)
        out.append((np.array(idx), cfg.build()))
    return out
