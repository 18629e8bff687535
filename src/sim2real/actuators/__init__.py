"""Actuator models (ideal PD, DC-motor servo, torque motor, with the BAM friction family) usable inside the
simulation loop, and their identification from real servo logs."""

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

__all__ = [
    "ActuatorState",
    "DCServo",
    "DCServoConfig",
    "PDServo",
    "PDServoConfig",
    "TorqueMotor",
    "TorqueMotorConfig",
    "load_actuator",
    "save_actuator",
]
