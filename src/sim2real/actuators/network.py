"""A learned actuator network in the style of Hwangbo et al. 2019 (ANYmal): an MLP with
softsign activations over the last ``history`` samples of position error ``command - q`` and
joint velocity ``qd``, predicting the joint torque.

Input layout, oldest sample first (``e`` the position error, ``v`` the velocity, ``k`` now,
one sample every ``dt_s``)::

    x = [e[k-H+1], ..., e[k-1], e[k],  v[k-H+1], ..., v[k-1], v[k]]        (2 H,)
    tau = clip(torque_scale_Nm * mlp(x / input_scale), -tau_max_Nm, tau_max_Nm)

with ``input_scale = [scale_e] * H + [scale_v] * H``. The exported files (TorchScript ``.pt``,
the config's ``weights``, and ONNX ``.onnx`` beside it: input ``x`` ``(B, 2H)`` float32, output
``tau`` ``(B,)`` N m) hold that whole function, scaling and clipping included, so a deployment
needs no YAML. The runtime :class:`ActuatorNet` evaluates the same MLP in numpy (a per-step
call into torch for a few samples costs far more than the arithmetic).

Training (:func:`train_network`): targets from the bench's inverse dynamics
(:mod:`sim2real.actuators.inverse_dynamics`), inputs from the same filtered motion; the network
is then judged like the physical models, by simulating the bench with it in the loop.

The network runs at the rate it was trained for (``dt_s``). In a loop with another step, its
history is resampled: the stored samples are interpolated at multiples of ``dt_s`` back from
now (one warning per runtime object).

This module imports nothing of :mod:`sim2real.actuators.models` at import time (models.py
imports it for its config union); torch only inside the functions that need it.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from sim2real.core.atomic import atomic_path
from sim2real.core.errors import InputError


class NetConfig(BaseModel):
    """A learned actuator network; see the module docstring for the function it computes."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    kind: Literal["net"] = "net"
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
            h = h @ w.T + b
            if i < len(self.layers) - 1:
                h = h / (1.0 + np.abs(h))  # softsign
        return np.clip(h[:, 0] * self.torque_scale_Nm, -self.tau_max_Nm, self.tau_max_Nm)


def _expanded_scale(cfg: NetConfig) -> np.ndarray:
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
        "input_scale": (state["input_scale"], _expanded_scale(cfg)),
        "torque_scale_Nm": (state["torque_scale"], cfg.torque_scale_Nm),
        "tau_max_Nm": (state["tau_max"], cfg.tau_max_Nm),
    }
    for name, (stored, expected) in checks.items():
        if not np.allclose(stored.double().numpy(), expected, rtol=1e-6, atol=0):
            raise InputError(source, f"actuator.{name}", f"differs from network {path.name}")
    return NetWeights(layers, _expanded_scale(cfg), cfg.torque_scale_Nm, cfg.tau_max_Nm)


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
    return NetWeights(_layers(state), _expanded_scale(cfg), cfg.torque_scale_Nm, cfg.tau_max_Nm)


class ActuatorNet:
    """Runtime network actuator, vectorised over the broadcast shape of its inputs.

    Keeps a ring of the last samples of (error feature, velocity), one per call; before
    ``history`` samples were seen, the missing older ones repeat the first. ``reset()``
    empties it (and a change of input shape or of step does)."""

    def __init__(self, cfg: NetConfig, armature_kgm2: Any = None):
        self.cfg = cfg
        self.net = cfg.network()
        self._armature = cfg.armature_kgm2 if armature_kgm2 is None else armature_kgm2
        self.buf: np.ndarray | None = None
        self.pos = 0
        self._dt_loop: float | None = None
        self._warned = False
        self._fresh: np.ndarray | None = None  # rows whose history restarts at the next call

    @property
    def armature_kgm2(self):
        return self._armature

    def reset(self) -> None:
        self.buf = None
        self.pos = 0
        self._fresh = None

    def reset_rows(self, rows) -> None:
        """Forget the history of the environments ``rows`` (axis 0 of the inputs): their next
        sample fills their whole history, as after ``reset()``."""
        rows = np.atleast_1d(np.asarray(rows, dtype=int))
        self._fresh = rows if self._fresh is None else np.union1d(self._fresh, rows)

    def _lags(self, dt_s: float) -> np.ndarray:
        """Lags of the ``history`` inputs (oldest first) in loop steps."""
        ratio = self.cfg.dt_s / dt_s
        if abs(ratio - 1.0) > 1e-9 and not self._warned:
            warnings.warn(
                f"actuator network trained at dt {self.cfg.dt_s:g} s runs in a loop at "
                f"{dt_s:g} s: its history is resampled (linear interpolation)",
                stacklevel=3,
            )
            self._warned = True
        return np.round(np.arange(self.cfg.history - 1, -1, -1) * ratio, 9)

    def observe(self, command, q, qd, state) -> np.ndarray:
        """Store this step's sample and return the network input ``(M, 2H)`` (M = the
        broadcast size of the inputs), oldest sample first."""
        e = np.asarray(command, dtype=float) - q
        if self.cfg.error_times_kp:
            e = e * np.asarray(state.kp_fw, dtype=float)
        e, v = np.broadcast_arrays(e, np.asarray(qd, dtype=float))
        sample = np.stack([e.ravel(), v.ravel()], axis=-1)  # (M, 2)
        lags = self._lags(state.dt_s)
        if self.buf is None or self.buf.shape[1:] != sample.shape or self._dt_loop != state.dt_s:
            k = int(np.ceil(lags[0])) + 2
            self.buf = np.repeat(sample[None], k, axis=0)
            self.pos, self._dt_loop = 0, state.dt_s
        k = self.buf.shape[0]
        self.pos = (self.pos + 1) % k
        self.buf[self.pos] = sample
        if self._fresh is not None:
            self.buf[:, self._fresh] = sample[self._fresh]
            self._fresh = None
        i0 = np.floor(lags).astype(int)
        f = (lags - i0)[:, None, None]
        a = self.buf[(self.pos - i0) % k]
        b = self.buf[(self.pos - i0 - 1) % k]
        hist = (1.0 - f) * a + f * b  # (H, M, 2)
        return np.concatenate([hist[:, :, 0].T, hist[:, :, 1].T], axis=1)

    def torque(self, command, q, qd, state):
        """Joint torque [N m], the broadcast shape of the inputs; 0 where torque is off."""
        shape = np.broadcast_shapes(np.shape(command), np.shape(q), np.shape(qd))
        tau = self.net(self.observe(command, q, qd, state)).reshape(shape)
        return np.where(state.enabled, tau, 0.0)


# --- training and export ------------------------------------------------------------------


@dataclass
class TrainedNet:
    """A trained network before it is written: the config (``weights`` not yet meaningful),
    the torch MLP (scaled units), and figures of the training (torque RMSE [N m] on the
    training samples, the targets' std, samples, time [s])."""

    config: NetConfig
    mlp: Any
    torque_rmse_Nm: float
    target_std_Nm: float
    samples: int
    train_time_s: float
    losses: list[float] = field(default_factory=list)


def make_mlp(n_in: int, hidden: list[int]):
    """``Linear -> Softsign -> ... -> Linear(1)`` (torch)."""
    import torch

    layers, size = [], n_in
    for h in hidden:
        layers += [torch.nn.Linear(size, h), torch.nn.Softsign()]
        size = h
    layers.append(torch.nn.Linear(size, 1))
    return torch.nn.Sequential(*layers)


def _exported_module(mlp, cfg: NetConfig):
    """The whole function ``raw x (B, 2H) -> clipped tau (B,) N m`` as a torch module."""
    import torch

    class ActuatorNetModule(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = mlp
            self.register_buffer("input_scale", torch.tensor(_expanded_scale(cfg)).float())
            self.register_buffer("torque_scale", torch.tensor(cfg.torque_scale_Nm).float())
            self.register_buffer("tau_max", torch.tensor(cfg.tau_max_Nm).float())

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            tau = self.layers(x / self.input_scale)[:, 0] * self.torque_scale
            return torch.clamp(tau, -self.tau_max, self.tau_max)

    return ActuatorNetModule().eval().requires_grad_(False)  # an inference function


def training_samples(logs: list, history: int, error_times_kp: bool, window_s: float = 0.065):
    """Network inputs ``(S, 2H)`` and inverse-dynamics torque targets ``(S,)`` [N m] from
    bench logs: samples whose whole history is torque-enabled and away from the filter's
    ends (half a window)."""
    from sim2real.actuators.inverse_dynamics import inverse_dynamics

    xs, ys = [], []
    for log in logs:
        motion = inverse_dynamics(log, window_s=window_s)
        e = log.goal_rad - motion.q_rad
        if error_times_kp:
            e = e * log.kp_fw
        T, H = len(e), history
        edge = max(round(window_s / log.dt_s) // 2, H - 1)
        idx = np.arange(edge, T - edge)
        lag = np.arange(H - 1, -1, -1)  # oldest first
        rows = idx[:, None] - lag[None, :]  # (S, H)
        ok = log.enabled[rows].all(axis=1)
        rows, idx = rows[ok], idx[ok]
        xs.append(np.concatenate([e[rows], motion.qd_rad_s[rows]], axis=1))
        ys.append(motion.tau_Nm[idx])
    return np.concatenate(xs), np.concatenate(ys)


def train_network(
    logs: list,
    *,
    history: int = 3,
    hidden: tuple[int, ...] = (32, 32),
    error_times_kp: bool = False,
    armature_kgm2: float | None = None,
    iterations: int = 1500,
    lr: float = 3e-3,
    seed: int = 0,
    window_s: float = 0.065,
) -> TrainedNet:
    """Fit the network to inverse-dynamics torques of ``logs`` (MSE in scaled units, Adam,
    full batch, ``torch.manual_seed(seed)``). ``armature_kgm2``: the rotor inertia counted in
    the targets and added by the simulator (default: the bench MJCF's); the inputs and the
    output are scaled by their standard deviations, the clip is the largest target seen."""
    import torch

    from sim2real.actuators.inverse_dynamics import bench_armature_kgm2

    t0 = time.perf_counter()
    if armature_kgm2 is None:
        armature_kgm2 = bench_armature_kgm2()
    x, y = training_samples(logs, history, error_times_kp, window_s)
    h = history
    scale_e, scale_v = float(np.std(x[:, :h])), float(np.std(x[:, h:]))
    cfg = NetConfig(
        weights="network.pt",
        history=history,
        dt_s=logs[0].dt_s,
        input_scale=[scale_e, scale_v],
        torque_scale_Nm=float(np.std(y)),
        hidden=list(hidden),
        tau_max_Nm=float(np.abs(y).max()),
        armature_kgm2=armature_kgm2,
        error_times_kp=error_times_kp,
    )
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matrices: more threads only contend (20x slower when loaded)
    try:
        torch.manual_seed(seed)
        mlp = make_mlp(2 * history, list(hidden))
        losses = _fit_mlp(mlp, x / _expanded_scale(cfg), y / cfg.torque_scale_Nm, iterations, lr)
    finally:
        torch.set_num_threads(threads)
    cfg._cache = weights_from_state(mlp.state_dict(), cfg)  # usable before it is written
    pred = cfg._cache(x)
    return TrainedNet(
        config=cfg,
        mlp=mlp,
        torque_rmse_Nm=float(np.sqrt(np.mean((pred - y) ** 2))),
        target_std_Nm=float(np.std(y)),
        samples=len(y),
        train_time_s=time.perf_counter() - t0,
        losses=losses,
    )


def _fit_mlp(mlp, x: np.ndarray, y: np.ndarray, iterations: int, lr: float) -> list[float]:
    """Full-batch Adam with a cosine learning rate on the MSE; returns the loss history."""
    import torch

    xt = torch.tensor(x, dtype=torch.float32)
    yt = torch.tensor(y, dtype=torch.float32)
    opt = torch.optim.Adam(mlp.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, iterations)
    losses = []
    for _ in range(iterations):
        opt.zero_grad()
        loss = torch.mean((mlp(xt)[:, 0] - yt) ** 2)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    mlp.eval()
    return losses


def export_network(mlp, cfg: NetConfig, pt_path: str | Path) -> NetConfig:
    """Write ``pt_path`` (TorchScript) and the ONNX file beside it (same stem), atomically;
    returns ``cfg`` with ``weights`` = the TorchScript file's name (the YAML goes in the same
    folder)."""
    import torch

    pt_path = Path(pt_path)
    cfg = cfg.model_copy(update={"weights": pt_path.name})
    cfg._base_dir, cfg._cache = pt_path.parent, None
    module = _exported_module(mlp, cfg)
    example = torch.zeros(2, 2 * cfg.history)
    with atomic_path(pt_path) as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # TorchScript is what we ship
        torch.jit.save(torch.jit.script(module), str(tmp))
    with atomic_path(pt_path.with_suffix(".onnx")) as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the legacy exporter's DeprecationWarning
        torch.onnx.export(
            module,
            (example,),
            str(tmp),
            input_names=["x"],
            output_names=["tau"],
            dynamic_axes={"x": {0: "batch"}, "tau": {0: "batch"}},
            dynamo=False,
        )
    return cfg


def save_network(trained: TrainedNet, yaml_path: str | Path, extra: dict | None = None):
    """Write the network beside ``yaml_path`` (``<stem>.pt``, ``<stem>.onnx``) and the YAML
    (last, so a YAML always has its network); returns the config as loaded from there."""
    from sim2real.actuators.models import save_actuator

    yaml_path = Path(yaml_path)
    cfg = export_network(trained.mlp, trained.config, yaml_path.with_suffix(".pt"))
    save_actuator(cfg, yaml_path, extra)
    return cfg.bound_to(yaml_path)
