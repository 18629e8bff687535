"""Random streams per environment, keyed by the environment's *global* index.

Environment ``g`` (its index in the whole batch, ``env_offset + i`` in a shard) draws its
randomization, start states, push schedule and push torques from ``default_rng([seed, g, 0])``
and its observation noise from ``default_rng([seed, g, 1])``, so a batch built for indices
``k..m`` reproduces exactly those environments of the full batch (the Ray shards).

Noise is drawn every step for every environment: it comes out of a per-environment block of
standard normals refilled from that environment's own stream when used up, so one step costs
one gather, not one generator call per environment.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

BLOCK = 256
"""Noise frames per refill."""


class EnvStreams:
    """The streams of ``num`` environments starting at global index ``offset``; ``width``
    standard normals per noise frame."""

    def __init__(self, seed: int, offset: int, num: int, width: int) -> None:
        self.offset, self.num, self.width = int(offset), int(num), int(width)
        self.seed(seed)

    def seed(self, seed: int) -> None:
        g = range(self.offset, self.offset + self.num)
        self.events = [np.random.default_rng([int(seed), i, 0]) for i in g]
        self._noise = [np.random.default_rng([int(seed), i, 1]) for i in g]
        self._buf = np.empty((self.num, BLOCK, self.width))
        self._pos = np.full(self.num, BLOCK, dtype=np.int64)  # empty: filled on first use

    def uniform(self, rows: np.ndarray, lo, hi, size: int = 1) -> np.ndarray:
        """(len(rows), size) uniform draws, row r from its own stream."""
        return np.array([self.events[r].uniform(lo, hi, size) for r in rows]).reshape(-1, size)

    def integers(self, rows: np.ndarray, lo: int, hi: int) -> np.ndarray:
        return np.array([self.events[r].integers(lo, hi) for r in rows], dtype=np.int64)

    def noise(self, rows: np.ndarray) -> np.ndarray:
        """(len(rows), width) standard normals, the next frame of each row's noise stream."""
        empty = rows[self._pos[rows] >= BLOCK]
        for r in empty:
            self._buf[r] = self._noise[r].standard_normal((BLOCK, self.width))
            self._pos[r] = 0
        out = self._buf[rows, self._pos[rows]]
        self._pos[rows] += 1
        return out

    def get_state(self) -> dict[str, Any]:
        return {
            "events": [copy.deepcopy(g.bit_generator.state) for g in self.events],
            "noise": [copy.deepcopy(g.bit_generator.state) for g in self._noise],
            "buf": self._buf.copy(),
            "pos": self._pos.copy(),
        }

    def set_state(self, state: dict[str, Any]) -> None:
        for g, s in zip(self.events, state["events"], strict=True):
            g.bit_generator.state = copy.deepcopy(s)
        for g, s in zip(self._noise, state["noise"], strict=True):
            g.bit_generator.state = copy.deepcopy(s)
        self._buf[:] = state["buf"]
        self._pos[:] = state["pos"]
