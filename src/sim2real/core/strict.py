"""The boundary of every config read from a user's file: one strict base model and one
translation of pydantic's errors into ``InputError`` (the file and the dotted field named)."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, ValidationInfo, field_validator

from sim2real.core.errors import InputError

M = TypeVar("M", bound=BaseModel)


class StrictModel(BaseModel):
    """Base of the configs users write: an unknown (mistyped) field, NaN or inf, and a boolean
    given for a number are errors (YAML reads ``yes`` as true; pydantic would take it as 1)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        field = cls.model_fields.get(info.field_name or "")
        if isinstance(value, bool) and field is not None and field.annotation in (float, int):
            raise ValueError("expected a number, not a boolean")
        return value


def validation_error(
    err: ValidationError,
    source: str | Path | None,
    prefix: str | None = None,
    model: type[BaseModel] | None = None,
) -> InputError:
    """The first problem pydantic found, as one InputError naming its dotted field path (under
    ``prefix``, the section of the file the data came from); with the ``model`` validated, an
    unknown field's message lists the known ones and the closest match."""
    errors = ordered_errors(err)
    first = errors[0]
    loc = [str(p) for p in first["loc"]]
    field = ".".join(p for p in (prefix, *loc) if p) or None
    known = _known_fields(model, loc[:-1]) if first["type"] == "extra_forbidden" else None
    if known is not None:
        message = unknown_field_message(loc[-1], known)
    else:
        message = first["msg"].removeprefix("Value error, ")
        value = first.get("input")
        if first["type"] not in ("missing", "extra_forbidden") and not isinstance(
            value, dict | list
        ):
            message += f" (got {value!r})"
    if len(errors) > 1:
        message += f" (+{len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})"
    return InputError(source, field, message)


def ordered_errors(err: ValidationError) -> list[dict[str, Any]]:
    """pydantic's problems, the one to report first: an unknown field beside a missing one is
    most likely its misspelling (``rnage`` for ``range``), so unknown fields come first."""
    errors = err.errors(include_url=False)
    errors.sort(key=lambda e: e["type"] != "extra_forbidden")
    return errors


def unknown_field_message(name: str, known: list[str]) -> str:
    """An unknown field's message (its field names it): the closest known one, all known."""
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"did you mean '{close[0]}'? " if close else ""
    return f"unknown field; {hint}expected one of: {', '.join(known)}"


def _known_fields(model: type[BaseModel] | None, path: list[str]) -> list[str] | None:
    """The fields of the (nested) model at ``path`` under ``model``, or None when unknown."""
    for part in path:
        if part.isdigit() and model is not None:
            continue  # an item of a list of models
        if model is None or part not in model.model_fields:
            return None
        ann = model.model_fields[part].annotation
        args = getattr(ann, "__args__", (ann,))
        model = next((a for a in args if isinstance(a, type) and issubclass(a, BaseModel)), None)
    return None if model is None else list(model.model_fields)


def validate(model: type[M], data: Any, source: str | Path | None, prefix: str | None = None) -> M:
    """``model.model_validate(data)`` with pydantic's errors as one InputError."""
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise validation_error(err, source, prefix, model) from None
