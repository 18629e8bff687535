"""Reading YAML files, with errors that name the file (validation: ``core.strict``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from sim2real.core.errors import InputError


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader refusing a key given twice in one mapping: plain YAML keeps the
    last silently, so a setting added below an existing one (``no_return_share: null`` ...
    ``no_return_share: 0.8``) would be read as whichever came last."""


def _unique_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False):
    seen = set()
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":  # '<<': its keys may be overridden
            continue
        key = loader.construct_object(key_node, deep=deep)
        try:
            twice = key in seen
        except TypeError:  # an unhashable key: the safe loader's own error says so
            break
        if twice:
            raise yaml.constructor.ConstructorError(
                None, None, f"key {key!r} given twice in one mapping", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _unique_mapping)


def load_yaml_text(text: str) -> Any:
    """``yaml.safe_load`` of ``text``, refusing keys given twice in one mapping."""
    return yaml.load(text, Loader=_UniqueKeyLoader)


def read_yaml(path: str | Path, what: str = "file") -> Any:
    """The parsed content of a YAML file; InputError when it is missing ("<what> not found"),
    unreadable or not valid YAML (a key given twice in one mapping included)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, None, f"{what} not found")
    try:
        return load_yaml_text(path.read_text())
    except OSError as exc:
        raise InputError(path, None, f"cannot read {what} ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise InputError(path, None, f"not valid YAML: {exc}") from None


def read_yaml_mapping(path: str | Path, what: str = "file") -> dict[str, Any]:
    """The mapping at the top of a YAML file; InputError for anything else (or an empty file)."""
    data = read_yaml(path, what)
    if not isinstance(data, dict):
        kind = "an empty file" if data is None else type(data).__name__
        raise InputError(path, None, f"expected a YAML mapping at the top level, got {kind}")
    return data
