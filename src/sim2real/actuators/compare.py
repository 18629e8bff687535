"""Comparing actuator models on one bench and choosing one by validation: each model is judged
by leave one gain out among the training logs' gains (fitted on the other gains, position MAE
of the simulated bench on the held-out one), then fitted on all training logs and, with a
``--holdout-kp``, judged on that gain too. The choice (:mod:`sim2real.actuators.select`) uses
the leave-one-gain-out errors only, never the training error.

Writes a table (``comparison.csv``), each fitted model, and per held-out log a plot of the
measured position against every model's prediction, gathered in an HTML report. Used by
``sim2real actuator compare``, ``actuator fit --model auto``, the benchmark and the demo.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from sim2real.actuators.catalog import FitSettings, fit_model, is_physical, n_params
from sim2real.actuators.compare_report import comparison_section
from sim2real.actuators.firmware import identify_firmware
from sim2real.actuators.fit import evaluate
from sim2real.actuators.select import (
    Candidate,
    FitCache,
    Selection,
    fold_jobs,
    gains_of,
    select_model,
)
from sim2real.actuators.servo_log import ServoLog, check_steps, read_logs, split_logs


@dataclass
class ModelResult:
    """One row of the comparison; MAEs in rad (``holdout_mae_rad`` None without hold-out);
    ``logo`` the leave-one-gain-out record (None with fewer than two training gains)."""

    name: str
    config: object
    train_mae_rad: float
    holdout_mae_rad: float | None
    fit_time_s: float
    fit: object = None
    """What the fitter returned (a physical fit or a trained network), for saving."""
    logo: Candidate | None = None
    at_bounds: list[str] = field(default_factory=list)

    def save(self, path: Path, extra: dict | None = None) -> Path:
        """The fitted model as an actuator YAML (a network's ``.pt`` / ``.onnx`` beside)."""
        from sim2real.actuators.models import save_actuator
        from sim2real.actuators.network import save_network

        record = {
            "train_mae_rad": self.train_mae_rad,
            "holdout_mae_rad": self.holdout_mae_rad,
            "at_bounds": list(self.at_bounds),
            **(extra or {}),
        }
        trained = getattr(self.fit, "trained", None)
        if trained is not None:
            save_network(trained, path, {"fit": record})
        else:
            save_actuator(self.config, path, {"fit": record})
        return path


def make_cache(settings: FitSettings, processes: int | None = None) -> FitCache:
    """Fits by (model, gains), each with the firmware law of the logs it is fitted on; the
    independent fits of a selection or comparison run in ``processes`` worker processes
    (default: one per usable core; each fit runs on one)."""
    from sim2real.core.cores import usable_cores

    fit = partial(_fit_with_firmware, settings=settings)
    return FitCache(fit, usable_cores() if processes is None else processes)


def _fit_with_firmware(name: str, logs: list[ServoLog], settings: FitSettings):
    return fit_model(name, logs, settings, identify_firmware(logs))


def compare_models(
    models: list[str],
    train: list[ServoLog],
    hold: list[ServoLog],
    *,
    settings: FitSettings | None = None,
    select: bool = True,
    cache: FitCache | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[list[ModelResult], Selection | None]:
    """Each model's leave-one-gain-out record on ``train`` (when ``select`` and ``train`` has
    two gains or more) and the choice, then its fit on all of ``train`` judged on ``train``
    and ``hold``."""
    cache = cache or make_cache(settings or FitSettings())
    selection = None
    select = select and len(gains_of(train)) >= 2
    jobs = (fold_jobs(models, train) if select else []) + [(name, train) for name in models]
    with cache.parallel(jobs):  # the selection's fits and the final ones, side by side
        if select:
            selection = select_model(
                models, train, cache, evaluate, n_params, is_physical, progress
            )
        rows = [_row(name, cache, train, hold, selection, progress) for name in models]
    return rows, selection


def _row(name, cache, train, hold, selection, progress) -> ModelResult:
    """``name``'s fit on all of ``train``, judged on ``hold``."""
    fit = cache.get(name, train)
    row = ModelResult(
        name,
        fit.config,
        float(fit.train_mae_rad),
        evaluate(fit.config, hold) if hold else None,
        fit.fit_time_s,
        fit,
        selection.candidate(name) if selection else None,
        list(fit.at_bounds),
    )
    if progress is not None:
        held = f", hold-out {row.holdout_mae_rad:.4f}" if hold else ""
        progress(f"{name}: train {row.train_mae_rad:.4f} rad{held} ({row.fit_time_s:.1f} s)")
    return row


def describe(train: list[ServoLog], hold: list[ServoLog], selection: Selection | None) -> str:
    """The report's text: what was fitted, judged and chosen."""
    gains = ", ".join(f"{g:g}" for g in gains_of(train))
    text = f"Fitted on {len(train)} logs at kp {gains}"
    if hold:
        text += f"; judged on the {len(hold)} logs at kp {gains_of(hold)[0]:g}, which no fit saw"
    text += (
        ". Position MAE of the bench simulated with each model, driven by the logged goal "
        "positions (torque-enabled samples)."
    )
    if selection is None:
        return text + " Leave one gain out needs training logs at two gains: no model chosen."
    return text + f" Chosen: {selection.chosen}, {selection.reason}."


def compare_command(
    log_paths: list[Path],
    models: list[str],
    out: Path,
    holdout_kp: float | None,
    settings: FitSettings | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[list[ModelResult], Selection | None, Path]:
    """``sim2real actuator compare``: judge and fit every model, save each
    (``OUT/<model>.yaml``) and write ``OUT/comparison.csv`` and the report ``OUT/index.html``."""
    from sim2real.actuators.catalog import check_names
    from sim2real.core.atomic import check_writable
    from sim2real.core.report import write_html_report

    check_names(models, "--models")
    check_writable(out, "--out", folder=True)
    logs = read_logs(log_paths)
    check_steps(logs)
    train, hold = split_logs(logs, holdout_kp)
    rows, selection = compare_models(models, train, hold, settings=settings, progress=progress)
    out.mkdir(parents=True, exist_ok=True)
    for row in rows:
        row.save(out / f"{row.name}.yaml", {"selection": selection.record()} if selection else {})
    section = comparison_section(
        out, rows, hold or train, "Actuator models compared", describe(train, hold, selection),
        selection.gains if selection else [],
    )  # fmt: skip
    return rows, selection, write_html_report(out, "sim2real actuator comparison", [section])
