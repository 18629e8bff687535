"""What a randomization does that its user would not see: parameters they set (an environment
config's or a reality's ``params``) that a term with ``operation: absolute`` (or a joint draw)
overwrites in every environment, so the set value never reaches a simulation; a ``--dr`` file
without any term, which trains without randomization."""

from __future__ import annotations

import warnings
from pathlib import Path

from sim2real.learn.randomization import JointTerm, Randomizer, load_randomization


def overwritten_params(randomizer: Randomizer, params: dict[str, float]) -> list[tuple[str, str]]:
    """(key of ``params``, term name) for each parameter set in ``params`` (by name or target)
    that an absolute term of ``randomizer`` draws anew."""
    space = randomizer.space
    column = {p.target: j for j, p in enumerate(space.params)}
    column.update({p.name: j for j, p in enumerate(space.params)})
    out = []
    for key in params:
        j = column.get(key)
        for bound in randomizer.bound:
            absolute = isinstance(bound.term, JointTerm) or bound.term.operation == "absolute"
            if j is not None and absolute and j in bound.columns:
                out.append((key, bound.term.name))
    return out


def warn_overwritten(env, params: dict[str, float], source: str | Path, keep: str) -> None:
    """One warning line per parameter of ``params`` (read from ``source``) that ``env``'s
    randomization overwrites; ``keep`` says how to keep it."""
    randomizer = getattr(env, "randomizer", None)
    if randomizer is None or not params:
        return
    for key, term in overwritten_params(randomizer, params):
        warnings.warn(
            f"{source}: params.{key} = {params[key]:g} is overwritten in every environment by "
            f"term {term!r} of {randomizer.source} (operation: absolute); {keep}",
            stacklevel=2,
        )


def no_terms_note(dr: str | Path | None) -> str | None:
    """A note when the randomization file ``dr`` holds no term (empty, ``terms: []``): it
    trains as ``--dr none`` does. None for a file with terms, ``"default"`` or None."""
    if dr is None or str(dr) == "default":
        return None
    given = load_randomization(dr)
    if given.terms or given.joint:
        return None
    return f"note: {dr} has no randomization terms: training without randomization"
