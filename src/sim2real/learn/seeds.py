"""Several seeds of one training, the best kept by its score on *validation* worlds.

PPO on a swing-up is seed-sensitive: with one setting some seeds learn to pump and some stand
still. ``policy train --seeds 0-4`` trains every seed into ``OUT/seed-<k>/`` (in parallel
where the cores allow), evaluates each on the task's validation realities
(:mod:`sim2real.learn.reality_sets`; never the evaluation ones, which report transfer), keeps
the best as ``OUT/best`` (a relative link to its folder), writes ``OUT/report/`` (every seed's
training curve and validation table) and ``OUT/seeds.json``: every
seed's training result and validation figures, and which one was kept and why. Score: mean
success rate over the validation worlds, ties broken by mean return. A sweep that stopped
continues: a seed folder with a saved run resumes, a finished one costs nothing. A curriculum
runs over a sweep stage by stage: ``--seeds 0-4 --resume --dr ... --env-config ...`` resumes
every seed on the next stage's conditions (run again, it continues that stage).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from sim2real.core.atomic import write_text_atomic
from sim2real.core.cores import usable_cores
from sim2real.core.errors import InputError
from sim2real.core.local_jobs import JobRunner, local_runner
from sim2real.core.seed_range import MAX_SEED
from sim2real.core.stop_request import StoppedError
from sim2real.learn.validation_score import mean_over, score_key

SEEDS_FILE = "seeds.json"
BEST_LINK = "best"
REPORT_DIR = "report"


MAX_SEEDS = 1000
"""A sweep trains a run per seed: more is a typo (0-100000000 filled memory before any)."""


def parse_seeds(text: str, source: str = "--seeds") -> list[int]:
    """'0-4' -> [0, 1, 2, 3, 4]; '1,3,7' and '0-2,9' too. Empty or descending ranges,
    negative seeds and repeats are refused."""
    seeds: list[int] = []
    for part in (p.strip() for p in str(text).split(",")):
        match = re.fullmatch(r"(\d+)(?:\s*-\s*(\d+))?", part)
        if not match:
            raise InputError(source, None, f"'{text}': give seeds >= 0 as 0-4, 1,3,7 or 0-2,9")
        lo = int(match.group(1))
        hi = int(match.group(2)) if match.group(2) is not None else lo
        if hi < lo:
            raise InputError(source, None, f"'{part}' is an empty range (write low-high)")
        if hi > MAX_SEED:
            raise InputError(source, None, f"seed {hi} is over {MAX_SEED} (numpy's seed range)")
        if len(seeds) + hi - lo + 1 > MAX_SEEDS:
            raise InputError(source, None, f"'{text}' is over {MAX_SEEDS} seeds: one run each")
        seeds += range(lo, hi + 1)
    repeated = sorted({s for s in seeds if seeds.count(s) > 1})
    if repeated:
        raise InputError(source, None, f"seed {repeated[0]} given twice")
    return seeds


def seed_dir(out: Path, seed: int) -> Path:
    return out / f"seed-{seed}"


@dataclass
class SeedScore:
    seed: int
    run_dir: Path
    train: dict[str, float]
    validation: list[dict[str, Any]]

    @property
    def success(self) -> float:
        return mean_over(self.validation, "success_rate")

    @property
    def mean_return(self) -> float:
        return mean_over(self.validation, "mean_return")

    def key(self) -> tuple[float, float]:
        return score_key(self.success, self.mean_return)


@dataclass
class SeedSweep:
    out: Path
    scores: list[SeedScore]
    best: SeedScore
    validation: list[str]

    def lines(self) -> list[str]:
        rows = []
        for s in self.scores:
            kept = s.train.get("kept_iteration")
            at = "" if kept is None else f", policy of iteration {kept:.0f}"
            rows.append(
                f"seed {s.seed}: validation success {100 * s.success:.0f} %, return "
                f"{s.mean_return:.0f} (training {100 * s.train['success_rate']:.0f} %{at})"
                + ("  <- kept" if s is self.best else "")
            )
        worlds = ", ".join(self.validation)
        return [*rows, f"best: seed {self.best.seed} ({self.out / BEST_LINK}), on {worlds}"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "validation_worlds": self.validation,
            "rule": "highest mean validation success rate, then highest mean return",
            "best_seed": self.best.seed,
            "seeds": [
                {
                    "seed": s.seed,
                    "run": s.run_dir.name,
                    "train": s.train,
                    "validation": s.validation,
                    "validation_success": s.success,
                    "validation_return": s.mean_return,
                }
                for s in self.scores
            ],
        }


def default_workers(torch_threads: int) -> int:
    """Trainings that fit the cores side by side (each runs ``torch_threads`` threads)."""
    return max(1, usable_cores() // max(1, torch_threads))


def train_one_seed(
    run_dir: Path,
    env_id: str,
    seed: int,
    train_kw: dict[str, Any],
    new_conditions: dict[str, Any] | None = None,
    own_total: bool = False,
    quiet: bool = False,
) -> dict:
    """One seed's training (resumed when its folder holds a saved run, on ``new_conditions``
    when given: the sweep's next stage; to the run's own total when ``own_total``, else to
    ``train_config``'s); its summary figures."""
    from sim2real.learn.train import TRAIN_STATE_FILE, train

    resume = (run_dir / TRAIN_STATE_FILE).is_file()
    cfg = train_kw["train_config"].model_copy(update={"seed": seed})
    if resume and own_total:
        cfg = None  # train() takes the run's own settings
    kw = {**train_kw, "train_config": cfg, "new_conditions": new_conditions}
    label = f"seed {seed}"  # side by side: labelled lines, not bars drawn over each other
    result = train(run_dir, env_id, **kw, resume=resume, quiet=quiet, progress_label=label)
    return {
        "env_steps": result.env_steps,
        "wall_s": result.wall_s,
        "mean_return": result.mean_return,
        "success_rate": result.success_rate,
        **({"kept_iteration": result.kept["iteration"]} if result.kept else {}),
    }


def train_seeds(
    out: str | Path,
    env_id: str,
    seeds: Sequence[int],
    *,
    train_kw: dict[str, Any],
    validation: Sequence[str],
    episodes: int = 50,
    eval_seed: int = 7,
    run_jobs: JobRunner | None = None,
    new_conditions: dict[str, Any] | None = None,
    own_totals: bool = False,
    quiet: bool = False,
) -> SeedSweep:
    """Train ``seeds`` into ``out/seed-<k>`` and keep the best on ``validation`` (reality names
    or paths). ``train_kw``: :func:`sim2real.learn.train.train`'s keywords (``train_config``
    required; its seed is replaced; of a seed that resumes, only its ``total_env_steps``).
    ``new_conditions`` (``dr`` and / or ``env_config``): the sweep's next stage, every seed's
    run resumed on them (each seed must hold a run). ``own_totals``: a seed that resumes
    finishes its own run's total (``--resume`` without ``--steps``), not ``train_config``'s.
    Unless ``quiet``, each seed logs its progress on stderr every half-minute. Realities are
    loaded before any training, so a bad one fails first."""
    from sim2real.learn.evaluate import evaluate_policy
    from sim2real.learn.policy import load_policy
    from sim2real.learn.reality import load_reality
    from sim2real.learn.report import write_policy_report

    if not seeds:
        raise InputError("--seeds", None, "no seed to train")
    if not validation:
        raise InputError("validation", None, f"{env_id} ships no validation worlds: give some")
    worlds = [load_reality(r) for r in validation]
    out = Path(out)
    if new_conditions:
        from sim2real.learn.train import TRAIN_STATE_FILE

        missing = [s for s in seeds if not (seed_dir(out, s) / TRAIN_STATE_FILE).is_file()]
        if missing:
            why = f"holds no run of seed {missing[0]} to resume: a sweep's first stage is --seeds"
            raise InputError(out, None, why + " without --resume")
    out.mkdir(parents=True, exist_ok=True)
    cfg = train_kw["train_config"]
    run_jobs = run_jobs or local_runner(default_workers(cfg.torch_threads))
    jobs = [
        partial(
            train_one_seed, seed_dir(out, s), env_id, s, train_kw, new_conditions, own_totals, quiet
        )
        for s in seeds
    ]
    try:
        trained = run_jobs(jobs)
    except (KeyboardInterrupt, StoppedError):
        why = "stopped (Ctrl-C): the same command continues every seed from its last save"
        raise StoppedError(out, None, why) from None
    scores, by_run = [], {}
    for seed, summary in zip(seeds, trained, strict=True):
        policy = load_policy(seed_dir(out, seed), expected_env_id=env_id)
        results = evaluate_policy(policy, worlds, episodes=episodes, seed=eval_seed, training=False)
        by_run[str(seed_dir(out, seed))] = results
        scores.append(SeedScore(seed, seed_dir(out, seed), summary, [r.to_dict() for r in results]))
    best = max(scores, key=SeedScore.key)  # first of equals: the seed given first
    sweep = SeedSweep(out, scores, best, [w.name for w in worlds])
    write_policy_report(out / REPORT_DIR, by_run, worlds)  # every seed's curve and score
    write_text_atomic(out / SEEDS_FILE, json.dumps(sweep.to_dict(), indent=2) + "\n")
    _point_best(out, best.run_dir)
    return sweep


def _point_best(out: Path, target: Path) -> None:
    """``out/best`` -> the kept seed's folder, replaced atomically."""
    link, tmp = out / BEST_LINK, out / f".{BEST_LINK}.tmp"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(target.name, target_is_directory=True)
    os.replace(tmp, link)
