"""``prepare_model``: any input (CAD, mesh, scan) -> a cleaned mesh in metres, its size and
symmetry, and its sparse viewpoint model, with every repair reported."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import Field

from sim2real.core.errors import InputError
from sim2real.core.mesh_io import Mesh, MeshUnit
from sim2real.core.strict import StrictModel
from sim2real.models.clean import CleanedMesh, clean_mesh, face_areas, is_watertight
from sim2real.models.importers import RawInput, load_input
from sim2real.models.model_dir import (
    MESH_FILE,
    MODEL_YAML,
    VIEWS_FILE,
    CleaningStats,
    ModelConfig,
    SourceInfo,
    SymmetryInfo,
    ViewsInfo,
    write_model_dir,
)
from sim2real.models.symmetry_detect import DetectedSymmetry, detect_symmetry, symmetry_to_bop
from sim2real.models.viewpoints import ViewpointModel, build_viewpoints, save_viewpoints


class PrepareConfig(StrictModel):
    """How ``sim2real model prepare`` turns an input into a model."""

    unit: MeshUnit = Field(
        "auto", description="unit of the input's numbers; auto = declared by the file or by size"
    )
    chordal_tolerance_mm: float = Field(
        0.05, gt=0, description="CAD tessellation: largest triangle-to-surface distance [mm]"
    )
    angular_tolerance_deg: float = Field(
        20.0, gt=0, le=90, description="CAD tessellation: largest angle between facets [deg]"
    )
    target_faces: int | None = Field(
        100_000, ge=100, description="decimate above this many triangles; None = never"
    )
    hole_max_perimeter_fraction: float = Field(
        0.2, ge=0, description="fill holes up to this perimeter, as a fraction of the diameter"
    )
    remove_internal: bool = Field(True, description="drop faces no outside viewpoint sees")
    symmetry: str = Field(
        "auto", description="auto (detect) or a --symmetry text / BOP file (models.symmetry)"
    )
    scan_method: Literal["poisson", "bpa"] = Field("poisson", description="scan meshing")
    density_quantile: float = Field(
        0.02, ge=0, lt=1, description="Poisson: trim vertices of the lowest density quantile"
    )
    recentre: bool | None = Field(
        None, description="move the origin to the bounding-box centre; None = for scans only"
    )
    views: int = Field(2000, ge=1, description="viewpoints on the sphere (0 views not allowed)")
    points_per_view: int = Field(400, ge=1, description="visible points stored per view")
    contour_per_view: int = Field(
        200, ge=1, description="outline points stored per view (the colour modality's lines)"
    )
    view_grid: int = Field(96, ge=8, description="rays per side of each view's bundle")
    seed: int = 0


@dataclass
class PrepareResult:
    """Everything ``prepare_model`` made; ``write`` puts it in a MODEL_DIR."""

    input_path: Path
    config: PrepareConfig
    raw: Mesh
    """The input as read (metres, part frame), before cleaning."""
    raw_input: RawInput
    mesh: Mesh
    """The prepared mesh (metres, part frame)."""
    source: SourceInfo
    cleaning: CleaningStats
    symmetry: DetectedSymmetry
    symmetry_source: str
    views: ViewpointModel | None
    diameter_m: float
    timings_s: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def model_config(self) -> ModelConfig:
        v, f = self.mesh.vertices, self.mesh.faces
        lo, hi = v.min(axis=0), v.max(axis=0)
        volume = None
        if self.cleaning.watertight:
            v0, v1, v2 = (v[f[:, m]] for m in range(3))
            volume = float(np.einsum("ij,ij->i", v0, np.cross(v1, v2)).sum() / 6)
        return ModelConfig(
            name=self.mesh.name,
            source=self.source,
            diameter_m=self.diameter_m,
            centre_m=((lo + hi) / 2).tolist(),
            extent_m=(hi - lo).tolist(),
            area_m2=float(face_areas(v, f).sum()),
            volume_m3=volume,
            **symmetry_to_bop(self.symmetry.symmetry),
            symmetry=SymmetryInfo(
                text=self.symmetry.symmetry.describe(),
                source=self.symmetry_source,
                confidence=float(np.clip(self.symmetry.confidence, 0, 1)),
                checked=self.symmetry.checked,
            ),
            cleaning=self.cleaning,
            views=None
            if self.views is None
            else ViewsInfo(
                count=len(self.views),
                points_per_view=self.views.points.shape[1],
                contour_per_view=self.views.contour_points.shape[1],
            ),
            prepare=self.config.model_dump(),
        )

    def write(self, out: str | Path, *, overwrite: bool = False, report: bool = True) -> Path:
        """Write MODEL_DIR (mesh.ply, model.yaml, viewpoints.npz, report/) all at once."""
        import trimesh
        import yaml

        config = self.model_config()

        def writer(tmp: Path) -> None:
            trimesh.Trimesh(self.mesh.vertices, self.mesh.faces, process=False).export(
                tmp / MESH_FILE
            )
            if self.views is not None:
                save_viewpoints(tmp / VIEWS_FILE, self.views)
            (tmp / MODEL_YAML).write_text(
                yaml.safe_dump(
                    config.model_dump(mode="json"), sort_keys=False, default_flow_style=None
                )
            )
            if report:
                from sim2real.models.report import write_prepare_report

                write_prepare_report(self, tmp / "report")

        return write_model_dir(out, writer, overwrite)

    def summary(self) -> list[str]:
        c = self.cleaning
        e = self.mesh.extent_m * 1000
        lines = [
            f"{self.source.kind} {self.input_path.name}: {self.source.unit} ({self.source.unit_from})"
            f", {c.faces_in} -> {c.faces_out} faces, "
            f"{'watertight' if c.watertight else 'open'}",
            f"size {e[0]:.1f} x {e[1]:.1f} x {e[2]:.1f} mm, diameter {1000 * self.diameter_m:.1f} mm",
            f"symmetry ({self.symmetry_source}): {self.symmetry.symmetry.describe()}, "
            f"confidence {self.symmetry.confidence:.3f}",
        ]
        if self.views is not None:
            lines.append(
                f"viewpoint model: {len(self.views)} views x {self.views.points.shape[1]} points "
                f"({self.views.build_s:.1f} s)"
            )
        lines += [f"note: {n}" for n in self.notes]
        lines += [f"repair: {r}" for r in c.repairs]
        return lines


def true_diameter(vertices: np.ndarray) -> float:
    """Largest distance between two vertices (over the convex hull's vertices)."""
    from scipy.spatial import ConvexHull, QhullError

    try:
        hull = vertices[ConvexHull(vertices).vertices]
    except (QhullError, ValueError):  # flat or degenerate: all vertices are candidates
        hull = vertices
    if len(hull) > 4000:
        hull = hull[np.random.default_rng(0).choice(len(hull), 4000, replace=False)]
    best = 0.0
    for i in range(0, len(hull), 512):
        d = np.linalg.norm(hull[i : i + 512, None, :] - hull[None, :, :], axis=2)
        best = max(best, float(d.max()))
    return best


def _finish(vertices, faces, repairs) -> CleanedMesh:
    used = np.unique(faces)
    remap = np.full(len(vertices), -1, dtype=np.int64)
    remap[used] = np.arange(len(used))
    return CleanedMesh(vertices[used], remap[faces], {}, repairs)


def prepare_model(
    path: str | Path, config: PrepareConfig | None = None, name: str | None = None
) -> PrepareResult:
    """Import ``path`` (CAD, mesh or scan), clean it, decimate it, detect its symmetry and
    build its viewpoint model. Raises ``InputError`` for bad input; every automatic repair is
    listed in ``result.cleaning.repairs``."""
    from sim2real.models.symmetry import parse_symmetry

    config = config or PrepareConfig()
    path = Path(path)
    timings: dict[str, float] = {}
    # the override is checked before the long work
    user_symmetry = None if config.symmetry == "auto" else parse_symmetry(config.symmetry)
    t = time.perf_counter()
    raw = load_input(
        path,
        config.unit,
        chordal_tolerance_mm=config.chordal_tolerance_mm,
        angular_tolerance_deg=config.angular_tolerance_deg,
        scan_method=config.scan_method,
        density_quantile=config.density_quantile,
    )
    timings["import"] = time.perf_counter() - t
    notes = list(raw.notes)

    t = time.perf_counter()
    d0 = float(np.linalg.norm(raw.vertices.max(axis=0) - raw.vertices.min(axis=0)))
    cleaned = clean_mesh(
        raw.vertices,
        raw.faces,
        hole_max_perimeter=config.hole_max_perimeter_fraction * d0,
        remove_fragments=raw.kind == "scan",
        unit_name="m",
    )
    stats = CleaningStats(**{k: v for k, v in cleaned.stats.items() if k != "watertight"})
    repairs = list(cleaned.repairs)
    if len(cleaned.faces) == 0:
        raise InputError(path, "faces", "nothing left after cleaning (all faces degenerate)")
    if raw.kind == "scan" and not is_watertight(cleaned.faces, len(cleaned.vertices)):
        repairs.append(
            "open scan: the points cover only part of the surface, so the mesh is left open "
            "where there are no points (only the scanned side is modelled)"
        )
    v, f = cleaned.vertices, cleaned.faces
    timings["clean"] = time.perf_counter() - t

    recentre = config.recentre if config.recentre is not None else raw.kind == "scan"
    T_source_part = np.eye(4)
    raw_v = raw.vertices
    if recentre:
        c = (v.max(axis=0) + v.min(axis=0)) / 2
        v, raw_v = v - c, raw_v - c
        T_source_part[:3, 3] = c
        notes.append(
            f"origin moved to the bounding-box centre ({', '.join(f'{x:.4f}' for x in c)}) m "
            "of the input frame"
        )

    if config.target_faces is not None and len(f) > config.target_faces:
        from sim2real.models.decimate import decimate

        t = time.perf_counter()
        dec = decimate(v, f, config.target_faces)
        after = clean_mesh(dec.vertices, dec.faces, hole_max_perimeter=0.0)
        v, f = after.vertices, after.faces
        stats.decimated_faces_from = dec.faces_before
        stats.decimation_max_deviation_mm = round(1000 * dec.max_deviation, 4)
        stats.silhouette_iou_min = round(dec.silhouette_iou_min, 4)
        repairs.append(
            f"decimated {dec.faces_before} -> {len(f)} faces (quadric error): surface moved at "
            f"most {1000 * dec.max_deviation:.3f} mm, silhouette IoU >= "
            f"{dec.silhouette_iou_min:.3f} over 26 views"
        )
        timings["decimate"] = time.perf_counter() - t

    if config.remove_internal:
        from sim2real.models.visibility import face_visibility, removable_hidden_faces

        t = time.perf_counter()
        vis = face_visibility(v, f)
        remove, kept_hidden = removable_hidden_faces(f, len(v), vis.visible)
        hidden = int(remove.sum())
        stats.internal_faces_removed = hidden
        if hidden:
            kept = _finish(v, f[~remove], repairs)
            v, f = kept.vertices, kept.faces
            repairs.append(
                f"removed {hidden} internal faces that no outside viewpoint sees "
                f"({vis.seen_by_bundles} faces seen by 120 ray bundles, "
                f"{vis.seen_by_escape} more by escaping rays)"
            )
        if kept_hidden:
            notes.append(
                f"{kept_hidden} faces no ray reached were kept: they belong to closed surfaces "
                "that are seen elsewhere (narrow creases or slits)"
            )
        timings["internal"] = time.perf_counter() - t
    stats.vertices_out, stats.faces_out = len(v), len(f)
    stats.watertight = is_watertight(f, len(v))
    stats.repairs = repairs
    mesh = Mesh(v, f.astype(np.int32), name or path.stem, str(path))

    t = time.perf_counter()
    if user_symmetry is not None:
        detected = DetectedSymmetry(user_symmetry, 1.0, [], ["given with --symmetry"])
        sym_source = "user"
    else:
        detected = detect_symmetry(v, f, seed=config.seed)
        sym_source = "detected"
    notes += detected.notes
    timings["symmetry"] = time.perf_counter() - t

    t = time.perf_counter()
    views = build_viewpoints(
        mesh,
        config.views,
        config.points_per_view,
        config.contour_per_view,
        config.view_grid,
        config.seed,
    )
    timings["viewpoints"] = time.perf_counter() - t
    source = SourceInfo(
        path=str(path),
        kind=raw.kind,
        format=raw.format,
        unit=raw.unit,
        unit_from=raw.unit_from,
        metres_per_unit=raw.metres_per_unit,
        T_source_part=T_source_part.tolist(),
    )
    raw_mesh = Mesh(raw_v, raw.faces.astype(np.int32), f"{mesh.name} (input)", str(path))
    return PrepareResult(
        path,
        config,
        raw_mesh,
        raw,
        mesh,
        source,
        stats,
        detected,
        sym_source,
        views,
        true_diameter(v),
        timings,
        notes,
    )
