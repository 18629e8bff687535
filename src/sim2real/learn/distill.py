"""Teacher-student distillation (DAgger): a privileged teacher becomes a deployable student.

The student's actor reads only deployable groups (``policy``: a history of measured positions,
velocities and its own past actions). It drives the randomized environment itself (with the
teacher taking over a fraction ``beta`` of the actions, decaying from round to round); the
teacher labels every visited state with its own deterministic action, and the student is
regressed onto the aggregated labels. Imitating on the student's own state distribution is what
makes DAgger work where plain behaviour cloning drifts (Ross, Gordon & Bagnell 2011).

The result is an ordinary run folder (``policy.pt``, ``config.yaml``, ``metrics.csv``,
``distill.json``) that :func:`~sim2real.learn.policy.load_policy` reads and export accepts.
"""

from __future__ import annotations

import csv
import io
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml
from pydantic import Field

from sim2real.core.atomic import write_text_atomic
from sim2real.core.errors import InputError
from sim2real.core.strict import StrictModel
from sim2real.learn.policy import Policy, PolicyMeta, load_policy, save_policy
from sim2real.learn.ppo import Actor, NetConfig
from sim2real.learn.run_folder import progress_bar
from sim2real.learn.train import EnvFactory, default_make_env
from sim2real.learn.vec import ObsRoles, VecEnv, close_env, concat_obs


class DistillConfig(StrictModel):
    """Settings of one DAgger distillation."""

    student_actor: tuple[str, ...] = Field(("policy",), description="groups the student reads")
    num_envs: int = Field(64, ge=1, description="environments stepped together")
    rounds: int = Field(20, ge=1, description="collect-then-train rounds")
    steps_per_round: int = Field(200, ge=1, description="steps per environment per round")
    beta_start: float = Field(1.0, ge=0, le=1, description="teacher's share of actions, round 0")
    beta_decay: float = Field(0.5, ge=0, le=1, description="beta multiplier per round")
    buffer_size: int = Field(400_000, ge=1, description="labelled states kept (newest)")
    epochs: int = Field(4, ge=1, description="passes over the buffer per round")
    minibatch_size: int = Field(2048, ge=1, description="labelled states per gradient step")
    learning_rate: float = Field(1e-3, gt=0, description="Adam learning rate of the student")
    net: NetConfig | None = Field(None, description="student network (default: the teacher's)")
    eval_episodes: int = Field(64, ge=1, description="episodes to compare student and teacher")
    seed: int = Field(
        0, description="seeds the environments, the student's weights and the sampling"
    )
    torch_threads: int = Field(1, ge=1, description="torch CPU threads (small networks: 1)")


@dataclass
class DistillResult:
    out_run: Path
    teacher_return: float
    student_return: float
    teacher_success: float
    student_success: float
    samples: int
    wall_s: float

    @property
    def return_ratio(self) -> float:
        """Student over teacher return (both negative: teacher over student), <= 1 is worse."""
        t, s = self.teacher_return, self.student_return
        if t > 0:
            return s / t
        return t / s if s < 0 else float("inf")

    def summary(self) -> str:
        return (
            f"student return {self.student_return:.1f} vs teacher {self.teacher_return:.1f} "
            f"({100 * self.return_ratio:.0f} %), success {100 * self.student_success:.0f} % vs "
            f"{100 * self.teacher_success:.0f} %, {self.samples} labelled states, "
            f"{self.wall_s:.0f} s"
        )


@dataclass
class EpisodeStats:
    mean_return: float
    success_rate: float
    episodes: int


def run_episodes(env: VecEnv, act: Callable[[dict], np.ndarray], seed: int) -> EpisodeStats:
    """The first episode of every environment of ``env`` (reset with ``seed``) under the
    deterministic ``act``: mean return and success rate over ``env.num_envs`` episodes."""
    obs = env.reset(seed=seed)
    returns = np.full(env.num_envs, np.nan)
    success = np.full(env.num_envs, np.nan)
    for _ in range(env.max_episode_steps + 1):
        result = env.step(act(obs))
        ended = np.isfinite(result.info["episode_return"]) & np.isnan(returns)
        returns[ended] = result.info["episode_return"][ended]
        success[ended] = result.info["episode_success"][ended]
        if np.isfinite(returns).all():
            break
        obs = result.obs
    done = np.isfinite(returns)
    return EpisodeStats(float(returns[done].mean()), float(success[done].mean()), int(done.sum()))


def distill(
    teacher_run: str | Path,
    out_run: str | Path,
    config: DistillConfig | None = None,
    *,
    quiet: bool = False,
    make_env: EnvFactory | None = None,
) -> DistillResult:
    """Distill the policy of ``teacher_run`` into a deployable student in ``out_run``."""
    cfg = config or DistillConfig()
    make_env = make_env or default_make_env
    out_run = Path(out_run)
    teacher = load_policy(teacher_run)
    roles = ObsRoles(actor=tuple(cfg.student_actor), critic=teacher.roles.critic)
    try:
        roles.check(teacher.obs_groups)
    except KeyError as exc:
        raise InputError("student_actor", None, str(exc.args[0])) from exc
    if not roles.deployable(teacher.obs_groups):
        raise InputError("student_actor", None, "the student must read deployable groups only")
    torch.set_num_threads(cfg.torch_threads)
    env = make_env(
        teacher.env_id, cfg.num_envs, seed=cfg.seed, dr=teacher.dr, config=teacher.env_config
    )
    net = cfg.net or teacher.meta.net
    torch.manual_seed(cfg.seed)
    generator = torch.Generator().manual_seed(cfg.seed)
    obs_dim = sum(env.obs_groups[n].dim for n in roles.actor)
    student = Actor(obs_dim, env.action_dim, net)
    optimizer = torch.optim.Adam(student.net.parameters(), lr=cfg.learning_rate)
    buffer_obs = torch.zeros(cfg.buffer_size, obs_dim)
    buffer_act = torch.zeros(cfg.buffer_size, env.action_dim)
    filled, cursor, rows = 0, 0, []
    start = time.perf_counter()
    obs = env.reset(seed=cfg.seed)
    with progress_bar(quiet) as progress:
        task = progress.add_task("distill", total=cfg.rounds, rate="-", info="")
        for round_ in range(cfg.rounds):
            beta = cfg.beta_start * cfg.beta_decay**round_
            visited = []
            with torch.no_grad():
                for _ in range(cfg.steps_per_round):
                    s_obs = torch.from_numpy(concat_obs(obs, roles.actor))
                    label = _teacher_action(teacher, obs)
                    mine = student(s_obs).clamp(-1.0, 1.0)
                    use_teacher = torch.rand(cfg.num_envs, generator=generator) < beta
                    action = torch.where(use_teacher[:, None], label, mine)
                    idx = (cursor + torch.arange(cfg.num_envs)) % cfg.buffer_size
                    buffer_obs[idx], buffer_act[idx] = s_obs, label
                    cursor = int((cursor + cfg.num_envs) % cfg.buffer_size)
                    filled = min(cfg.buffer_size, filled + cfg.num_envs)
                    visited.append(s_obs)
                    obs = env.step(action.numpy()).obs
            student.normalizer.update(torch.cat(visited))
            loss = _regress(
                student, optimizer, buffer_obs[:filled], buffer_act[:filled], cfg, generator
            )
            rows.append(
                {
                    "round": round_ + 1,
                    "beta": beta,
                    "samples": filled,
                    "loss": loss,
                    "wall_s": time.perf_counter() - start,
                }
            )
            progress.update(task, completed=round_ + 1, rate="-", info=f"loss {loss:.4f}")

    from sim2real.learn.evaluate import task_config  # episodes start as the task says

    eval_env = make_env(
        teacher.env_id,
        cfg.eval_episodes,
        seed=cfg.seed + 1,
        dr=teacher.dr,
        config=task_config(teacher.env_config),
    )
    teacher_stats = run_episodes(eval_env, teacher.act, cfg.seed + 1)
    student_meta = PolicyMeta.from_env(
        env,
        roles,
        dr=teacher.dr,
        env_config=teacher.env_config,
        net=net,
        kind="distill",
        env_steps=cfg.rounds * cfg.steps_per_round * cfg.num_envs,
    )
    student_policy = Policy(student, student_meta)
    student_stats = run_episodes(eval_env, student_policy.act, cfg.seed + 1)
    close_env(env)
    close_env(eval_env)
    result = DistillResult(
        out_run=out_run,
        teacher_return=teacher_stats.mean_return,
        student_return=student_stats.mean_return,
        teacher_success=teacher_stats.success_rate,
        student_success=student_stats.success_rate,
        samples=filled,
        wall_s=time.perf_counter() - start,
    )
    _write_run(out_run, teacher_run, teacher, cfg, rows, result)
    save_policy(out_run, student, student_meta)
    return result


def _teacher_action(teacher: Policy, obs: dict[str, np.ndarray]) -> torch.Tensor:
    x = torch.from_numpy(concat_obs(obs, teacher.roles.actor))
    return teacher.actor(x).clamp(-1.0, 1.0)


def _regress(
    student: Actor,
    optimizer: torch.optim.Optimizer,
    obs: torch.Tensor,
    target: torch.Tensor,
    cfg: DistillConfig,
    generator: torch.Generator,
) -> float:
    """Epochs of minibatch mean-squared-error steps; the last epoch's mean loss."""
    n = obs.shape[0]
    for _ in range(cfg.epochs):
        perm = torch.randperm(n, generator=generator)
        total, batches = 0.0, 0
        for s in range(0, n, cfg.minibatch_size):
            idx = perm[s : s + cfg.minibatch_size]
            loss = ((student(obs[idx]) - target[idx]) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
            batches += 1
    return total / batches


def _write_run(
    out_run: Path,
    teacher_run: str | Path,
    teacher: Policy,
    cfg: DistillConfig,
    rows: list[dict[str, Any]],
    result: DistillResult,
) -> None:
    resolved = {
        "teacher_run": str(teacher_run),
        "env_id": teacher.env_id,
        "dr": teacher.dr,
        "env_config": teacher.env_config,
        "distill": json.loads(cfg.model_dump_json()),
    }
    write_text_atomic(out_run / "config.yaml", yaml.safe_dump(resolved, sort_keys=False))
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    write_text_atomic(out_run / "metrics.csv", buf.getvalue())
    summary = {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(result).items()}
    summary["return_ratio"] = result.return_ratio
    write_text_atomic(out_run / "distill.json", json.dumps(summary, indent=2) + "\n")
