"""Actuator models (ideal PD, DC-motor servo, torque motor, with the BAM friction family; a
learned actuator network) usable inside the simulation loop, and their identification from real
servo logs."""

from sim2real.actuators.models import (
    ActuatorState,
    DCServo,
    DCServoConfig,
    PDServo,
    PDServoConfig,
    TorqueMotor,
    TorqueMotorConfig,
    load_actuator,
    save_actuator,
)
from sim2real.actuators.network import ActuatorNet, NetConfig

__all__ = [
    "ActuatorNet",
    "ActuatorState",
    "DCServo",
    "DCServoConfig",
    "NetConfig",
    "PDServo",
    "PDServoConfig",
    "TorqueMotor",
    "TorqueMotorConfig",
    "load_actuator",
    "save_actuator",
]
