"""Training the actuator network on the bench's inverse-dynamics torques (Adam, full batch)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np

from sim2real.actuators.network.config import NetConfig, expanded_scale, weights_from_state
from sim2real.actuators.network.runtime import error_feature
from sim2real.core.errors import InputError


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


def training_samples(logs: list, history: int, feature, window_s: float = 0.065):
    """Network inputs ``(S, 2H)`` and inverse-dynamics torque targets ``(S,)`` [N m] from
    bench logs: samples whose whole history is torque-enabled and away from the filter's
    ends (half a window). ``feature``: the config whose error feature is fed (a bool: the
    error times kp or not, as before)."""
    from sim2real.actuators.inverse_dynamics import inverse_dynamics

    xs, ys = [], []
    for log in logs:
        motion = inverse_dynamics(log, window_s=window_s)
        if isinstance(feature, bool):
            feature = SimpleNamespace(error_times_kp=feature, motor_voltage=False)
        e = error_feature(feature, log.goal_rad - motion.q_rad, log.kp_fw, log.vin_V)
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
    motor_voltage: bool = False,
    firmware: dict | None = None,
    armature_kgm2: float | None = None,
    iterations: int = 1500,
    lr: float = 3e-3,
    seed: int = 0,
    window_s: float = 0.065,
) -> TrainedNet:
    """Fit the network to inverse-dynamics torques of ``logs`` (MSE in scaled units, Adam,
    full batch, ``torch.manual_seed(seed)``). ``motor_voltage``: feed the firmware law's motor
    voltage (its constants ``firmware``: ``error_gain_duty_rad``, ``max_pwm``). ``armature_kgm2``: the rotor inertia counted in
    the targets and added by the simulator (default: the bench MJCF's); the inputs and the
    output are scaled by their standard deviations, the clip is the largest target seen."""
    import torch

    from sim2real.actuators.inverse_dynamics import bench_armature_kgm2, bench_mjcf

    t0 = time.perf_counter()
    if armature_kgm2 is None:
        armature_kgm2 = bench_armature_kgm2(bench_mjcf(logs[0].bench, logs[0].path))
    law = {"motor_voltage": motor_voltage, **(firmware or {})}
    probe = NetConfig(weights="-", dt_s=1, input_scale=[1, 1], torque_scale_Nm=1, tau_max_Nm=1)
    probe = probe.model_copy(update={"error_times_kp": error_times_kp, **law})
    x, y = training_samples(logs, history, probe, window_s)
    if len(y) < 10 * (2 * history + 1):
        source = logs[0].path if len(logs) == 1 else "--logs"
        raise InputError(
            source, "torque_enable", f"{len(y)} training samples (torque enabled over a whole "
            f"history and away from the filter's ends): too few to train a network",
        )  # fmt: skip
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
        **law,
    )
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matrices: more threads only contend (20x slower when loaded)
    try:
        torch.manual_seed(seed)
        mlp = make_mlp(2 * history, list(hidden))
        losses = _fit_mlp(mlp, x / expanded_scale(cfg), y / cfg.torque_scale_Nm, iterations, lr)
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
