"""Domain randomization as data: a YAML list of terms, each drawing new values for the
environment parameters whose name or target matches a pattern.

A term::

    - name: mass                 # label (errors and logs)
      target: "body.mass:*"      # fnmatch pattern over the env's parameter names OR targets
      mode: reset                # startup (once per env) | reset (each episode) | interval
      distribution: uniform      # uniform | log_uniform | normal | log_normal
      range: [0.8, 1.2]          # uniform/log_uniform: [low, high]; normal: [mean, std];
                                 # log_normal: [median, std of the natural log]
      operation: scale           # scale (value = draw * nominal) | add (nominal + draw)
                                 # | absolute (value = draw)
      interval_s: [1.0, 3.0]     # interval mode: time between draws, uniform in [lo, hi]
      bounds: [0.1, 0.5]         # optional: draws outside are redrawn (a truncated prior)
      clip: false                # true: values beyond the parameter's bounds are set to them

Every matched parameter gets its own independent draw. Terms apply in file order, each one
computed from the nominal value (a later term on the same parameter wins). A uniform term's
range (a normal one's centre, or its ``bounds`` where given) must give values within each
parameter's bounds in the environment's space (its physical limits and buffer sizes: the
delay line holds the largest delay), or the file is refused unless the term says ``clip: true``
(e.g. a friction range [-0.25, 0.25] clipped: half the worlds frictionless); the tails of a
normal draw are clipped to them.

The ``dr.yaml`` written by system identification (a ``ParamSpace``: top-level ``params:``)
plugs in directly: each parameter becomes a reset-mode absolute term drawn from its prior
(normal or log-normal truncated to its bounds) or uniformly over its bounds, except those of
its ``joint`` block (the fit's covariance), which one :class:`JointTerm` draws together so
that combinations the fit pinned stay pinned.
"""

from __future__ import annotations

import difflib
import fnmatch
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field, PrivateAttr, ValidationError, model_validator

from sim2real.core.errors import InputError
from sim2real.core.strict import StrictModel, ordered_errors, unknown_field_message
from sim2real.core.yaml_io import read_yaml
from sim2real.learn.misplaced_files import misplaced_file
from sim2real.params.space import JointPrior, ParamSpace, outside_bounds
from sim2real.params.truncated import draw_truncated

CONFIG_DIR = Path(__file__).parent / "configs"

Mode = Literal["startup", "reset", "interval"]
Distribution = Literal["uniform", "log_uniform", "normal", "log_normal"]
Operation = Literal["scale", "add", "absolute"]


class Term(StrictModel):
    """One randomization term (see the module docstring)."""

    name: str = Field(..., min_length=1, description="term name (in messages and logs)")
    target: str = Field(
        ...,
        min_length=1,
        description="what it writes: a parameter name or target, a glob pattern matching several",
    )
    mode: Mode = Field(
        ...,
        description="startup: once per environment; reset: at every episode start; interval: every interval_s",
    )
    distribution: Distribution = Field(
        "uniform", description="uniform, log_uniform, normal or log_normal"
    )
    range: tuple[float, float] = Field(
        ...,
        description="uniform: [low, high]; normal: [mean, std]; log_normal: [median, std of ln]",
    )
    operation: Operation = Field(
        "absolute",
        description="absolute (the draw is the value), scale (times nominal) or add (plus nominal)",
    )
    interval_s: tuple[float, float] | None = Field(
        None, description="interval mode: [shortest, longest] time between draws [s]"
    )
    bounds: tuple[float, float] | None = Field(
        None, description="a draw outside [lower, upper] is redrawn"
    )
    clip: bool = Field(
        False,
        description="values beyond the parameter's bounds are set to the bound (without it a "
        "range reaching beyond them is refused)",
    )

    @model_validator(mode="after")
    def _consistent(self) -> Term:
        lo, hi = self.range
        if self.distribution in ("uniform", "log_uniform") and lo > hi:
            raise ValueError(f"range: inverted, low {lo} > high {hi}")
        if self.distribution == "log_uniform" and lo <= 0:
            raise ValueError(f"range: log_uniform needs low > 0, got {lo}")
        if self.distribution in ("normal", "log_normal") and hi < 0:
            raise ValueError(f"range: {self.distribution} range is [mean, std], std {hi} < 0")
        if self.distribution == "log_normal" and lo <= 0:
            raise ValueError(f"range: log_normal range is [median, std], median {lo} <= 0")
        if self.mode == "interval":
            if self.interval_s is None:
                raise ValueError("interval_s: interval mode needs interval_s [min, max] seconds")
            if not 0 < self.interval_s[0] <= self.interval_s[1]:
                raise ValueError(f"interval_s: must be 0 < min <= max, got {list(self.interval_s)}")
        if self.bounds is not None and self.bounds[0] > self.bounds[1]:
            raise ValueError(f"bounds: inverted, {list(self.bounds)}")
        return self

    def draw(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """(size,) draws of the distribution (truncated to ``bounds`` by redrawing)."""
        if self.bounds is None:
            return self._raw(size, rng)
        return draw_truncated(lambda m: self._raw(m, rng), size, *self.bounds)

    def _raw(self, size: int, rng: np.random.Generator) -> np.ndarray:
        a, b = self.range
        if self.distribution == "uniform":
            return rng.uniform(a, b, size)
        if self.distribution == "log_uniform":
            return np.exp(rng.uniform(np.log(a), np.log(b), size))
        if self.distribution == "normal":
            return rng.normal(a, b, size)
        return a * np.exp(rng.normal(0.0, b, size))

    def value(self, draw: np.ndarray, nominal: np.ndarray) -> np.ndarray:
        if self.operation == "scale":
            return draw * nominal
        if self.operation == "add":
            return nominal + draw
        return draw


class JointTerm(StrictModel):
    """Parameters drawn together, absolute values from a multivariate normal (a sysid
    ``dr.yaml``'s ``joint``): ``targets`` name one environment parameter each (name or
    target), ``log`` says which are drawn in ln (the prior's scale coordinates), draws
    outside ``bounds`` are redrawn as a whole."""

    name: str = Field("joint", description="term name (in messages and logs)")
    mode: Literal["startup", "reset"] = Field(
        "reset", description="startup: once per environment; reset: at every episode start"
    )
    targets: list[str] = Field(
        ..., min_length=1, description="environment parameters drawn together (names or targets)"
    )
    log: list[bool] = Field(..., description="per target: drawn in ln (log-scale parameters)")
    bounds: list[tuple[float, float]] = Field(
        ..., description="per target [lower, upper]: a draw outside is redrawn as a whole"
    )
    prior: JointPrior = Field(
        ..., description="the multivariate normal (mean, covariance) in the drawn coordinates"
    )

    @model_validator(mode="after")
    def _sizes(self) -> JointTerm:
        k = len(self.targets)
        if len(self.log) != k or len(self.bounds) != k or len(self.prior.names) != k:
            raise ValueError(f"targets: log, bounds and prior need {k} entries each")
        return self

    def draw(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """(size, k) draws."""
        lo, hi = np.array(self.bounds, dtype=float).T
        return self.prior.draw(size, rng, np.array(self.log), lo, hi)


class Randomization(StrictModel):
    """An ordered list of terms, then the joint draws."""

    terms: list[Term] = Field(
        default_factory=list,
        description="terms applied in order, each to the parameters it targets",
    )
    joint: list[JointTerm] = Field(
        default_factory=list, description="groups of parameters drawn together from a covariance"
    )
    _key: str = PrivateAttr("terms")
    """How errors name a term: ``terms`` (a DR file) or ``params`` (a ParamSpace file)."""


def _validation_error(err: ValidationError, data: Any, source: str | Path, key: str) -> InputError:
    first = ordered_errors(err)[0]  # a misspelt field (rnage), not the one it leaves missing
    loc = [str(x) if not isinstance(x, int) else f"[{x}]" for x in first["loc"]]
    field = "".join(p if p.startswith("[") else f".{p}" for p in loc).lstrip(".") or key
    msg = first["msg"].removeprefix("Value error, ")
    if first["type"] == "missing":
        msg = "missing field"
    if first["type"] == "extra_forbidden" and len(loc) in (1, 3):  # of the file or a term
        model = Randomization if len(loc) == 1 else JointTerm if loc[0] == "joint" else Term
        return InputError(source, field, unknown_field_message(loc[-1], list(model.model_fields)))
    sub, sep, rest = msg.partition(": ")
    if sep and sub in Term.model_fields:  # a term-level check naming its field
        field, msg = f"{field}.{sub}", rest
    return InputError(source, field, msg)


def randomization_from_dict(data: Any, source: str | Path) -> Randomization:
    """Validate a parsed YAML document: ``terms:`` or a ``ParamSpace`` (``params:``)."""
    if data is None:
        return Randomization()
    if (misplaced := misplaced_file(data, source, "randomization file")) is not None:
        raise InputError(source, None, misplaced)
    if not isinstance(data, dict) or not ({"terms", "params"} & set(data)):
        raise InputError(source, "terms", "expected a mapping with a 'terms' (or 'params') list")
    if "params" in data and "terms" not in data:
        from sim2real.params.space import param_space_from_dict

        return from_param_space(param_space_from_dict(data, source))
    if not isinstance(data["terms"], list):
        raise InputError(source, "terms", "expected a list of terms")
    try:
        return Randomization.model_validate(data)
    except ValidationError as err:
        raise _validation_error(err, data, source, "terms") from None


def from_param_space(space: ParamSpace) -> Randomization:
    """Each parameter: a reset-mode absolute term from its prior, truncated to its bounds
    (uniform over the bounds without a prior; log-uniform for a log-scale parameter); the
    ``joint`` parameters: one joint term."""
    terms, joint = [], []
    together = set(space.joint.names) if space.joint is not None else set()
    if space.joint is not None:
        ps = [space.params[space.index(n)] for n in space.joint.names]
        joint.append(
            JointTerm(targets=[p.target for p in ps], log=[p.scale == "log" for p in ps],
                      bounds=[p.bounds for p in ps], prior=space.joint)
        )  # fmt: skip
    for p in space.params:
        if p.name in together:
            continue
        lo, hi = p.bounds
        prior = p.prior
        if prior is not None and prior.kind == "normal":
            dist, rng_ = "normal", (prior.mean, prior.std)
        elif prior is not None and prior.kind == "log_normal":
            dist, rng_ = "log_normal", (prior.mean, prior.std)
        else:
            dist, rng_ = ("log_uniform" if p.scale == "log" else "uniform"), (lo, hi)
        terms.append(
            Term(
                name=p.name,
                target=p.target,
                mode="reset",
                distribution=dist,
                range=rng_,
                operation="absolute",
                bounds=(lo, hi),
            )
        )
    out = Randomization(terms=terms, joint=joint)
    out._key = "params"
    return out


def load_randomization(
    dr: str | Path | Randomization | None, default: Path | Randomization | None = None
) -> Randomization:
    """``None`` -> no randomization; ``"default"`` -> ``default``; a path -> its YAML."""
    if dr is None:
        return Randomization()
    if isinstance(dr, Randomization):
        return dr
    if str(dr) == "default":
        if default is None:
            raise InputError("--dr", "default", "this environment has no default randomization")
        if isinstance(default, Randomization):
            return default
        dr = default
    path = Path(dr)
    return randomization_from_dict(read_yaml(path, "randomization file"), path)


@dataclass
class BoundTerm:
    """A term resolved against an environment's parameter space: the columns it writes."""

    term: Term | JointTerm
    columns: np.ndarray  # (k,) int


class Randomizer:
    """Terms of a :class:`Randomization` bound to the columns of an environment's parameter
    space; draws write into an (N, P) value array."""

    def __init__(
        self,
        dr: Randomization,
        space: ParamSpace,
        nominal: np.ndarray | None = None,
        source: str | Path | None = None,
    ) -> None:
        self.space, self.source = space, source
        self.nominal = space.nominal() if nominal is None else np.asarray(nominal, float)
        self.lower, self.upper = space.lower(), space.upper()
        names = space.names
        targets = [p.target for p in space.params]
        self.bound: list[BoundTerm] = []
        for i, term in enumerate(dr.terms):
            cols = [
                j
                for j, (n, t) in enumerate(zip(names, targets, strict=True))
                if fnmatch.fnmatchcase(n, term.target) or fnmatch.fnmatchcase(t, term.target)
            ]
            if not cols:
                known = names + targets
                close = difflib.get_close_matches(term.target, known, n=4, cutoff=0.3)
                hint = f"; close matches: {', '.join(close)}" if close else ""
                raise InputError(
                    source,
                    f"{dr._key}[{i}].target",
                    f"{term.target!r} matches no parameter of the environment{hint} "
                    f"(parameters: {', '.join(names)})",
                )
            self._within_bounds(term, cols, f"{dr._key}[{i}]", source)
            self.bound.append(BoundTerm(term, np.asarray(cols, dtype=int)))
        for i, jt in enumerate(dr.joint):
            cols = []
            for k, pattern in enumerate(jt.targets):
                hits = [j for j, (n, t) in enumerate(zip(names, targets, strict=True))
                        if pattern in (n, t)]  # fmt: skip
                if len(hits) != 1:
                    raise InputError(
                        source,
                        f"joint[{i}].targets[{k}]",
                        f"{pattern!r} must name one parameter of the environment, found "
                        f"{len(hits)} (parameters: {', '.join(names)})",
                    )
                cols.append(hits[0])
            self.bound.append(BoundTerm(jt, np.asarray(cols, dtype=int)))

    def _within_bounds(self, term: Term, cols: list[int], key: str, source) -> None:
        """Refuse a term whose values leave a parameter's bounds: clipped, its draws would pile
        up on the bound unnoticed (a delay range to 0.3 s run as 0.1 s); ``clip: true`` asks
        for that pile-up."""
        if term.clip:
            return
        uniform = term.distribution in ("uniform", "log_uniform")
        reach = np.array(term.range if uniform else term.range[:1], dtype=float)
        if term.bounds is not None:
            reach = np.clip(reach, *term.bounds) if uniform else np.array(term.bounds)
        for j in cols:
            values = term.value(reach, self.nominal[j])
            bounds = (self.lower[j], self.upper[j])
            wrong = outside_bounds(self.space.names[j], values.min(), values.max(), bounds)
            if wrong is not None:
                field = "bounds" if term.bounds is not None and not uniform else "range"
                why = f"{term.name!r} gives {wrong} ('clip: true' sets such values to the bound)"
                raise InputError(source, f"{key}.{field}", why)

    def terms(self, mode: str) -> list[BoundTerm]:
        return [b for b in self.bound if b.term.mode == mode]

    @property
    def randomized_columns(self) -> np.ndarray:
        """(P,) bool: parameters some term writes."""
        mask = np.zeros(len(self.nominal), dtype=bool)
        for b in self.bound:
            mask[b.columns] = True
        return mask

    def apply(
        self,
        bound: list[BoundTerm],
        values: np.ndarray,
        rows: np.ndarray,
        rng: np.random.Generator,
    ) -> None:
        """Draw the terms for ``rows`` of ``values`` (N, P) in place."""
        rows = np.asarray(rows, dtype=int)
        if rows.size == 0:
            return
        for b in bound:
            if isinstance(b.term, JointTerm):
                draw = b.term.draw(rows.size, rng)
                cols = b.columns
                values[rows[:, None], cols] = np.clip(draw, self.lower[cols], self.upper[cols])
                continue
            for j in b.columns:
                draw = b.term.draw(rows.size, rng)
                v = b.term.value(draw, self.nominal[j])
                values[rows, j] = np.clip(v, self.lower[j], self.upper[j])
