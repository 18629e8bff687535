"""Randomization events of :class:`~sim2real.learn.envs.manager.ManagerVecEnv` (its event
manager): the terms of a :class:`~sim2real.learn.randomization.Randomization` drawn once per
environment (``startup``), at every episode start (``reset``) and at random times within an
episode (``interval``), and the start states. Every draw of environment ``r`` comes from its
own stream (:class:`~sim2real.learn.envs.streams.EnvStreams`), so it depends on nothing but
that environment's own history."""

from __future__ import annotations

import numpy as np

from sim2real.learn.envs.streams import EnvStreams
from sim2real.learn.randomization import BoundTerm, Randomizer


class Events:
    """The randomizer's terms for ``streams.num`` environments stepped every ``control_dt``."""

    def __init__(self, randomizer: Randomizer, streams: EnvStreams, control_dt: float) -> None:
        self.randomizer, self.streams, self.control_dt = randomizer, streams, control_dt
        self.interval = randomizer.terms("interval")
        self.next_fire = np.zeros((len(self.interval), streams.num), dtype=np.int64)

    def draw(self, bound: list[BoundTerm], values: np.ndarray, rows: np.ndarray) -> None:
        """The terms ``bound`` into ``values[rows]``, each row from its own stream."""
        for r in rows:
            self.randomizer.apply(bound, values, np.array([r]), self.streams.events[r])

    def startup(self, nominal: np.ndarray) -> np.ndarray:
        """(N, P) the values every episode of each environment starts from."""
        values = np.tile(nominal, (self.streams.num, 1))
        self.draw(self.randomizer.terms("startup"), values, np.arange(self.streams.num))
        return values

    def reset_rows(self, values: np.ndarray, rows: np.ndarray) -> None:
        """The reset terms for ``rows``, and the first time of each interval term."""
        self.draw(self.randomizer.terms("reset"), values, rows)
        for k, b in enumerate(self.interval):
            gap = self.streams.uniform(rows, *b.term.interval_s)[:, 0]
            self.next_fire[k, rows] = np.round(gap / self.control_dt)

    def start_states(
        self,
        rows: np.ndarray,
        q_rad: float,
        qvel: float,
        nj: int,
        alternatives: tuple[float, np.ndarray, float, np.ndarray] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """(len(rows), 2 nj): positions uniform in +-q_rad, then speeds in +-qvel; and (len(rows),)
        which rows start at the goal. ``alternatives`` = (random_share, hinges, goal_share,
        goal): that share of the rows starts its ``hinges`` (a mask over the joints) anywhere on
        the circle, the next share around ``goal`` (per joint) instead; drawn after the rest,
        so shares of 0 draw as if there were none."""
        ev = self.streams.events
        random_share, hinges, goal_share, goal = alternatives or (0.0, None, 0.0, None)
        out, at_goal = [], np.zeros(rows.size, dtype=bool)
        for i, r in enumerate(rows):
            state = np.concatenate(
                [ev[r].uniform(-q_rad, q_rad, nj), ev[r].uniform(-qvel, qvel, nj)]
            )
            if random_share + goal_share > 0:
                u = ev[r].random()
                if u < random_share:
                    turn = ev[r].uniform(-np.pi, np.pi, nj)
                    state[:nj] = np.where(hinges, turn, state[:nj])
                elif u < random_share + goal_share:
                    state[:nj] += goal
                    at_goal[i] = True
            out.append(state)
        return np.array(out).reshape(rows.size, 2 * nj), at_goal

    def commands(self, rows: np.ndarray, ranges: list[tuple[float, float]]) -> np.ndarray:
        """(len(rows), C): each command uniform in its [low, high], row by row."""
        lo, hi = np.array(ranges, dtype=float).T
        return np.array([self.streams.events[r].uniform(lo, hi) for r in rows])

    def fire(self, values: np.ndarray, steps: np.ndarray) -> list[tuple[BoundTerm, np.ndarray]]:
        """Draw the interval terms due at ``steps`` (each environment's step in its episode)
        and schedule their next time; returns (term, rows) of those that fired."""
        fired = []
        for k, b in enumerate(self.interval):
            rows = np.flatnonzero(steps >= self.next_fire[k])
            if rows.size == 0:
                continue
            lo, hi = b.term.interval_s
            gap = np.empty(rows.size)
            for i, r in enumerate(rows):  # the draw, then the next time, from the row's stream
                self.randomizer.apply([b], values, np.array([r]), self.streams.events[r])
                gap[i] = self.streams.events[r].uniform(lo, hi)
            gap = np.maximum(np.round(gap / self.control_dt), 1)
            self.next_fire[k, rows] = steps[rows] + gap.astype(np.int64)
            fired.append((b, rows))
        return fired
