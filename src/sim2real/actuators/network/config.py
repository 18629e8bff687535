"""The network's configuration (the YAML's ``actuator:`` mapping) and its weights: the MLP in
numpy, read from the TorchScript file and checked against the configuration."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from sim2real.actuators.network.runtime import ActuatorNet
from sim2real.actuators.params import SPECS
from sim2real.core.errors import InputError

ERROR_GAIN = SPECS["error_gain_duty_rad"][0]


class NetConfig(BaseModel):
    """A learned actuator network; see the module docstring for the function it computes."""

    # not a StrictModel: its every-field validator may not touch the union's discriminator
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    kind: Literal["net"] = Field("net", description="net: a learned actuator network")
    weights: str = Field(..., min_length=1, description="TorchScript file, relative to the YAML")
    history: int = Field(3, ge=1, le=64, description="samples of (error, velocity) fed")
    dt_s: float = Field(..., gt=0, description="step the network was trained at [s]")
    input_scale: list[float] = Field(
        ..., min_length=2, max_length=2, description="[position error rad, velocity rad/s]"
    )
    torque_scale_Nm: float = Field(..., gt=0, description="network output unit [N m]")
    hidden: list[int] = Field([32, 32], min_length=1, description="hidden layer sizes")
    tau_max_Nm: float = Field(..., gt=0, description="output clip [N m]")
    armature_kgm2: float = Field(0.0, ge=0, description="rotor inertia the simulator adds")
    error_times_kp: bool = Field(
        False,
        description="multiply the position error by the firmware gain kp_fw (the servo's duty "
        "is proportional to kp_fw x error, so one network can serve several gains)",
    )
    motor_voltage: bool = Field(
        False,
        description="feed the motor voltage of the firmware's proportional law, "
        "clip(error_gain_duty_rad kp_fw error, +-max_pwm) vin [V], instead of the error: the "
        "firmware model in front of the network, whose inputs then stay in range at any gain",
    )
    error_gain_duty_rad: float = Field(
        ERROR_GAIN, gt=0, description="the law's duty per rad per unit of kp (motor_voltage)"
    )
    max_pwm: float = Field(1.0, gt=0, le=1, description="the law's duty limit (motor_voltage)")
    _base_dir: Path = PrivateAttr(default_factory=Path)
    _cache: Any = PrivateAttr(default=None)

    @field_validator("input_scale")
    @classmethod
    def _positive(cls, v: list[float]) -> list[float]:
        if min(v) <= 0:
            raise ValueError("scales must be > 0")
        return v

    @field_validator("hidden")
    @classmethod
    def _sizes(cls, v: list[int]) -> list[int]:
        if min(v) < 1:
            raise ValueError("layer sizes must be >= 1")
        return v

    @model_validator(mode="after")
    def _one_feature(self) -> NetConfig:
        if self.error_times_kp and self.motor_voltage:
            raise ValueError("error_times_kp and motor_voltage exclude each other")
        return self

    def __eq__(self, other: object) -> bool:
        """Equal fields (the resolved folder and the loaded network are not compared)."""
        return isinstance(other, NetConfig) and self.model_dump() == other.model_dump()

    __hash__ = None  # type: ignore[assignment]  # mutable, like any pydantic model

    # the interface the bench simulation and the fitters use with every actuator config
    def names(self) -> list[str]:
        return []

    def values(self) -> dict[str, float]:
        return {"armature_kgm2": self.armature_kgm2}

    def build(self, values: dict | None = None) -> ActuatorNet:
        return ActuatorNet(self, (values or self.values())["armature_kgm2"])

    def weights_path(self) -> Path:
        """The TorchScript file: ``weights`` relative to the YAML's folder (or the current
        folder for a config not read from a file)."""
        return self._base_dir / self.weights

    def bound_to(self, yaml_path: str | Path) -> NetConfig:
        """This config with ``weights`` resolved against ``yaml_path``'s folder, its network
        file read and checked against the config (:func:`read_network`)."""
        cfg = self.model_copy()
        cfg._base_dir = Path(yaml_path).parent
        cfg._cache = read_network(cfg, yaml_path)
        return cfg

    def network(self) -> NetWeights:
        if self._cache is None:
            self._cache = read_network(self, self.weights_path())
        return self._cache


@dataclass
class NetWeights:
    """The MLP in numpy: ``layers`` = [(W (out, in), b (out,))], float64; the scaling and
    clip of the exported function."""

    layers: list[tuple[np.ndarray, np.ndarray]]
    input_scale: np.ndarray
    torque_scale_Nm: float
    tau_max_Nm: float

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """``(M, 2H)`` raw inputs -> ``(M,)`` torque [N m]."""
        h = x / self.input_scale
        for i, (w, b) in enumerate(self.layers):
            # einsum, not BLAS: these matrices are tiny, and OpenBLAS's threads contend with
            # torch's once torch is imported (a 512 x 6 -> 32 -> 32 MLP took 2-8 ms per call
            # on the loaded 2-core machine with ``@``, 0.1-0.4 ms with einsum)
            h = np.einsum("mi,oi->mo", h, w) + b
            if i < len(self.layers) - 1:
                h = h / (1.0 + np.abs(h))  # softsign
        return np.clip(h[:, 0] * self.torque_scale_Nm, -self.tau_max_Nm, self.tau_max_Nm)


def expanded_scale(cfg: NetConfig) -> np.ndarray:
    return np.repeat(np.asarray(cfg.input_scale, dtype=float), cfg.history)


def read_network(cfg: NetConfig, source: str | Path) -> NetWeights:
    """Load ``cfg``'s TorchScript file and check it against ``cfg``: input size ``2 history``,
    hidden sizes, scales and clip. Mismatch: ``InputError(source, "actuator.<field>")``."""
    import torch

    path = cfg.weights_path()
    if not path.is_file():
        raise InputError(source, "actuator.weights", f"network file {path} not found")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # TorchScript is what we ship
            state = torch.jit.load(str(path), map_location="cpu").state_dict()
    except (RuntimeError, ValueError) as err:
        raise InputError(
            source, "actuator.weights", f"{path}: not a TorchScript file: {err}"
        ) from None
    layers = _layers(state)
    if not layers or any(k not in state for k in ("input_scale", "torque_scale", "tau_max")):
        raise InputError(source, "actuator.weights", f"{path}: not an actuator network")
    n_in = layers[0][0].shape[1]
    if n_in != 2 * cfg.history:
        raise InputError(
            source,
            "actuator.history",
            f"network {path.name} takes {n_in} inputs; history {cfg.history} needs "
            f"{2 * cfg.history} (position error and velocity per sample)",
        )
    sizes = [w.shape[0] for w, _ in layers[:-1]]
    if sizes != list(cfg.hidden) or layers[-1][0].shape[0] != 1:
        raise InputError(source, "actuator.hidden", f"network {path.name} has layers {sizes}")
    checks = {
        "input_scale": (state["input_scale"], expanded_scale(cfg)),
        "torque_scale_Nm": (state["torque_scale"], cfg.torque_scale_Nm),
        "tau_max_Nm": (state["tau_max"], cfg.tau_max_Nm),
    }
    for name, (stored, expected) in checks.items():
        if not np.allclose(stored.double().numpy(), expected, rtol=1e-6, atol=0):
            raise InputError(source, f"actuator.{name}", f"differs from network {path.name}")
    return NetWeights(layers, expanded_scale(cfg), cfg.torque_scale_Nm, cfg.tau_max_Nm)


def _layers(state: dict) -> list[tuple[np.ndarray, np.ndarray]]:
    """[(W, b)] in float64 from a state dict of ``Sequential`` linear layers."""
    keys = sorted((k for k in state if k.endswith(".weight")), key=lambda k: int(k.split(".")[-2]))
    return [
        (
            state[k].detach().double().numpy(),
            state[k[: -len("weight")] + "bias"].detach().double().numpy(),
        )
        for k in keys
    ]


def weights_from_state(state: dict, cfg: NetConfig) -> NetWeights:
    """The numpy network of a torch MLP's state dict (scaled units) with ``cfg``'s scaling."""
    return NetWeights(_layers(state), expanded_scale(cfg), cfg.torque_scale_Nm, cfg.tau_max_Nm)
