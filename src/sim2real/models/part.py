"""The one part object: ``PreparedModel``, a part as the renderer, the tracker and the evaluation
use it (mesh in metres, symmetry, viewpoint model with contours, tuned surface returns).

``load_part`` reads a prepared MODEL_DIR (``sim2real model prepare``: everything stored) or a
plain mesh file (the mesh alone; the viewpoint model is built from it when first needed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sim2real.core.errors import InputError
from sim2real.core.mesh_io import Mesh, MeshUnit, load_mesh
from sim2real.models.model_dir import MODEL_YAML, ModelConfig, is_model_dir, read_model_config
from sim2real.models.symmetry import NO_SYMMETRY, Symmetry, load_symmetry_file
from sim2real.models.viewpoints import ViewpointModel, build_viewpoints, load_viewpoints
from sim2real.sensors.surface_returns import RETURNS_FILE, SurfaceReturns


@dataclass
class PreparedModel:
    """A rigid part. ``config`` and ``folder`` are set when it was read from a MODEL_DIR."""

    mesh: Mesh
    """The part's triangle mesh, metres, part frame."""
    symmetry: Symmetry = NO_SYMMETRY
    """Transforms of the part frame that leave its shape unchanged (for pose errors)."""
    returns: SurfaceReturns | None = None
    """Where the real sensor returns depth on the surface (``sim2real model tune``), or None."""
    config: ModelConfig | None = None
    """The MODEL_DIR's ``model.yaml``."""
    folder: Path | None = None
    """The MODEL_DIR it was read from."""
    _views: ViewpointModel | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.mesh.name

    @property
    def stored_views(self) -> ViewpointModel | None:
        """The viewpoint model stored in the MODEL_DIR (read on first use), or None."""
        if self._views is None and self.config is not None and self.config.views is not None:
            self._views = load_viewpoints(self.folder / self.config.views.file)
        return self._views

    def viewpoints(self, n_views: int = 800, points_per_view: int = 400) -> ViewpointModel:
        """The stored viewpoint model, else one built once from the mesh (``n_views`` x
        ``points_per_view``); weighted by the tuned surface returns when there are any."""
        views = self.stored_views
        if views is None:
            views = self._views = build_viewpoints(self.mesh, n_views, points_per_view)
        if self.returns is not None and views.weights is None:
            views.with_returns(self.returns)
        return views


def load_prepared_model(folder: str | Path) -> PreparedModel:
    """Read a MODEL_DIR: config, mesh, symmetry and tuned returns (the viewpoint model on first
    use); InputError when something is missing or malformed."""
    folder = Path(folder)
    config = read_model_config(folder)
    mesh = load_mesh(folder / config.mesh, "m")
    mesh = Mesh(mesh.vertices, mesh.faces, config.name, str(folder))
    symmetry = load_symmetry_file(folder / MODEL_YAML)
    tuned = folder / RETURNS_FILE  # written by `sim2real model tune`
    returns = SurfaceReturns.load(tuned) if tuned.is_file() else None
    return PreparedModel(mesh, symmetry, returns, config, folder)


def read_part_mesh(path: Path, unit: str) -> tuple[Mesh, SurfaceReturns | None]:
    """The mesh and tuned returns of a MODEL_DIR or mesh file: the part reader the renderer's
    scene files use (``sensors.scene.load_scene_yaml``)."""
    part = load_part(path, unit)
    return part.mesh, part.returns


def load_part(path: str | Path, unit: MeshUnit = "auto") -> PreparedModel:
    """A MODEL_DIR (metres by construction: ``unit`` must be auto or m) or a mesh file read in
    ``unit``."""
    path = Path(path)
    if path.is_dir():
        if unit not in ("auto", "m"):
            raise InputError(
                path, "mesh_unit", f"a prepared model is in metres; drop the unit '{unit}'"
            )
        if not is_model_dir(path):
            raise InputError(path, None, f"a folder without {MODEL_YAML}: not a prepared model")
        return load_prepared_model(path)
    from sim2real.models.cad_import import CAD_SUFFIXES

    if path.suffix.lower() in CAD_SUFFIXES:  # trimesh needs a module for it that is not ours
        why = f"a CAD file: prepare it first (sim2real model prepare {path.name} --out MODEL_DIR)"
        raise InputError(path, None, why + " and give the MODEL_DIR")
    return PreparedModel(load_mesh(path, unit))
