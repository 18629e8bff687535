"""A prepared model on disk: ``MODEL_DIR/mesh.ply`` (metres, cleaned), ``MODEL_DIR/model.yaml``
(where it came from, units, size, symmetry, what the cleaning changed) and
``MODEL_DIR/viewpoints.npz`` (the sparse viewpoint model).
``sim2real.models.part.load_prepared_model`` reads one back as a ``PreparedModel``.

``model.yaml`` carries the symmetry twice: as BOP's ``symmetries_discrete`` /
``symmetries_continuous`` (millimetres) at the top level, so
``sim2real.models.symmetry.parse_symmetry("MODEL_DIR/model.yaml")`` reads it back, and under
``symmetry`` with its text form, confidence and origin (detected or given by the user).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field

from sim2real.core.atomic import atomic_folder
from sim2real.core.errors import InputError
from sim2real.core.strict import StrictModel, validate
from sim2real.core.yaml_io import read_yaml_mapping

MODEL_YAML = "model.yaml"
MESH_FILE = "mesh.ply"
VIEWS_FILE = "viewpoints.npz"
FORMAT_VERSION = 1


class SourceInfo(StrictModel):
    """What the model was made from."""

    path: str = Field(description="the input file as given")
    kind: Literal["cad", "mesh", "scan"] = Field(description="CAD solid, triangle mesh or scan")
    format: str = Field(description="file suffix, lower case, without the dot")
    unit: str = Field(description="length unit the input's numbers were read in (mm, m...)")
    unit_from: Literal["file", "user", "size", "format"] = Field(
        description="file: declared in the file; user: --unit; size: guessed from the bounding "
        "box; format: fixed by the format (glTF is metres)"
    )
    metres_per_unit: float = Field(gt=0, description="scale applied to the input [m/unit]")
    T_source_part: list[list[float]] = Field(
        default_factory=lambda: np.eye(4).tolist(),
        description="4x4 pose of the part frame in the input's frame (metres): the identity, or "
        "a translation when the origin was moved to the centre (scans)",
    )


class SymmetryInfo(StrictModel):
    text: str = Field(description="readable summary (Symmetry.describe)")
    source: Literal["detected", "user"] = Field(description="detected or given with --symmetry")
    confidence: float = Field(ge=0, le=1, description="1 = certain; see symmetry_detect")
    checked: list[dict[str, Any]] = Field(
        default_factory=list, description="every candidate tested, with its score"
    )


class CleaningStats(StrictModel):
    """Counts before and after each cleaning step; ``repairs`` says every change in words."""

    vertices_in: int
    faces_in: int
    merged_vertices: int = 0
    degenerate_faces: int = 0
    duplicate_faces: int = 0
    flipped_faces: int = 0
    holes_filled: int = 0
    holes_left_open: int = 0
    debris_faces_removed: int = 0
    internal_faces_removed: int = 0
    decimated_faces_from: int | None = None
    decimation_max_deviation_mm: float | None = None
    silhouette_iou_min: float | None = None
    vertices_out: int = 0
    faces_out: int = 0
    watertight: bool = False
    repairs: list[str] = Field(default_factory=list)


class ViewsInfo(StrictModel):
    file: str = VIEWS_FILE
    count: int
    points_per_view: int
    contour_per_view: int


class ModelConfig(StrictModel):
    """The whole ``model.yaml``."""

    format_version: int = FORMAT_VERSION
    name: str
    mesh: str = MESH_FILE
    units: Literal["m"] = "m"
    source: SourceInfo
    diameter_m: float = Field(gt=0, description="largest distance between two vertices [m]")
    centre_m: list[float] = Field(description="bounding-box centre, part frame [m]")
    extent_m: list[float] = Field(description="bounding-box size along x, y, z [m]")
    area_m2: float
    volume_m3: float | None = Field(None, description="enclosed volume when watertight [m^3]")
    symmetries_discrete: list[list[float]] = Field(
        default_factory=list, description="BOP: row-major 4x4, translation in millimetres"
    )
    symmetries_continuous: list[dict[str, list[float]]] = Field(
        default_factory=list, description="BOP: {axis, offset (mm)}"
    )
    symmetry: SymmetryInfo
    cleaning: CleaningStats
    views: ViewsInfo | None = None
    prepare: dict[str, Any] = Field(default_factory=dict, description="resolved PrepareConfig")
    tuning: dict[str, Any] | None = Field(
        None, description="reserved for `sim2real model tune` (per-vertex return probability)"
    )


def is_model_dir(path: str | Path) -> bool:
    path = Path(path)
    return path.is_dir() and (path / MODEL_YAML).is_file()


def require_model_dir(folder: Path) -> None:
    """InputError unless ``folder`` is a prepared model; a path that does not exist says so."""
    if not folder.exists():
        raise InputError(folder, None, "no such folder (a MODEL_DIR of `sim2real model prepare`)")
    if not is_model_dir(folder):
        raise InputError(
            folder, None, f"not a prepared model (no {MODEL_YAML}): run `sim2real model prepare`"
        )


def read_model_config(folder: str | Path) -> ModelConfig:
    """MODEL_DIR/model.yaml, validated; InputError naming the file and the field."""
    folder = Path(folder)
    require_model_dir(folder)
    file = folder / MODEL_YAML
    return validate(ModelConfig, read_yaml_mapping(file, MODEL_YAML), file)


def write_model_dir(out: str | Path, writer, overwrite: bool = False) -> Path:
    """Build a MODEL_DIR through ``writer(tmp_folder)`` in a temporary sibling folder, then
    rename it onto ``out``: a failure leaves nothing (and an old model untouched).
    An existing ``out`` is replaced only with ``overwrite`` and only if it is a model or empty."""
    out = Path(out)
    if out.exists():
        if not out.is_dir():
            raise InputError(out, "--out", "exists and is not a folder")
        if any(out.iterdir()) and not is_model_dir(out):
            raise InputError(out, "--out", "exists and is not a prepared model: choose another")
        if any(out.iterdir()) and not overwrite:
            raise InputError(out, "--out", "already holds a model: pass --overwrite")
    with atomic_folder(out) as tmp:
        writer(tmp)
    return out
