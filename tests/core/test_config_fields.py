"""Every config a user writes documents its fields and refuses unknown ones: walk the package,
collect its pydantic models, and check each field's description and the model's extra policy."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
from pydantic import BaseModel

import sim2real


def _package_models() -> list[type[BaseModel]]:
    models: dict[str, type[BaseModel]] = {}
    for info in pkgutil.walk_packages(sim2real.__path__, "sim2real."):
        if ".cli" in info.name:
            continue
        module = importlib.import_module(info.name)
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseModel) and obj.__module__ == info.name:
                models[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return [models[k] for k in sorted(models)]


MODELS = _package_models()


def test_the_walk_finds_the_configs():
    names = {m.__name__ for m in MODELS}
    assert {"TrackerConfig", "Term", "Reality", "PendulumSwingupConfig"} <= names
    assert len(MODELS) > 40


@pytest.mark.parametrize("model", MODELS, ids=lambda m: f"{m.__module__}.{m.__qualname__}")
def test_every_field_is_described(model: type[BaseModel]):
    missing = [name for name, f in model.model_fields.items() if not (f.description or "").strip()]
    assert not missing, f"{model.__qualname__}: no description for {missing}"


@pytest.mark.parametrize("model", MODELS, ids=lambda m: f"{m.__module__}.{m.__qualname__}")
def test_unknown_fields_are_refused(model: type[BaseModel]):
    assert model.model_config.get("extra") == "forbid", model.__qualname__
