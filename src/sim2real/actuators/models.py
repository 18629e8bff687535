"""Actuator models: a pydantic config per model that builds a runtime object with one
interface, ``torque(command, q, qd, state) -> tau``.

- ``pd``: ideal PD position servo, ``tau = clip(kp_fw * kp (command - q) - kd qd, tau_max)``.
- ``dc``: DC-motor servo (BAM): the firmware's proportional controller gives a duty cycle
  ``d = clip(error_gain * kp_fw * (command - q), max_pwm)``, the motor sees ``d * vin`` volts,
  carries ``I = (d vin - kt qd) / R`` (back-EMF) and gives ``tau_m = kt I / (1 + c |I|)``
  (``c = kt_droop_per_A``: the torque constant's fall at high current, 0 = BAM's linear
  motor); the firmware's current limit
  keeps ``|d vin - kt qd| / R <= max_current``; a friction model of the BAM family
  (:mod:`sim2real.sim.friction`) is then spent against motion, never reversing it within
  a step (BAM's algorithm 1).
- ``torque``: a torque-controlled motor (current loop), the command in N m:
  ``tau_m = lag(clip(torque_gain * command, motor_tau_max))`` with a first-order lag of time
  constant ``torque_time_constant_s``, then the same friction family.

All have an armature (added to the joint's inertia by the simulator, ``armature_kgm2``) and a
command delay (``delay_s``). Arrays broadcast: parameters may be ``(N, 1)`` arrays (one row per
candidate) against ``(L,)`` joints or logs.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from sim2real.actuators.config_io import save_actuator as save_actuator  # re-exported
from sim2real.actuators.network import NetConfig  # learned network; imports nothing of here
from sim2real.actuators.params import SPECS, param_space
from sim2real.core.errors import InputError
from sim2real.core.strict import validation_error
from sim2real.core.yaml_io import read_yaml
from sim2real.params.space import ParamSpace
from sim2real.sim.friction import FRICTION_PARAMS, FrictionKind, friction_budget

PD_PARAMS = ["kp_Nm_rad_per_fw", "kd_Nms_rad", "tau_max_Nm", "armature_kgm2", "delay_s"]
TORQUE_PARAMS = [
    "torque_gain",
    "motor_tau_max_Nm",
    "torque_time_constant_s",
    "armature_kgm2",
    "delay_s",
]
DC_PARAMS = [
    "kt_Nm_A",
    "R_ohm",
    "error_gain_duty_rad",
    "max_pwm",
    "max_current_A",
    "kt_droop_per_A",
    "armature_kgm2",
    "delay_s",
]


@dataclass
class ActuatorState:
    """What the actuator needs from the simulator each step.

    ``dt_s`` step (s); ``kp_fw`` firmware gain; ``vin_V`` supply voltage; ``tau_ext_Nm`` the
    other torques on the joint (gravity, N m); ``inertia_kgm2`` the joint's inertia including
    the armature; ``enabled`` torque enabled (bool or bool array)."""

    dt_s: float
    kp_fw: Any = 200.0
    vin_V: Any = 7.4
    tau_ext_Nm: Any = 0.0
    inertia_kgm2: Any = 0.0
    enabled: Any = True


class _Base(BaseModel):
    # not a StrictModel: its every-field validator may not touch the union's discriminator
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    params: dict[str, float] = Field(default_factory=dict, description="values by name")
    free: list[str] = Field(
        default_factory=list,
        description="parameters fixed by default (firmware constants, current limit, kt droop) "
        "that a fit may change",
    )
    fixed: list[str] = Field(
        default_factory=list, description="parameters a fit must leave at their value"
    )
    defaults: ClassVar[dict[str, float]] = {}
    """Nominal values of this kind that differ from the table in ``actuators.params``."""

    @model_validator(mode="after")
    def _physical(self) -> _Base:
        """A value no motor has (a negative resistance, friction or delay) is refused: every
        parameter of a log scale is > 0, every other whose range starts at 0 is >= 0."""
        for name, value in self.params.items():
            spec = SPECS.get(name)
            if spec is None:
                continue
            _, lower, _, scale, description = spec
            if scale == "log" and value <= 0:
                raise ValueError(f"params.{name} = {value}: a {description} must be > 0")
            if scale != "log" and lower >= 0 and value < 0:
                raise ValueError(f"params.{name} = {value}: a {description} must be >= 0")
        return self

    def names(self) -> list[str]:
        raise NotImplementedError

    def param_space(self) -> ParamSpace:
        """The model's parameters (nominal = this config's values)."""
        for field in ("params", "free", "fixed"):
            unknown = sorted(set(getattr(self, field)) - set(self.names()))
            if unknown:
                close = difflib.get_close_matches(unknown[0], self.names(), n=3, cutoff=0.5)
                hint = f" (did you mean {', '.join(close)}?)" if close else ""
                raise InputError(None, field, f"unknown parameters: {', '.join(unknown)}{hint}")
        values = {**self.defaults, **self.params}
        return param_space(self.names(), values, set(self.free), set(self.fixed))

    def values(self) -> dict[str, float]:
        """All parameter values (defaults filled in)."""
        space = self.param_space()
        return dict(zip(space.names, space.nominal().tolist(), strict=True))

    def with_values(self, values: dict[str, float]) -> _Base:
        return self.model_copy(update={"params": {**self.params, **values}})


class PDServoConfig(_Base):
    kind: Literal["pd"] = Field("pd", description="pd: an ideal PD position servo")

    def names(self) -> list[str]:
        return list(PD_PARAMS)

    def build(self, values: dict | None = None) -> PDServo:
        return PDServo(values or self.values())


class DCServoConfig(_Base):
    kind: Literal["dc"] = Field(
        "dc", description="dc: a DC-motor servo with the firmware's proportional duty law"
    )
    friction: FrictionKind = Field(
        "none", description="the friction model (none, BAM's coulomb-viscous ... quadratic, smooth)"
    )

    def names(self) -> list[str]:
        return DC_PARAMS + FRICTION_PARAMS[self.friction]

    def build(self, values: dict | None = None) -> DCServo:
        return DCServo(values or self.values(), self.friction)


class TorqueMotorConfig(_Base):
    """A torque-controlled motor (a current loop: the DFKI pendulum's AK80-6): the command is
    a torque in N m, delivered late, through a first-order lag, scaled and saturated, minus a
    BAM friction budget. Its armature defaults to the lower bound, 1e-5 kg m^2 (the joint's
    model already holds the rotor's inertia)."""

    kind: Literal["torque"] = Field(
        "torque", description="torque: a torque-controlled motor (command in N m)"
    )
    friction: FrictionKind = Field(
        "none", description="the friction model (none, BAM's coulomb-viscous ... quadratic, smooth)"
    )
    defaults: ClassVar[dict[str, float]] = {"armature_kgm2": SPECS["armature_kgm2"][1]}

    def names(self) -> list[str]:
        return TORQUE_PARAMS + FRICTION_PARAMS[self.friction]

    def build(self, values: dict | None = None) -> TorqueMotor:
        return TorqueMotor(values or self.values(), self.friction)


ActuatorConfig = Annotated[
    PDServoConfig | DCServoConfig | TorqueMotorConfig | NetConfig, Field(discriminator="kind")
]
_ADAPTER: TypeAdapter = TypeAdapter(ActuatorConfig)


class DelayLine:
    """Command delay by linear interpolation over the last commands (one per step)."""

    def __init__(self, max_delay_s: float = SPECS["delay_s"][2]):
        self.max_delay_s = max_delay_s
        self.buf: np.ndarray | None = None
        self.pos = 0

    def reset(self) -> None:
        self.buf = None
        self.pos = 0

    def __call__(self, command, delay_s, dt_s: float):
        d = np.clip(np.asarray(delay_s, dtype=float) / dt_s, 0.0, None)
        if not np.any(d > 0):
            return command
        shape = np.broadcast_shapes(np.shape(command), d.shape)
        cmd = np.broadcast_to(command, shape)
        if self.buf is None or self.buf.shape[1:] != shape:
            k = int(np.ceil(max(self.max_delay_s / dt_s, float(d.max())))) + 2
            self.buf = np.repeat(cmd[None].astype(float), k, axis=0)
            self.pos = 0
        k = self.buf.shape[0]
        self.pos = (self.pos + 1) % k
        self.buf[self.pos] = cmd
        d = np.broadcast_to(np.minimum(d, k - 2), shape)
        i0 = np.floor(d).astype(int)
        f = d - i0
        a = np.take_along_axis(self.buf, ((self.pos - i0) % k)[None], axis=0)[0]
        b = np.take_along_axis(self.buf, ((self.pos - i0 - 1) % k)[None], axis=0)[0]
        return (1.0 - f) * a + f * b


def apply_friction(budget, tau_drive, qd, state: ActuatorState):
    """Friction torque (N m) opposing the motion the other torques would give in one step,
    at most ``budget`` and never more than what stops the joint (BAM's algorithm 1)."""
    tau_stop = np.asarray(state.inertia_kgm2) / state.dt_s * qd + tau_drive + state.tau_ext_Nm
    return -np.sign(tau_stop) * np.minimum(np.abs(tau_stop), budget)


class _DelayedServo:
    """What every runtime servo shares: parameters ``p`` (names to scalars or arrays), the
    armature, and the command delay line (``reset`` empties it)."""

    def __init__(self, p: dict):
        self.p = p
        self.delay = DelayLine()

    @property
    def armature_kgm2(self):
        return self.p["armature_kgm2"]

    def reset(self) -> None:
        self.delay.reset()

    def reset_rows(self, rows) -> None:
        """Forget the commands of the environments ``rows`` (axis 0 of the inputs)."""
        if self.delay.buf is not None and self.delay.buf.ndim > 1:
            self.delay.buf[:, rows] = 0.0

    def delayed(self, command, state: ActuatorState):
        """The command as the servo sees it now, ``delay_s`` late."""
        return self.delay(command, self.p["delay_s"], state.dt_s)


class PDServo(_DelayedServo):
    """Runtime ideal PD servo."""

    def torque(self, command, q, qd, state: ActuatorState):
        """Joint torque (N m), same shape as the broadcast inputs."""
        p = self.p
        cmd = self.delayed(command, state)
        tau = p["kp_Nm_rad_per_fw"] * state.kp_fw * (cmd - q) - p["kd_Nms_rad"] * qd
        tau = np.clip(tau, -p["tau_max_Nm"], p["tau_max_Nm"])
        return np.where(state.enabled, tau, 0.0)


class DCServo(_DelayedServo):
    """Runtime DC-motor servo with a BAM friction model ``friction``."""

    def __init__(self, p: dict, friction: str = "none"):
        super().__init__(p)
        self.friction = friction

    def motor_torque(self, command, q, qd, state: ActuatorState):
        """Electromagnetic torque (N m) before friction; 0 where torque is disabled."""
        p = self.p
        cmd = self.delayed(command, state)
        kt, r, vin = p["kt_Nm_A"], p["R_ohm"], state.vin_V
        duty = p["error_gain_duty_rad"] * state.kp_fw * (cmd - q)
        centre, span = kt * qd / vin, r * p["max_current_A"] / vin  # current limit
        duty = np.clip(np.clip(duty, centre - span, centre + span), -p["max_pwm"], p["max_pwm"])
        current = (duty * vin - kt * qd) / r
        tau = kt * current / (1.0 + p["kt_droop_per_A"] * np.abs(current))
        return np.where(state.enabled, tau, 0.0)

    def torque(self, command, q, qd, state: ActuatorState):
        """Motor torque plus friction (N m)."""
        tau_m = self.motor_torque(command, q, qd, state)
        budget = friction_budget(self.friction, self.p, tau_m, state.tau_ext_Nm, qd)
        return tau_m + apply_friction(budget, tau_m, qd, state)


class TorqueMotor(_DelayedServo):
    """Runtime torque motor; its lag state is per element of the broadcast inputs."""

    def __init__(self, p: dict, friction: str = "none"):
        super().__init__(p)
        self.friction = friction
        self.lagged = None

    def reset(self) -> None:
        super().reset()
        self.lagged = None

    def reset_rows(self, rows) -> None:
        super().reset_rows(rows)
        if self.lagged is not None and np.ndim(self.lagged) > 0:
            self.lagged[rows] = 0.0

    def torque(self, command, q, qd, state: ActuatorState):
        """Delivered torque plus friction (N m)."""
        p = self.p
        limit = p["motor_tau_max_Nm"]
        target = np.clip(p["torque_gain"] * self.delayed(command, state), -limit, limit)
        tc = np.asarray(p["torque_time_constant_s"], dtype=float)
        alpha = np.where(tc > 0, -np.expm1(-state.dt_s / np.maximum(tc, 1e-12)), 1.0)
        if self.lagged is None or np.shape(self.lagged) != np.shape(target):
            self.lagged = np.zeros(np.shape(target))
        self.lagged = self.lagged + alpha * (target - self.lagged)
        tau_m = self.lagged
        budget = friction_budget(self.friction, p, tau_m, state.tau_ext_Nm, qd)
        tau = tau_m + apply_friction(budget, tau_m, qd, state)
        return np.where(state.enabled, tau, 0.0)


def config_from_dict(data: Any, source: str | Path):
    """Validate a parsed actuator YAML (``actuator:`` mapping or the mapping itself)."""
    if isinstance(data, dict) and "actuator" in data:
        data = data["actuator"]
    if not isinstance(data, dict) or "kind" not in data:  # another file (a log, an MJCF...)
        got = type(data).__name__ if not isinstance(data, dict) else "a mapping without 'kind'"
        why = f"not an actuator config (expected a mapping with 'kind', got {got})"
        raise InputError(source, "kind", why + ": `sim2real actuator fit` writes one")
    try:
        cfg = _ADAPTER.validate_python(data)
    except ValidationError as err:
        raise validation_error(err, source) from None
    if isinstance(cfg, NetConfig):  # weights relative to the YAML, checked against the config
        return cfg.bound_to(source)
    try:
        cfg.param_space()
    except InputError as err:
        raise InputError(source, err.field, err.message) from None
    return cfg


def load_actuator(path: str | Path):
    """Read an actuator YAML written by :func:`save_actuator`."""
    path = Path(path)
    return config_from_dict(read_yaml(path, "actuator config"), path)
