"""The actuator models by name, as the CLI, the comparison and the benchmark know them, and one
way to fit any of them to bench logs.

Physical models (DC-motor servo with the firmware's proportional law, fitted by CMA-ES on the
simulated position error, :mod:`sim2real.actuators.fit`):

- ``pd`` (ideal PD servo), ``dc`` (DC motor, no friction);
- a friction kind of :mod:`sim2real.sim.friction` (BAM's ``coulomb-viscous``, ``stribeck``,
  ``load-dependent``, ``load-dependent-stribeck``, ``directional``, ``quadratic``, and the
  ``smooth`` law of the identification and the environments): the DC servo with it;
- ``<kind>-droop``: the same with the torque constant's droop at high current fitted too.

Learned networks (:mod:`sim2real.actuators.network`, trained on inverse-dynamics torques):
``net`` (error and velocity: cannot tell the gains apart), ``net-kp`` (error times kp),
``net-volts`` (the firmware law's motor voltage in front of the network).

The firmware law's constants (error gain, PWM limit) come from the logs' PWM column where it
pins them (:func:`sim2real.actuators.firmware.identify_firmware`), else from the defaults.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from sim2real.actuators.firmware import FirmwareLaw
from sim2real.actuators.fit import evaluate, fit_actuator
from sim2real.actuators.models import DCServoConfig, PDServoConfig
from sim2real.actuators.servo_log import ServoLog
from sim2real.core.errors import InputError
from sim2real.sim.friction import FRICTION_PARAMS

FRICTIONS = [k for k in FRICTION_PARAMS if k != "none"]
PHYSICAL = ("pd", "dc", *FRICTIONS, *[f"{k}-droop" for k in FRICTIONS])
NETWORKS: dict[str, dict] = {
    "net": {},
    "net-kp": {"error_times_kp": True},
    "net-volts": {"motor_voltage": True},
}
ALL_MODELS = (*PHYSICAL, *NETWORKS)
AUTO_CANDIDATES = (
    "coulomb-viscous",
    "load-dependent",
    "directional",
    "quadratic",
    "load-dependent-droop",
    "directional-droop",
    "net-volts",
)
"""What ``actuator fit --model auto`` chooses among by default."""


def check_names(names, option: str = "--model") -> None:
    for name in names:
        if name not in ALL_MODELS:
            raise InputError(
                option, None, f"expected some of {', '.join(ALL_MODELS)}, got {name!r}"
            )


def is_physical(name: str) -> bool:
    return name in PHYSICAL


def make_config(name: str, law: FirmwareLaw | None = None):
    """Default config of physical model ``name``, with the firmware law's constants."""
    check_names([name])
    if name not in PHYSICAL:
        raise InputError("--model", None, f"{name!r} is a network, not a physical model")
    if name == "pd":
        return PDServoConfig()
    droop = name.endswith("-droop")
    kind = name.removesuffix("-droop")
    cfg = DCServoConfig(
        friction="none" if kind == "dc" else kind, free=["kt_droop_per_A"] if droop else []
    )
    if law is not None:
        cfg = cfg.with_values(law.values())
    return cfg


def n_params(name: str) -> int:
    """Fitted parameters of a physical model; a network counts as more than any."""
    if name in NETWORKS:
        return 10**6
    return int(make_config(name).param_space().free_mask().sum())


@dataclass
class FitSettings:
    """How hard a physical fit tries: CMA-ES population, evaluations per run, runs
    (``restarts + 1``, the lowest train MAE kept), a time budget for all runs [s], the seed
    (a network's training seed too)."""

    popsize: int = 32
    max_evals: int = 2000
    restarts: int = 2
    time_budget_s: float = 120.0
    seed: int = 0


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
    at_bounds: tuple = ()


def fit_network(
    train: list[ServoLog],
    model: str = "net",
    seed: int = 0,
    restarts: int = 0,
    law: FirmwareLaw | None = None,
) -> NetFit:
    """Train the network ``model`` on ``train`` and simulate the bench with it on the same
    logs (nothing is written). ``restarts + 1`` trainings (seeds ``seed``, ``seed + 1``, ...):
    the lowest simulated train MAE wins (the closed-loop error varies with the
    initialisation more than the torque fit does)."""
    from sim2real.actuators.network import train_network

    t0 = time.perf_counter()
    options = dict(NETWORKS[model])
    if options.get("motor_voltage") and law is not None:
        options["firmware"] = law.values()
    best = None
    for s in range(seed, seed + restarts + 1):
        trained = train_network(train, seed=s, **options)
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


def fit_model(
    name: str, logs: list[ServoLog], settings: FitSettings, law: FirmwareLaw | None = None
):
    """Fit (or train) model ``name`` on ``logs``: an ``ActuatorFit`` or a :class:`NetFit`."""
    check_names([name])
    if name in NETWORKS:
        return fit_network(logs, name, settings.seed, settings.restarts, law)
    return fit_actuator(
        make_config(name, law),
        logs,
        max_evals=settings.max_evals,
        popsize=settings.popsize,
        restarts=settings.restarts,
        time_budget_s=settings.time_budget_s,
        seed=settings.seed,
    )
