"""``ParamSpace``: an ordered list of named scalar parameters, each with a target (what it
writes), a nominal value, bounds, a scale (linear or log) and an optional prior.

The optimizer works in the unit cube: ``u = 0`` is the lower bound, ``u = 1`` the upper one,
linear or logarithmic in between. YAML form::

    params:
      - name: mass_kg
        target: "body.mass:pendulum"
        nominal: 0.2
        bounds: [0.05, 1.0]
        scale: log
        prior: {kind: normal, mean: 0.2, std: 0.05}
    joint:                      # optional: parameters drawn together (see JointPrior)
      names: [mass_kg, com_z_m]
      mean: [-1.609, -0.5]      # scale coordinates: ln(value) for log-scale parameters
      cov: [[0.01, -0.0004], [-0.0004, 0.0004]]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import numpy as np
import yaml
from pydantic import Field, ValidationError, field_validator, model_validator

from sim2real.core.atomic import write_text_atomic
from sim2real.core.errors import InputError
from sim2real.core.strict import StrictModel, ordered_errors, validation_error
from sim2real.core.yaml_io import read_yaml
from sim2real.params.truncated import draw_truncated


class Prior(StrictModel):
    """Prior belief on a parameter: ``normal`` (mean, std in the parameter's unit),
    ``log_normal`` (mean = median in the parameter's unit, std of its natural log) or
    ``uniform`` (over the bounds). Sampling is truncated to the bounds. The spelling is the
    randomization terms' (``lognormal``, written by earlier versions, is read as well)."""

    kind: Literal["normal", "log_normal", "uniform"] = Field(
        "uniform", description="normal, log_normal or uniform (over the bounds)"
    )
    mean: float | None = Field(None, description="normal: mean; log_normal: median")
    std: float | None = Field(None, gt=0, description="normal: std; log_normal: std of log")

    @field_validator("kind", mode="before")
    @classmethod
    def _old_spelling(cls, value: Any) -> Any:
        return "log_normal" if value == "lognormal" else value

    @model_validator(mode="after")
    def _complete(self) -> Prior:
        if self.kind != "uniform" and (self.mean is None or self.std is None):
            raise ValueError(f"a {self.kind} prior needs mean and std")
        if self.kind == "log_normal" and self.mean is not None and self.mean <= 0:
            raise ValueError("a log_normal prior needs mean (the median) > 0")
        return self

    def draw(self, size: int, rng: np.random.Generator, bounds: tuple[float, float]) -> np.ndarray:
        """(size,) draws truncated to ``bounds`` (normal or log_normal kinds)."""
        assert self.mean is not None and self.std is not None
        mean, std = self.mean, self.std
        if self.kind == "normal":
            return draw_truncated(lambda m: rng.normal(mean, std, m), size, *bounds)
        return draw_truncated(lambda m: mean * np.exp(rng.normal(0.0, std, m)), size, *bounds)


class Param(StrictModel):
    """One named scalar. ``target`` says what it writes, e.g. ``"joint.damping:shoulder"``
    (see :mod:`sim2real.sim.targets`); ``bounds`` is [lower, upper] in the target's SI unit
    (lower == upper fixes the parameter)."""

    name: str = Field(..., min_length=1, description="the parameter's name, unique in its space")
    target: str = Field(
        ...,
        min_length=1,
        description="what it writes in the model (sim2real.sim.targets), e.g. joint.damping:shoulder",
    )
    nominal: float = Field(
        ..., description="its value before any fit (the start of a fit), in the target's SI unit"
    )
    bounds: tuple[float, float] = Field(
        ..., description="[lower, upper] in the target's unit; lower == upper fixes it"
    )
    scale: Literal["linear", "log"] = Field(
        "linear", description="linear, or log (fitted and sampled in ln; bounds must be > 0)"
    )
    prior: Prior | None = Field(
        None, description="belief on its value (sampling truncated to the bounds); None: uniform"
    )
    description: str = Field("", description="what the parameter is, in words")

    @model_validator(mode="after")
    def _consistent(self) -> Param:
        lo, hi = self.bounds
        if lo > hi:
            raise ValueError(f"bounds of {self.name!r}: lower {lo} > upper {hi}")
        if not lo <= self.nominal <= hi:
            raise ValueError(f"nominal {self.nominal} of {self.name!r} is outside [{lo}, {hi}]")
        if self.scale == "log" and lo <= 0:
            raise ValueError(f"log scale of {self.name!r} needs a lower bound > 0, got {lo}")
        return self

    @property
    def free(self) -> bool:
        return self.bounds[0] < self.bounds[1]


class JointPrior(StrictModel):
    """A multivariate normal over several parameters, drawn together (e.g. the covariance of
    a fit, so that parameters the data pins only in combination keep that combination).
    ``mean`` and ``cov`` are in *scale coordinates*: the value for a linear parameter, its
    natural log for a log-scale one. Draws outside the parameters' bounds are redrawn as a
    whole vector."""

    names: list[str] = Field(..., min_length=1, description="parameters drawn together")
    mean: list[float] = Field(..., description="mean in scale coordinates")
    cov: list[list[float]] = Field(..., description="covariance in scale coordinates")

    @model_validator(mode="after")
    def _shapes(self) -> JointPrior:
        k = len(self.names)
        if len(set(self.names)) != k:
            raise ValueError("a parameter is named twice")
        if len(self.mean) != k or len(self.cov) != k or any(len(r) != k for r in self.cov):
            raise ValueError(f"mean needs {k} entries and cov {k} x {k}")
        c = np.asarray(self.cov, dtype=float)
        if not np.allclose(c, c.T, rtol=1e-6, atol=1e-15):
            raise ValueError("cov is not symmetric")
        if np.linalg.eigvalsh(c).min() < -1e-9 * max(float(np.abs(c).max()), 1e-300):
            raise ValueError("cov is not positive semi-definite")
        return self

    def draw(
        self, n: int, rng: np.random.Generator, log: np.ndarray, lo: np.ndarray, hi: np.ndarray
    ) -> np.ndarray:
        """(n, k) values; ``log`` (k,) bool scale of each, ``lo`` / ``hi`` (k,) bounds."""
        mean, cov = np.asarray(self.mean), np.asarray(self.cov)
        w, V = np.linalg.eigh(cov)
        root = V * np.sqrt(np.clip(w, 0.0, None))

        def raw(m: int) -> np.ndarray:
            z = mean + rng.standard_normal((m, len(mean))) @ root.T
            return np.where(log, np.exp(np.minimum(z, 700.0)), z)

        return draw_truncated(raw, n, lo, hi)


class ParamSpace(StrictModel):
    """Ordered parameters; arrays of values are ``(..., P)`` in the order of ``params``.
    ``joint``: optional parameters drawn together by :meth:`sample`."""

    params: list[Param] = Field(..., description="the parameters, in the order of value arrays")
    joint: JointPrior | None = Field(
        None, description="parameters drawn together (a fit's covariance) by sample()"
    )

    @model_validator(mode="after")
    def _unique(self) -> ParamSpace:
        names = [p.name for p in self.params]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"duplicate parameter names: {', '.join(dup)}")
        if self.joint is not None:
            unknown = [n for n in self.joint.names if n not in names]
            if unknown:
                raise ValueError(f"joint: unknown parameters {', '.join(unknown)}")
        return self

    def __len__(self) -> int:
        return len(self.params)

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.params]

    def index(self, name: str) -> int:
        return self.names.index(name)

    def nominal(self) -> np.ndarray:
        """(P,) nominal values."""
        return np.array([p.nominal for p in self.params], dtype=float)

    def lower(self) -> np.ndarray:
        return np.array([p.bounds[0] for p in self.params], dtype=float)

    def upper(self) -> np.ndarray:
        return np.array([p.bounds[1] for p in self.params], dtype=float)

    def free_mask(self) -> np.ndarray:
        """(P,) bool: parameters with lower < upper."""
        return np.array([p.free for p in self.params], dtype=bool)

    def _log(self) -> np.ndarray:
        return np.array([p.scale == "log" for p in self.params], dtype=bool)

    def to_unit(self, values: np.ndarray) -> np.ndarray:
        """(..., P) values -> (..., P) unit-cube coordinates (0 for fixed parameters)."""
        values = np.asarray(values, dtype=float)
        lo, hi, log = self.lower(), self.upper(), self._log()
        span = np.where(hi > lo, hi - lo, 1.0)
        lin = (values - lo) / span
        with np.errstate(divide="ignore", invalid="ignore"):
            lspan = np.where(hi > lo, np.log(np.where(log, hi, 2.0) / np.where(log, lo, 1.0)), 1.0)
            lg = np.log(np.where(log, np.maximum(values, 1e-300), 2.0) / np.where(log, lo, 1.0))
            out = np.where(log, lg / lspan, lin)
        return np.where(hi > lo, out, 0.0)

    def from_unit(self, unit: np.ndarray) -> np.ndarray:
        """(..., P) unit-cube coordinates (clipped to [0, 1]) -> (..., P) values."""
        u = np.clip(np.asarray(unit, dtype=float), 0.0, 1.0)
        lo, hi, log = self.lower(), self.upper(), self._log()
        lin = lo + u * (hi - lo)
        safe_lo = np.where(log, lo, 1.0)
        ratio = np.where(log, hi, 1.0) / safe_lo
        lg = safe_lo * ratio**u
        return np.where(log, lg, lin)

    def clip(self, values: np.ndarray) -> np.ndarray:
        return np.clip(values, self.lower(), self.upper())

    def sample(self, n: int, rng: np.random.Generator, *, use_prior: bool = True) -> np.ndarray:
        """(n, P) samples: the ``joint`` parameters together, each other parameter from its
        prior (truncated to its bounds by resampling) when it has one and ``use_prior``, else
        uniform in its scale."""
        out = self.from_unit(rng.random((n, len(self))))
        if not use_prior:
            return out
        for j, p in enumerate(self.params):
            if p.prior is None or p.prior.kind == "uniform" or not p.free:
                continue
            out[:, j] = p.prior.draw(n, rng, p.bounds)
        if self.joint is not None:
            cols = [self.index(name) for name in self.joint.names]
            out[:, cols] = self.joint.draw(
                n, rng, self._log()[cols], self.lower()[cols], self.upper()[cols]
            )
        return out

    def replace(self, values: dict[str, float] | None = None, **kwargs: Any) -> ParamSpace:
        """A copy with the given parameters' nominal values replaced (clipped to bounds)."""
        values = dict(values or {}, **kwargs)
        unknown = sorted(set(values) - set(self.names))
        if unknown:
            raise KeyError(f"unknown parameters: {', '.join(unknown)}")
        params = []
        for p in self.params:
            if p.name in values:
                v = float(np.clip(values[p.name], *p.bounds))
                p = p.model_copy(update={"nominal": v})
            params.append(p)
        return ParamSpace(params=params, joint=self.joint)

    def to_yaml(self, path: str | Path) -> None:
        write_text_atomic(path, self.yaml_text())

    def yaml_text(self) -> str:
        data = self.model_dump(mode="json", exclude_defaults=True)
        for p in data["params"]:
            p["bounds"] = list(p["bounds"])
        text = yaml.safe_dump(data, sort_keys=False, width=100)
        if self.joint is None:
            return text
        # an edit of such a parameter's prior changed nothing (a probe): say where draws come from
        return (
            f"# {', '.join(self.joint.names)}: drawn together from joint.mean / joint.cov (scale\n"
            "# coordinates: the log of log-scale parameters); their prior below is the marginal, for\n"
            "# reading: edit joint, or delete it to draw each from its prior. A draw outside the\n"
            "# bounds is redrawn whole, so a value fitted near its bound shifts the others' draws.\n"
        ) + text


UNITS = {"_kg_m2": "kg m^2", "_Nm_s": "N m s", "_rad_s": "rad/s", "_Nm": "N m", "_kg": "kg",
         "_m": "m", "_s": "s", "_rad": "rad"}  # fmt: skip
"""Unit suffixes of parameter names (the longest first), for the hint of a value out of bounds."""


def outside_bounds(name: str, low: float, high: float, bounds: tuple[float, float]) -> str | None:
    """What is wrong when parameter ``name`` gets values ``low`` to ``high`` outside ``bounds``
    (None when it does not): one message for a randomization term's draws and for a value set by
    an environment config or a reality, with a units hint (grams for kilograms, centimetres)."""
    lo, hi = bounds
    slack = 1e-9 * max(abs(lo), abs(hi), 1.0)
    if low >= lo - slack and high <= hi + slack:
        return None
    values = f"value {low:.4g}" if low == high else f"values {low:.4g} to {high:.4g}"
    unit = next((u for suffix, u in UNITS.items() if name.endswith(suffix)), None)
    hint = f" (units? {name} is in {unit})" if unit else ""
    return f"{name} {values}, outside its bounds [{lo:.4g}, {hi:.4g}]{hint}"


def param_space_from_dict(data: Any, source: str | Path) -> ParamSpace:
    """Validate a parsed YAML document; problems become ``InputError(source, field)``."""
    if isinstance(data, list):
        data = {"params": data}
    if not isinstance(data, dict) or "params" not in data:
        raise InputError(source, "params", "expected a mapping with a 'params' list")
    try:
        return ParamSpace.model_validate(data)
    except ValidationError as err:
        e = validation_error(err, source, model=ParamSpace)
        loc = ordered_errors(err)[0]["loc"]  # the one reported; named by its name, not index
        items = data.get("params") or []
        named = len(loc) >= 2 and loc[0] == "params" and isinstance(loc[1], int)
        if named and loc[1] < len(items) and isinstance(items[loc[1]], dict):
            name = items[loc[1]].get("name", loc[1])
            field = ".".join(["params", str(name), *map(str, loc[2:])])
            e = InputError(source, field, e.message)
        raise e from None


def load_param_space(path: str | Path) -> ParamSpace:
    """Read and validate a parameter-spec YAML file (see module docstring)."""
    path = Path(path)
    return param_space_from_dict(read_yaml(path, "parameter spec"), path)
