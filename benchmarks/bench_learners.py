"""Learners side by side (issue 17, part 2): our PPO and SB3's SAC on the same environments
with the same environment-step budget. rsl-rl-lib's PPO was measured here too (commit a95a2b8,
figures in benchmarks/RESULTS.md): it lost to our PPO on every configuration tried and was
removed, adapter and dependency.

python benchmarks/bench_learners.py [--out runs/bench_learners.json]
    [--tasks pendulum pendubot cartpole] [--seeds 0 1 2 3 4] [--learners ppo sac]
    [--env-steps N] [--episodes 100] [--realities NAME_OR_YAML ...] [--table-only]

One cell per (learner, task, seed): train from scratch with the task's shipped training
settings (``configs/<task>.train.yaml``; SAC its own settings below with the same discount and
number of environments; ``--learners ppo_bound0``: our PPO as shipped but for ``bound_coef``
0, to tell the bound loss from the rest), then evaluate the
deterministic policy over ``--episodes`` episodes in its training conditions and in each validation reality (default:
the task's validation worlds, ``configs/<task>.realities.yaml``, never its evaluation ones).
Every cell is appended to the JSON file as soon as it is done and cells already there are
skipped, so a long run can be stopped and continued; the table is printed from the file. Each
cell records the training wall time, training steps/s, the success rate and mean return per
world, and the load average when it started and ended (the machine is shared: ``nice -n 10``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from sim2real.core.atomic import write_text_atomic
from sim2real.learn.evaluate import evaluate_policy
from sim2real.learn.learners.sac import SACConfig, Sb3SAC
from sim2real.learn.policy import PolicyMeta, load_policy
from sim2real.learn.reality import load_reality
from sim2real.learn.reality_sets import reality_sets
from sim2real.learn.train import TrainConfig, default_train_config, train
from sim2real.learn.vec import ObsRoles, concat_obs

TASKS = {
    "pendulum": "sim2real/PendulumSwingup-v0",
    "pendubot": "sim2real/PendubotSwingup-v0",
    "cartpole": "sim2real/CartpoleSwingup-v0",
}
LEARNERS = ("ppo", "sac")
VARIANTS = ("ppo_bound0",)  # our PPO without the action-bound loss
SAC_SETTINGS = {  # SB3's defaults but for these (the discount and batch come from the task)
    "learning_starts": 10_000,
    # gSDE, its noise drawn once per 32 batch steps (0.32 s at 100 Hz: the exploration over a
    # swing that our PPO gets from noise_correlation_s 0.3), then 32 gradient steps: one per
    # num_envs environment steps, what this CPU allows within the cell's time
    "use_sde": True,
    "train_freq": 32,
    "gradient_steps": 32,
}


class InMemoryPolicy:
    """What :func:`evaluate_policy` reads of a policy, for an actor not saved as ours."""

    def __init__(self, actor: torch.nn.Module, meta: PolicyMeta) -> None:
        self.actor, self.meta = actor, meta
        self.env_id, self.env_config, self.dr = meta.env_id, meta.env_config, meta.dr
        self.roles, self.obs_groups = meta.roles, meta.obs_groups

    def act(self, obs: dict[str, np.ndarray]) -> np.ndarray:
        x = torch.from_numpy(np.atleast_2d(concat_obs(obs, self.roles.actor)))
        with torch.no_grad():
            return self.actor(x).clamp(-1.0, 1.0).numpy()


def load_avg() -> float:
    return os.getloadavg()[0]


def cell_key(learner: str, task: str, seed: int) -> str:
    return f"{learner}/{task}/{seed}"


def task_settings(env_id: str, env_steps: int, seed: int) -> TrainConfig:
    cfg = default_train_config(env_id)
    return cfg.model_copy(update={"total_env_steps": env_steps, "seed": seed})


def train_ours(env_id: str, cfg: TrainConfig, tmp: Path):
    t0 = time.perf_counter()
    result = train(tmp / "run", env_id, train_config=cfg, quiet=True)
    wall = time.perf_counter() - t0
    return load_policy(tmp / "run"), result.env_steps, wall


def train_sac(env_id: str, cfg: TrainConfig):
    from sim2real.learn.envs import make_vec

    torch.set_num_threads(cfg.torch_threads)
    env_config = dict(cfg.training_env)
    env = make_vec(env_id, cfg.num_envs, seed=cfg.seed, dr="default", config=env_config)
    roles = ObsRoles()
    t0 = time.perf_counter()
    sac_cfg = SACConfig(gamma=cfg.ppo.gamma, **SAC_SETTINGS)
    agent = Sb3SAC(
        env,
        config=sac_cfg,
        groups=roles.actor,
        steps_per_iteration=cfg.num_envs * cfg.steps_per_env,
        seed=cfg.seed,
        episode_window=cfg.episode_window,
    )
    iterations = math.ceil(cfg.total_env_steps / agent.batch)
    for _ in range(iterations):
        agent.iterate()
    wall = time.perf_counter() - t0
    meta = PolicyMeta.from_env(env, roles, dr="default", env_config=env_config, net=cfg.net)
    return InMemoryPolicy(agent.policy(), meta), iterations * agent.batch, wall


def run_cell(learner: str, task: str, seed: int, args: argparse.Namespace) -> dict[str, Any]:
    env_id = TASKS[task]
    names = args.realities
    if names is None:
        names = reality_sets(env_id).validation
    worlds = [load_reality(n) for n in names]
    cfg = task_settings(env_id, args.env_steps, seed)
    load_start = load_avg()
    with tempfile.TemporaryDirectory() as tmp:
        if learner in ("ppo", "ppo_bound0"):
            if learner == "ppo_bound0":
                ppo = cfg.ppo.model_copy(update={"bound_coef": 0.0})
                cfg = cfg.model_copy(update={"ppo": ppo})
            policy, steps, wall = train_ours(env_id, cfg, Path(tmp))
        else:
            policy, steps, wall = train_sac(env_id, cfg)
        t0 = time.perf_counter()
        results = evaluate_policy(policy, worlds, episodes=args.episodes, seed=1)
        eval_s = time.perf_counter() - t0
    return {
        "learner": learner,
        "task": task,
        "seed": seed,
        "env_id": env_id,
        "env_steps": steps,
        "train_wall_s": wall,
        "steps_per_s": steps / wall,
        "eval_wall_s": eval_s,
        "episodes": args.episodes,
        "worlds": {r.world: r.to_dict() for r in results},
        "load_avg_start": load_start,
        "load_avg_end": load_avg(),
        "commit": _commit(),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def _commit() -> str:
    """The code measured: $SIM2REAL_COMMIT (a run from an exported tree), else git's HEAD."""
    if os.environ.get("SIM2REAL_COMMIT"):
        return os.environ["SIM2REAL_COMMIT"]
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        )
        dirty = subprocess.run(["git", "status", "--porcelain", "src"], capture_output=True)
        return out.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def read_cells(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text()) if path.is_file() else []


def table(cells: list[dict[str, Any]]) -> str:
    """Per (task, learner): success per seed in each world, median over seeds, time, steps/s."""
    lines = []
    for task in dict.fromkeys(c["task"] for c in cells):
        rows = [c for c in cells if c["task"] == task]
        worlds = list(dict.fromkeys(w for c in rows for w in c["worlds"]))
        lines.append(f"\n{task} ({rows[0]['env_steps']:,} env steps per cell)\n")
        lines.append("| learner | " + " | ".join(worlds) + " | train wall [s] | steps/s |")
        lines.append("|---" * (len(worlds) + 3) + "|")
        for learner in dict.fromkeys(c["learner"] for c in rows):
            mine = sorted((c for c in rows if c["learner"] == learner), key=lambda c: c["seed"])
            cols = []
            for w in worlds:
                rates = [c["worlds"].get(w, {}).get("success_rate", math.nan) for c in mine]
                per_seed = " / ".join(f"{100 * r:.0f}" for r in rates)
                cols.append(f"{per_seed} % (median {100 * statistics.median(rates):.0f})")
            walls = [c["train_wall_s"] for c in mine]
            rates = [c["steps_per_s"] for c in mine]
            seeds = ",".join(str(c["seed"]) for c in mine)
            lines.append(
                f"| {learner} (seeds {seeds}) | "
                + " | ".join(cols)
                + f" | {statistics.median(walls):.0f} | {statistics.median(rates):,.0f} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("runs/bench_learners.json"))
    ap.add_argument("--tasks", nargs="+", choices=list(TASKS), default=list(TASKS))
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    ap.add_argument("--learners", nargs="+", choices=LEARNERS + VARIANTS, default=list(LEARNERS))
    ap.add_argument("--env-steps", type=int, default=5_000_000, help="per cell")
    ap.add_argument("--episodes", type=int, default=100, help="per world")
    ap.add_argument("--realities", nargs="*", default=None, help="validation worlds")
    ap.add_argument("--table-only", action="store_true", help="print the table of --out")
    args = ap.parse_args(argv)
    cells = read_cells(args.out)
    if not args.table_only:
        done = {cell_key(c["learner"], c["task"], c["seed"]) for c in cells}
        for task in args.tasks:
            for seed in args.seeds:
                for learner in args.learners:
                    if cell_key(learner, task, seed) in done:
                        continue
                    print(f"{learner} {task} seed {seed} ...", flush=True, file=sys.stderr)
                    cell = run_cell(learner, task, seed, args)
                    cells.append(cell)
                    args.out.parent.mkdir(parents=True, exist_ok=True)
                    write_text_atomic(args.out, json.dumps(cells, indent=1))
                    worlds = ", ".join(
                        f"{w} {100 * r.get('success_rate', math.nan):.0f} %"
                        for w, r in cell["worlds"].items()
                    )
                    print(
                        f"  {cell['train_wall_s']:.0f} s, {cell['steps_per_s']:,.0f} steps/s, "
                        f"load {cell['load_avg_start']:.1f}-{cell['load_avg_end']:.1f}: {worlds}",
                        flush=True,
                        file=sys.stderr,
                    )
    print(table(cells))


if __name__ == "__main__":
    main()
