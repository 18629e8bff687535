"""What the ``sim2real actuator`` commands do: fit a model on bench logs (optionally holding
one gain out) and write its YAML; replay a fitted model on a log and write a CSV.

``net`` and ``net-kp`` train a learned actuator network (:mod:`sim2real.actuators.network`;
``net-kp`` feeds the position error times the firmware gain) and judge it like the physical
models: the bench simulated with it in the loop, position MAE on the train and hold-out logs."""

from __future__ import annotations

import csv
import io
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sim2real.actuators.bench import simulate
from sim2real.actuators.fit import ActuatorFit, evaluate, fit_actuator
from sim2real.actuators.friction import FRICTION_PARAMS
from sim2real.actuators.models import DCServoConfig, PDServoConfig, load_actuator, save_actuator
from sim2real.actuators.network import save_network, train_network
from sim2real.actuators.servo_log import ServoLog, read_servo_log
from sim2real.core.atomic import write_text_atomic
from sim2real.core.errors import InputError

BENCHES = ("servo-bam-xl330",)
MODELS = ("pd", "dc", *[k for k in FRICTION_PARAMS if k != "none"])
NET_MODELS = {"net": False, "net-kp": True}  # name -> error_times_kp


def make_config(model: str):
    """Default config of a CLI model name: ``pd``, ``dc`` (no friction) or a friction kind
    (a DC servo with that friction)."""
    if model not in MODELS:
        names = ", ".join((*MODELS, *NET_MODELS))
        raise InputError("--model", None, f"expected one of {names}, got {model!r}")
    if model == "pd":
        return PDServoConfig()
    return DCServoConfig(friction="none" if model == "dc" else model)


def split_logs(logs: list[ServoLog], holdout_kp: float | None):
    """(train, holdout) logs: those at firmware gain ``holdout_kp`` are held out."""
    if holdout_kp is None:
        return logs, []
    train = [log for log in logs if log.kp_fw != holdout_kp]
    hold = [log for log in logs if log.kp_fw == holdout_kp]
    if not hold:
        gains = sorted({log.kp_fw for log in logs})
        raise InputError("--holdout-kp", None, f"no log at kp {holdout_kp:g} (logs: {gains})")
    if not train:
        raise InputError("--holdout-kp", None, f"every log is at kp {holdout_kp:g}: none left")
    return train, hold


def check_steps(logs: list[ServoLog]) -> None:
    dts = [log.dt_s for log in logs]
    if max(dts) - min(dts) > 1e-6:
        worst = logs[int(np.argmax(np.abs(np.array(dts) - dts[0])))]
        raise InputError(
            worst.path, "timestamp", f"time step {worst.dt_s:g} s differs from {dts[0]:g} s"
        )


def fit_command(
    log_paths: list[Path],
    bench: str,
    model: str,
    out: Path,
    holdout_kp: float | None = None,
    time_budget_s: float = 100.0,
    max_evals: int = 3000,
    seed: int = 0,
    restarts: int = 0,
) -> tuple[ActuatorFit, float | None]:
    """Fit, write ``out`` (the fitted config plus a ``fit`` record); returns the fit and the
    hold-out MAE [rad] (None without a hold-out)."""
    if bench not in BENCHES:
        raise InputError("--bench", None, f"expected one of {', '.join(BENCHES)}, got {bench!r}")
    cfg = None if model in NET_MODELS else make_config(model)
    logs = [read_servo_log(p) for p in log_paths]
    check_steps(logs)
    train, hold = split_logs(logs, holdout_kp)
    record = {
        "bench": bench,
        "model": model,
        "train_logs": [str(log.path) for log in train],
        "holdout_logs": [str(log.path) for log in hold],
    }
    if cfg is None:
        net_fit = fit_network(train, model, seed, restarts)
        hold_mae = evaluate(net_fit.config, hold) if hold else None
        record |= {
            "train_mae_rad": net_fit.train_mae_rad,
            "holdout_mae_rad": hold_mae,
            "torque_rmse_Nm": net_fit.torque_rmse_Nm,
            "samples": net_fit.samples,
            "seed": seed,
            "restarts": restarts,
            "fit_time_s": round(net_fit.fit_time_s, 2),
        }
        save_network(net_fit.trained, out, {"fit": record})
        return net_fit, hold_mae
    fit = fit_actuator(
        cfg, train, time_budget_s=time_budget_s, max_evals=max_evals, seed=seed, restarts=restarts
    )
    hold_mae = evaluate(fit.config, hold) if hold else None
    record |= {
        "nominal_mae_rad": fit.nominal_mae_rad,
        "train_mae_rad": fit.train_mae_rad,
        "holdout_mae_rad": hold_mae,
        "evals": fit.evals,
        "restarts": restarts,
        "fit_time_s": round(fit.fit_time_s, 2),
    }
    save_actuator(fit.config, out, {"fit": record})
    return fit, hold_mae


@dataclass
class NetFit:
    """A trained actuator network judged on the bench: position MAE [rad] of the bench
    simulated with it on the training logs; the training's torque RMSE [N m] against the
    inverse-dynamics targets (std ``target_std_Nm``); samples; time [s] (training + judging)."""

    trained: object
    config: object
    train_mae_rad: float
    torque_rmse_Nm: float
    target_std_Nm: float
    samples: int
    fit_time_s: float


def fit_network(
    train: list[ServoLog], model: str = "net", seed: int = 0, restarts: int = 0
) -> NetFit:
    """Train the network ``model`` (``net`` or ``net-kp``) on ``train`` and simulate the
    bench with it on the same logs (nothing is written). ``restarts + 1`` trainings (seeds
    ``seed``, ``seed + 1``, ...): the lowest simulated train MAE wins (the closed-loop error
    varies with the initialisation more than the torque fit does)."""
    t0 = time.perf_counter()
    best = None
    for s in range(seed, seed + restarts + 1):
        trained = train_network(train, error_times_kp=NET_MODELS[model], seed=s)
        train_mae = evaluate(trained.config, train)
        if best is None or train_mae < best[1]:
            best = (trained, train_mae)
    trained, train_mae = best
    return NetFit(
        trained=trained,
        config=trained.config,
        train_mae_rad=train_mae,
        torque_rmse_Nm=trained.torque_rmse_Nm,
        target_std_Nm=trained.target_std_Nm,
        samples=trained.samples,
        fit_time_s=time.perf_counter() - t0,
    )


def plot_replay(path: Path, log: ServoLog, pred: np.ndarray, title: str) -> None:
    """PNG of goal, measured and predicted positions against time (torque-off shaded)."""
    from sim2real.core.report import _pyplot, save_figure

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 3.2))
    ax.plot(log.t_s, log.goal_rad, "k:", lw=1, label="goal (command)")
    ax.plot(log.t_s, log.q_rad, "C0", lw=1.5, label="measured")
    ax.plot(log.t_s, pred, "C3--", lw=1.5, label="predicted")
    ax.fill_between(
        log.t_s, 0, 1, where=~log.enabled, color="0.9", transform=ax.get_xaxis_transform()
    )
    ax.set(xlabel="time [s]", ylabel="position [rad]", title=title)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    save_figure(fig, path, dpi=100)


def replay_command(act_path: Path, log_path: Path, out: Path, plot: Path | None = None) -> float:
    """Simulate the bench of ``log_path`` with the actuator of ``act_path``; write ``out``
    (CSV: time, position_measured, position_predicted, goal_position, torque_enable) and
    return the MAE [rad] over the torque-enabled samples."""
    cfg = load_actuator(act_path)
    log = read_servo_log(log_path)
    pred = simulate(cfg, [log])[0, 0, : len(log.t_s)]
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(
        ["time", "position_measured", "position_predicted", "goal_position", "torque_enable"]
    )
    for row in zip(log.t_s, log.q_rad, pred, log.goal_rad, log.enabled.astype(int), strict=True):
        w.writerow([f"{row[0]:.6f}", f"{row[1]:.6f}", f"{row[2]:.6f}", f"{row[3]:.6f}", row[4]])
    err = float(np.abs(pred - log.q_rad)[log.enabled].mean())
    write_text_atomic(out, buf.getvalue())
    if plot is not None:
        plot_replay(plot, log, pred, f"{log_path.name} (kp {log.kp_fw:g}): MAE {err:.4f} rad")
    return err
