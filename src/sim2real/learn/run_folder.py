"""The files of a training run folder, written atomically, and the progress display.

``RUN/config.yaml`` (the fully resolved settings), ``RUN/metrics.csv`` (the training curve, one
row per iteration), ``RUN/train_state.pt`` (everything needed to continue exactly: our own
pickled file, never someone else's), and a progress bar with steps/s and the time remaining.
"""

from __future__ import annotations

import csv
import io
import math
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml

from sim2real.core.atomic import atomic_path, write_text_atomic
from sim2real.core.errors import InputError
from sim2real.learn.vec import ObsRoles

TRAIN_STATE_FILE = "train_state.pt"
METRICS_FILE = "metrics.csv"
METRIC_COLUMNS = (
    "iteration",
    "env_steps",
    "wall_s",
    "steps_per_s",
    "collect_s",
    "learn_s",
    "mean_return",
    "success_rate",
    "episodes",
    "policy_loss",
    "value_loss",
    "entropy",
    "kl",
    "bound_loss",
    "learning_rate",
    "action_std",
)
TIMING_COLUMNS = ("wall_s", "steps_per_s", "collect_s", "learn_s")


def write_metrics(run_dir: Path, rows: list[dict[str, float]]) -> None:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=METRIC_COLUMNS, lineterminator="\n")
    w.writeheader()
    for row in rows:
        w.writerow({k: row[k] for k in METRIC_COLUMNS})
    write_text_atomic(run_dir / METRICS_FILE, buf.getvalue())


def read_metrics(run_dir: str | Path) -> list[dict[str, float]]:
    """The training curve of a run, one dict of floats per iteration."""
    with open(Path(run_dir) / METRICS_FILE, newline="") as f:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]


def write_config(
    run_dir: Path,
    env_id: str,
    dr: Any,
    env_config: dict,
    roles: ObsRoles,
    train: dict,
    stages: list[dict] | None = None,
) -> None:
    """``config.yaml``: the run's current conditions, and with more than one ``stages`` (resumed
    on new conditions) each one with the iteration it began at."""
    resolved = {
        "env_id": env_id,
        "dr": dr,
        "env_config": env_config,
        "roles": {"actor": list(roles.actor), "critic": list(roles.critic)},
        "train": train,
        **({"stages": stages} if stages and len(stages) > 1 else {}),
    }
    text = yaml.dump(resolved, Dumper=_PlainDumper, sort_keys=False)
    write_text_atomic(run_dir / "config.yaml", text)


class _PlainDumper(yaml.SafeDumper):
    """Writes a mapping met twice (the current conditions, the last stage) twice, not as an
    anchor and an alias."""

    def ignore_aliases(self, data) -> bool:
        return True


def save_train_state(run_dir: Path, state: dict[str, Any]) -> None:
    with atomic_path(run_dir / TRAIN_STATE_FILE) as tmp:
        torch.save(state, tmp)


def load_train_state(run_dir: Path, env_id: str) -> dict[str, Any]:
    path = run_dir / TRAIN_STATE_FILE
    if not path.is_file():
        raise InputError(path, None, "no checkpoint to resume from")
    try:
        # our own file: it holds the environment's pickled state, hence weights_only=False
        state = torch.load(path, map_location="cpu", weights_only=False)
        saved_env = state["env_id"]
    except Exception as exc:
        raise InputError(path, None, f"not a readable checkpoint ({exc})") from exc
    if saved_env != env_id:
        raise InputError(path, "env_id", f"checkpoint of {saved_env!r}, not of {env_id!r}")
    return state


class _Quiet:
    def __enter__(self) -> _Quiet:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def add_task(self, *a: Any, **kw: Any) -> int:
        return 0

    def update(self, *a: Any, **kw: Any) -> None:
        return None


def progress_bar(quiet: bool, label: str | None = None) -> Any:
    """A training's bar (steps, steps/s, time left, return and success); in a log, or with a
    ``label`` (one of several trainings side by side), the same as a line every half-minute."""
    if quiet:
        return _Quiet()
    from rich.progress import BarColumn, TextColumn, TimeRemainingColumn

    from sim2real.core.log_progress import progress_for

    return progress_for(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed:,}/{task.total:,} steps"),
        TextColumn("{task.fields[rate]} steps/s"),
        TimeRemainingColumn(),
        TextColumn("{task.fields[info]}"),
        label=label,
    )


def metrics_row(
    iteration: int,
    env_steps: int,
    episodes: deque,
    losses: dict[str, float],
    storage: Any,
    t0: float,
    t1: float,
    t2: float,
) -> dict[str, float]:
    """One iteration's row of the training curve (its ``wall_s`` filled by the caller);
    ``episodes``: (return, success) of the last finished episodes."""
    arr = np.array(episodes, dtype=float).reshape(-1, 2)
    action_std = storage.sigma.mean().item()  # of the rollout (state-dependent with gSDE)
    return {
        "iteration": iteration,
        "env_steps": env_steps,
        "wall_s": 0.0,
        "steps_per_s": (env_steps / iteration) / max(t2 - t0, 1e-9),
        "collect_s": t1 - t0,
        "learn_s": t2 - t1,
        "mean_return": float(arr[:, 0].mean()) if len(arr) else math.nan,
        "success_rate": float(arr[:, 1].mean()) if len(arr) else math.nan,
        "episodes": len(arr),
        **losses,
        "action_std": action_std,
    }


@dataclass
class TrainResult:
    run_dir: Path
    iterations: int
    env_steps: int
    wall_s: float
    mean_return: float  # over the last episode window
    success_rate: float
    deployable: bool
    kept: dict[str, float] | None = None  # the validation row of the kept policy (validate_every)

    def summary(self) -> str:
        kept = (
            f"; kept iteration {self.kept['iteration']:.0f}: validation success "
            f"{100 * self.kept['success']:.0f} %"
            if self.kept
            else ""
        )
        return (
            f"{self.iterations} iterations, {self.env_steps} env steps in {self.wall_s:.0f} s: "
            f"return {self.mean_return:.1f}, success {100 * self.success_rate:.0f} %{kept}"
            f"{'' if self.deployable else ' (privileged: distill before export)'}"
        )
