"""What the stages of a calibration share (``calibrate.py`` runs them in order): the frames,
the predicted emitter shadows and pixel samples, the real statistics, the profile fields fitted
so far and the record of how each value was obtained."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from sim2real.sensors import fit_terms
from sim2real.sensors.profile import FittedValue, NoiseProfile
from sim2real.sensors.reference_frame import ReferenceFrame
from sim2real.sensors.statistics import PixelTables


@dataclass
class CalibrationState:
    refs: list[ReferenceFrame]
    base: NoiseProfile
    name: str
    seed: int
    params: dict = field(default_factory=dict)
    """Profile fields fitted so far (replace the base's in ``assemble``)."""
    fits: dict[str, FittedValue] = field(default_factory=dict)
    """'term.field' -> how the value was obtained (the profile's ``calibration:`` block)."""
    shadows: list[np.ndarray] = field(default_factory=list)
    samples: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    real: PixelTables | None = None
    n_regions: int = 0
    timings_ms: dict[str, float] = field(default_factory=dict)
    _t0: float = field(default_factory=time.perf_counter)

    def note(
        self,
        key: str,
        value: float,
        est: fit_terms.Estimate | None,
        std: float | None = None,
        status: str = "fitted",
    ) -> None:
        """Record how ``key`` got ``value``: an estimate's std and pixels, and its status."""
        self.fits[key] = FittedValue(
            value=float(value),
            std=std if std is not None else (est.std if est else None),
            pixels=est.pixels if est else 0,
            status=status,
        )

    def lap(self, stage: str) -> None:
        """Time since the previous lap [ms] under ``stage``."""
        self.timings_ms[stage] = (time.perf_counter() - self._t0) * 1e3 - sum(
            self.timings_ms.values()
        )

    def assemble(self, **extra) -> NoiseProfile:
        """The base profile with the fitted fields (and ``extra``) in place of its own."""
        data = self.base.model_dump()
        data.update(name=self.name, calibration=None)
        data.update(self.params)
        data.update(extra)
        return NoiseProfile.model_validate(data)

    @property
    def fx(self) -> float:
        return self.refs[0].camera.fx
