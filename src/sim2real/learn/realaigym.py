"""The RealAIGym disturbance protocol in a simulated world: long episodes with random torque
pushes, scored by the fraction of time the tip is above the threshold line.

RealAIGym's real-system competitions (DFKI's "AI Olympics", IROS 2024 / ICRA 2025) run a
swing-up controller on the real double pendulum while the motors inject torque pulses, and
score how long the end effector stays above a line at 0.45 m of its 0.5 m reach. Here: a
reality (:mod:`sim2real.learn.reality`) with ``episode_s`` long episodes (60 s by default) and
pushes on the actuated joint at random intervals, the score the mean over episodes of the
share of control steps with the tip at or above ``threshold`` of its reach (0.9: the
competition's 0.45 m of 0.5 m). IROS 2024 used Gaussian torque peaks of 0.05-0.1 s standard
deviation and 0.2-0.5 N m; the environment pushes with rectangles, so a peak is replaced by
the rectangle of the same height and the same impulse (``sigma sqrt(2 pi)``: 0.13-0.25 s).
Pushes act on the first joint only (the environment's push), not on both as on the real rig.

Tip height over reach, from the noiseless state of the ``privileged`` group (the terms' names
and scales are the export contract): a pendulum or cart-pole ``-cos q``; the DFKI double
pendulum ``-(l1 cos q1 + l2 cos(q1 + q2)) / (l1 + l2)`` with the pendubot task's link lengths.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
from pydantic import Field

from sim2real.core.errors import InputError
from sim2real.core.strict import StrictModel
from sim2real.learn.reality import Reality


class DisturbanceProtocol(StrictModel):
    """The protocol's settings (defaults: 60 s episodes, IROS 2024's pushes)."""

    episode_s: float = Field(60.0, gt=0, description="length of one episode [s]")
    interval_s: tuple[float, float] = Field(
        (4.0, 12.0), description="time between two pushes, drawn uniformly [s]"
    )
    push_Nm: float = Field(
        0.5, ge=0, description="largest push torque: each drawn uniformly in +-this [N m]"
    )
    push_duration_s: float = Field(
        0.19, gt=0, description="rectangle of a Gaussian peak's impulse (sigma sqrt(2 pi)) [s]"
    )
    threshold: float = Field(
        0.9, gt=-1, le=1, description="the line as a share of the tip's reach above the pivot"
    )
    episodes: int = Field(20, ge=1, description="episodes per world")


def _terms(env) -> dict[str, tuple[int, float]]:
    group = env.obs_groups["privileged"]
    return {t.name: (i, t.scale) for i, t in enumerate(group.terms)}


def tip_height_fn(env) -> Callable[[np.ndarray], np.ndarray]:
    """(N, privileged dim) -> (N,) tip height over reach, -1 hanging, +1 upright."""
    terms = _terms(env)

    def raw(obs: np.ndarray, name: str) -> np.ndarray:
        i, scale = terms[name]
        return obs[:, i] / scale

    if {"cos_q1_true", "cos_q2_true"} <= terms.keys():
        from sim2real.learn.envs.pendubot import LOWER_M, UPPER_M

        l1, l2 = UPPER_M, LOWER_M

        def double(obs: np.ndarray) -> np.ndarray:
            c1, s1 = raw(obs, "cos_q1_true"), raw(obs, "sin_q1_true")
            c2, s2 = raw(obs, "cos_q2_true"), raw(obs, "sin_q2_true")
            return -(l1 * c1 + l2 * (c1 * c2 - s1 * s2)) / (l1 + l2)

        return double
    if "cos_q_true" in terms:
        return lambda obs: -raw(obs, "cos_q_true")
    raise InputError(env.env_id, "privileged", "no joint angle to place the tip from")


def disturbed(reality: Reality, protocol: DisturbanceProtocol) -> Reality:
    """``reality`` with the protocol's pushes in place of any push it draws."""
    terms = [
        t
        for t in (reality.randomization or {}).get("terms", [])
        if t.get("target") != "env.push_Nm"
    ]
    terms.append(
        {
            "name": "realaigym_push",
            "target": "env.push_Nm",
            "mode": "interval",
            "interval_s": list(protocol.interval_s),
            "distribution": "uniform",
            "range": [-protocol.push_Nm, protocol.push_Nm],
            "operation": "absolute",
        }
    )
    randomization = {**(reality.randomization or {}), "terms": terms}
    return reality.model_copy(update={"randomization": randomization})


@dataclass
class ProtocolScore:
    world: str
    episode_s: float
    above: np.ndarray  # (episodes,) share of the time above the line
    swung_up: np.ndarray  # (episodes,) bool: above the line at least once

    @property
    def score(self) -> float:
        return float(self.above.mean())

    def line(self) -> str:
        return (
            f"{self.world}: RealAIGym score {self.score:.3f} (share of the time above the "
            f"line over {len(self.above)} pushed episodes of {self.episode_s:.0f} s; worst "
            f"{self.above.min():.3f}), above it at least once in "
            f"{int(self.swung_up.sum())}/{len(self.above)}"
        )

    def to_dict(self) -> dict:
        return {
            "world": self.world,
            "score": self.score,
            "per_episode": self.above.tolist(),
            "swung_up": int(self.swung_up.sum()),
        }


def protocol_score(
    policy,
    reality: Reality,
    protocol: DisturbanceProtocol | None = None,
    seed: int = 1,
    progress: Callable[[float], None] | None = None,
) -> ProtocolScore:
    """``protocol.episodes`` episodes of ``policy`` (``act(obs)``) in ``reality`` under the
    protocol's pushes, all environments together; ``progress(share)``: the share of the
    episodes' time simulated so far."""
    from sim2real.learn.evaluate import one_torch_thread, task_config
    from sim2real.learn.reality import reality_env

    protocol = protocol or DisturbanceProtocol()
    config = {
        **task_config(policy.env_config),
        "episode_s": protocol.episode_s,
        "push_duration_s": protocol.push_duration_s,
    }
    env = reality_env(disturbed(reality, protocol), policy.env_id, config, protocol.episodes, seed)
    height = tip_height_fn(env)
    above = np.zeros(env.num_envs)
    peak = np.full(env.num_envs, -np.inf)
    obs = env.reset(seed=seed)
    with one_torch_thread():
        for t in range(env.max_episode_steps):  # one episode per environment: time limit only
            result = env.step(policy.act(obs))
            h = height(result.final_obs["privileged"])
            above += h >= protocol.threshold
            peak = np.maximum(peak, h)
            obs = result.obs
            if progress is not None:
                progress((t + 1) / env.max_episode_steps)
    shares = above / env.max_episode_steps
    return ProtocolScore(reality.name, protocol.episode_s, shares, peak >= protocol.threshold)


def score_runs(
    runs: list,
    realities: list[str],
    *,
    env_id: str | None = None,
    protocol: DisturbanceProtocol | None = None,
    seed: int = 1,
    processes: int = 1,
    progress: Callable[[float, int, str], None] | None = None,
) -> dict[str, list[ProtocolScore]]:
    """Each trained run's protocol score in every reality (none given: the task's evaluation
    worlds); policies and worlds all loaded before any episode runs. The cells (a run in a
    world) run in ``processes`` local worker processes (1: here, in order), each seeded alike.
    ``progress(done, total, where)``: the cells done, with fractions of those running."""
    from sim2real.core.local_jobs import local_runner, report_share
    from sim2real.learn.evaluate import (
        cell_name,
        cell_progress,
        cells_progress,
        load_runs_and_worlds,
    )

    loaded, worlds = load_runs_and_worlds(runs, realities, env_id)
    cells = [(path, policy, w) for path, policy in zip(runs, loaded, strict=True) for w in worlds]
    if processes > 1 and len(cells) > 1:
        # in a worker process a cell's own share of its steps is what it reports
        jobs = [
            partial(protocol_score, policy, w, protocol, seed, report_share)
            for _, policy, w in cells
        ]
        scores = local_runner(processes, progress and partial(cells_progress, progress, 1))(jobs)
    else:
        scores = [
            protocol_score(policy, w, protocol, seed, progress and partial(
                cell_progress, progress, k, len(cells), cell_name(path, w.name)))
            for k, (path, policy, w) in enumerate(cells)
        ]  # fmt: skip
    out: dict[str, list[ProtocolScore]] = {}
    for (path, _, _), score in zip(cells, scores, strict=True):
        out.setdefault(str(path), []).append(score)
    return out
