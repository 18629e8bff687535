"""Read OpenCV FileStorage YAML (``%YAML:1.0`` header, ``!!opencv-matrix`` nodes), as written
by OpenCV, M3T and many calibration tools. PyYAML rejects both as they stand.

A topic echo (``rostopic echo -n 1 ... > cam.yaml``, ``ros2 topic echo --once``) ends each
message with ``---``: a YAML document separator, so the file holds the message and an empty
document. Empty documents are skipped; of several messages the first is read, and said.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from sim2real.core.errors import InputError


class _OpenCVLoader(yaml.SafeLoader):
    pass


def _construct_matrix(loader: yaml.SafeLoader, node: yaml.Node) -> np.ndarray:
    fields = loader.construct_mapping(node, deep=True)
    try:
        rows, cols, data = int(fields["rows"]), int(fields["cols"]), fields["data"]
        return np.asarray(data, dtype=np.float64).reshape(rows, cols)
    except (KeyError, TypeError, ValueError) as exc:
        raise yaml.YAMLError(f"malformed opencv-matrix: {exc}") from exc


for _tag in ("tag:yaml.org,2002:opencv-matrix", "!opencv-matrix"):
    _OpenCVLoader.add_constructor(_tag, _construct_matrix)


def load_opencv_yaml(path: str | Path) -> dict[str, Any]:
    """Parse an OpenCV YAML file into a dict; matrices become (rows, cols) float64 arrays."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise InputError(path, None, f"cannot read file ({exc.strerror})") from exc
    text = re.sub(r"^%YAML[: ]\d\.\d.*$", "", text, count=1, flags=re.MULTILINE)
    try:
        documents = [d for d in yaml.load_all(text, Loader=_OpenCVLoader) if d is not None]
    except yaml.YAMLError as exc:
        raise InputError(path, None, f"not valid OpenCV YAML ({exc})") from exc
    if len(documents) > 1:
        warnings.warn(
            f"{path}: {len(documents)} YAML documents (the messages of a topic echo?): "
            "the first is read",
            stacklevel=2,
        )
    data = documents[0] if documents else None
    if not isinstance(data, dict):
        raise InputError(path, None, "expected a YAML mapping at the top level")
    return data


def is_opencv_yaml(path: str | Path) -> bool:
    """True when the file starts with OpenCV's ``%YAML`` directive or holds an opencv-matrix."""
    try:
        head = Path(path).read_text(errors="replace")[:4096]
    except OSError:
        return False
    return head.lstrip().startswith("%YAML") or "opencv-matrix" in head
