"""What the ``sim2real actuator`` commands do: fit a model on bench logs (optionally holding
one gain out) and write its YAML, with out-of-sample figures by default (leave one gain out
among the logs' gains); ``--model auto`` chooses the model that way; replay a fitted model on
a log and write a CSV. Networks (``net``, ``net-kp``, ``net-volts``, see
:mod:`sim2real.actuators.catalog`) are judged like the physical models: the bench simulated
with them in the loop, position MAE on the train and hold-out logs."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sim2real.actuators.bench import simulate
from sim2real.actuators.catalog import (
    AUTO_CANDIDATES,
    FitSettings,
    check_names,
    is_physical,
    n_params,
)
from sim2real.actuators.compare import make_cache
from sim2real.actuators.firmware import FirmwareLaw, identify_firmware
from sim2real.actuators.fit import evaluate
from sim2real.actuators.models import load_actuator, save_actuator
from sim2real.actuators.network import save_network
from sim2real.actuators.select import (
    GainFold,
    Selection,
    fold_jobs,
    gains_of,
    leave_one_gain_out,
    select_model,
)
from sim2real.actuators.servo_log import (
    ServoLog,
    check_steps,
    read_logs,
    read_servo_log,
    split_logs,
)
from sim2real.core.atomic import write_text_atomic
from sim2real.core.errors import InputError

BENCHES = ("servo-bam-xl330", "go1-hip-bench", "go1-knee-bench")


@dataclass
class FitOutcome:
    """``actuator fit``: the model fitted (``name``: the chosen one for ``auto``), the fit
    (physical or network), the hold-out MAE [rad] (``--holdout-kp``), the selection
    (``auto``) or the named model's leave-one-gain-out folds, the firmware law used."""

    name: str
    fit: object
    holdout_mae_rad: float | None
    selection: Selection | None
    validation: list[GainFold] | None
    law: FirmwareLaw
    record: dict
    """The ``fit`` record written with the model (what was fitted on what, and how well)."""

    def write(self, out: Path) -> None:
        """The fitted config with its ``fit`` record (a network's weights beside it)."""
        if hasattr(self.fit, "trained"):
            save_network(self.fit.trained, out, {"fit": self.record})
        else:
            save_actuator(self.fit.config, out, {"fit": self.record})


def _record(outcome: FitOutcome, model: str, bench: str, train, hold, settings) -> dict:
    fit = outcome.fit
    record = {
        "bench": bench,
        "model": model,
        "fitted_model": outcome.name,
        "train_logs": [str(log.path) for log in train],
        "holdout_logs": [str(log.path) for log in hold],
        "train_mae_rad": float(fit.train_mae_rad),
        "holdout_mae_rad": outcome.holdout_mae_rad,
        "at_bounds": list(fit.at_bounds),
        "firmware": {**outcome.law.values(), "source": dict(outcome.law.source)},
        "fit_time_s": round(fit.fit_time_s, 2),
        "settings": vars(settings),
    }
    if hasattr(fit, "nominal_mae_rad"):
        record |= {"nominal_mae_rad": fit.nominal_mae_rad, "evals": fit.evals}
    else:
        record |= {"torque_rmse_Nm": fit.torque_rmse_Nm, "samples": fit.samples}
    if outcome.selection is not None:
        record["selection"] = outcome.selection.record()
    if outcome.validation is not None:
        record["leave_one_gain_out"] = {
            f"kp {f.held_kp:g}": {
                "train_mae_rad": round(f.train_mae_rad, 6),
                "holdout_mae_rad": round(f.holdout_mae_rad, 6),
            }
            for f in outcome.validation
        }
    return record


def fit_actuator(
    log_paths: list[Path],
    bench: str,
    model: str,
    holdout_kp: float | None = None,
    settings: FitSettings | None = None,
    candidates: list[str] | None = None,
    validate: bool = True,
    progress: Callable[[str], None] | None = None,
) -> FitOutcome:
    """Fit ``model`` (a name of :mod:`sim2real.actuators.catalog`, or ``auto``: the
    candidate with the lowest leave-one-gain-out error among those that extrapolate) on the
    logs (those at ``holdout_kp`` held out); ``FitOutcome.write`` writes it. ``validate``:
    also judge a named model by leave one gain out (the logs at two gains or more; ``auto``
    always does)."""
    if bench not in BENCHES:
        raise InputError("--bench", None, f"expected one of {', '.join(BENCHES)}, got {bench!r}")
    candidates = list(candidates or AUTO_CANDIDATES)
    check_names(candidates, "--candidates")
    if model != "auto":
        check_names([model])
    settings = settings or FitSettings()
    if not settings.time_budget_s > 0:
        raise InputError(None, "--time-budget", f"must be > 0 s, got {settings.time_budget_s}")
    logs = read_logs(log_paths)
    for log in logs:
        if log.bench != bench:
            raise InputError(log.path, "bench", f"a log of {log.bench}, not of --bench {bench}")
    check_steps(logs)
    train, hold = split_logs(logs, holdout_kp)
    cache = make_cache(settings)
    selection, validation, name = None, None, model
    several = len(gains_of(train)) >= 2
    if model == "auto":
        if not several:
            raise InputError(
                "--logs", "kp", f"--model auto judges models on a gain they were not fitted "
                f"to: it needs logs at two gains or more, got kp {gains_of(train)[0]:g} only",
            )  # fmt: skip
        selection = select_model(
            candidates, train, cache, evaluate, n_params, is_physical, progress
        )
        name = selection.chosen
    elif validate and several:
        with cache.parallel([*fold_jobs([name], train), (name, train)]):  # side by side
            validation = leave_one_gain_out(name, train, cache, evaluate)
            cache.get(name, train)
    fit = cache.get(name, train)
    outcome = FitOutcome(
        name,
        fit,
        evaluate(fit.config, hold) if hold else None,
        selection,
        validation,
        identify_firmware(train),
        {},
    )
    outcome.record = _record(outcome, model, bench, train, hold, settings)
    return outcome


def plot_replay(path: Path, log: ServoLog, pred: np.ndarray, title: str) -> None:
    """PNG of goal, measured and predicted positions against time (torque-off shaded)."""
    from sim2real.core.report import pyplot, save_figure

    plt = pyplot()
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


@dataclass
class Replay:
    """The bench of a log simulated with an actuator model: ``predicted`` positions [rad] at
    the log's samples and the MAE [rad] over its torque-enabled samples."""

    log: ServoLog
    predicted: np.ndarray
    mae_rad: float

    def write_csv(self, out: Path) -> None:
        """time, position_measured, position_predicted, goal_position, torque_enable."""
        log, buf = self.log, io.StringIO()
        w = csv.writer(buf)
        w.writerow(
            ["time", "position_measured", "position_predicted", "goal_position", "torque_enable"]
        )
        rows = zip(
            log.t_s, log.q_rad, self.predicted, log.goal_rad, log.enabled.astype(int), strict=True
        )
        for row in rows:
            w.writerow([f"{row[0]:.6f}", f"{row[1]:.6f}", f"{row[2]:.6f}", f"{row[3]:.6f}", row[4]])
        write_text_atomic(out, buf.getvalue())

    def plot(self, path: Path) -> None:
        title = f"{self.log.path.name} (kp {self.log.kp_fw:g}): MAE {self.mae_rad:.4f} rad"
        plot_replay(path, self.log, self.predicted, title)


def replay_actuator(act_path: Path, log_path: Path) -> Replay:
    """Simulate the bench of ``log_path`` with the actuator of ``act_path``."""
    cfg = load_actuator(act_path)
    log = read_servo_log(log_path)
    pred = simulate(cfg, [log])[0, 0, : len(log.t_s)]
    return Replay(log, pred, float(np.abs(pred - log.q_rad)[log.enabled].mean()))
