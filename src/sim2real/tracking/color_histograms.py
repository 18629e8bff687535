"""Colour statistics of a part and of what surrounds it: two RGB histograms (foreground,
background), learned along the correspondence lines of the region modality and blended over
frames, giving each pixel colour the probability that it belongs to the part."""

from __future__ import annotations

import numpy as np

EPS = 1e-6
"""Added to every bin: a colour never seen is unlikely, not impossible."""


class ColorHistograms:
    """Normalised foreground and background histograms over ``bins_per_channel``^3 RGB cells
    (16 per channel: 4096 cells, as ICG)."""

    def __init__(self, bins_per_channel: int = 16):
        if bins_per_channel not in (2, 4, 8, 16, 32, 64):
            raise ValueError("bins_per_channel must be a power of two from 2 to 64")
        self.bins = bins_per_channel
        self.shift = 8 - int(np.log2(bins_per_channel))
        self.foreground: np.ndarray | None = None
        self.background: np.ndarray | None = None

    @property
    def ready(self) -> bool:
        return self.foreground is not None

    def index(self, rgb: np.ndarray) -> np.ndarray:
        """(..., 3) uint8 colours -> (...) int64 histogram cells."""
        q = rgb.astype(np.int64) >> self.shift
        return (q[..., 0] * self.bins + q[..., 1]) * self.bins + q[..., 2]

    def _normalised(self, cells: np.ndarray) -> np.ndarray:
        h = np.bincount(cells.ravel(), minlength=self.bins**3).astype(np.float64)
        return h / max(h.sum(), 1.0)

    def update(
        self, foreground_rgb: np.ndarray, background_rgb: np.ndarray, rate: float | None = None
    ) -> None:
        """Blend the colours seen on the part (foreground) and around it (background) into the
        histograms: ``rate`` of the new statistics (None, or the first time: replace)."""
        if len(foreground_rgb) == 0 or len(background_rgb) == 0:
            return
        f = self._normalised(self.index(foreground_rgb))
        b = self._normalised(self.index(background_rgb))
        if self.foreground is None or rate is None:
            self.foreground, self.background = f, b
        else:
            self.foreground = (1 - rate) * self.foreground + rate * f
            self.background = (1 - rate) * self.background + rate * b

    def separation(self) -> float:
        """1 - the Bhattacharyya coefficient of the two histograms: 0 when the part's colours
        are the background's (colour cannot tell them apart), 1 when they never meet."""
        if self.foreground is None:
            return 0.0
        return float(1.0 - np.sqrt(self.foreground * self.background).sum())

    def log_likelihoods(self, cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """log p(colour | part) and log p(colour | background) of histogram ``cells``."""
        return np.log(self.foreground[cells] + EPS), np.log(self.background[cells] + EPS)

    def foreground_probability(self, rgb: np.ndarray) -> np.ndarray:
        """(...) float64 posterior that each (..., 3) colour is the part's (equal priors)."""
        cells = self.index(rgb)
        f, b = self.foreground[cells] + EPS, self.background[cells] + EPS
        return f / (f + b)
