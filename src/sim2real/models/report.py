"""Before/after pictures of a prepared model: the input and the prepared mesh seen from three
directions (orthographic, shaded; faces seen from behind, i.e. inverted normals or open
surfaces seen from inside, in red), a scan's points, and one view of the viewpoint model."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sim2real.core.mesh_io import Mesh
from sim2real.core.report import ReportSection, pyplot, save_figure, write_html_report
from sim2real.models.viewpoints import view_basis

VIEW_DIRECTIONS = {
    "front-left-top": np.array([-0.6, -0.7, 0.5]),
    "right-top": np.array([0.75, -0.25, 0.6]),
    "back-bottom": np.array([0.3, 0.8, -0.5]),
}


def shaded_view(
    mesh: Mesh, direction: np.ndarray, centre: np.ndarray, radius: float, size: int = 240
) -> np.ndarray:
    """(size, size, 3) float RGB in [0, 1]: orthographic view of ``mesh`` from ``direction``
    (toward ``centre``); grey Lambert shading of front faces, red for back faces, white where
    nothing is hit."""
    import open3d as o3d

    d = direction / np.linalg.norm(direction)
    a, b = view_basis(d)
    scene = o3d.t.geometry.RaycastingScene()
    scene.add_triangles(
        o3d.core.Tensor(mesh.vertices.astype(np.float32)),
        o3d.core.Tensor(mesh.faces.astype(np.uint32)),
    )
    s = np.linspace(-radius, radius, size)
    gu, gv = np.meshgrid(s, -s)  # image rows go down: v up
    origins = centre + 3 * radius * d + gu[..., None] * a + gv[..., None] * b
    rays = np.concatenate([origins, np.broadcast_to(-d, origins.shape)], axis=-1)
    hit = scene.cast_rays(o3d.core.Tensor(rays.astype(np.float32)))
    t = hit["t_hit"].numpy()
    n = hit["primitive_normals"].numpy()
    ok = np.isfinite(t)
    facing = n @ d  # > 0: the face's outward normal points at the viewer
    light = np.clip(
        np.abs(n @ (d + 0.4 * b + 0.2 * a) / np.linalg.norm(d + 0.4 * b + 0.2 * a)), 0, 1
    )
    shade = 0.25 + 0.7 * light
    img = np.ones((*t.shape, 3))
    front = ok & (facing >= 0)
    back = ok & (facing < 0)
    img[front] = shade[front, None] * np.array([0.85, 0.87, 0.9])
    img[back] = shade[back, None] * np.array([0.95, 0.25, 0.2])
    return img


def before_after_png(path: Path, before: Mesh, after: Mesh, points: np.ndarray | None) -> None:
    """Rows: input (or scan points) and prepared mesh; columns: three view directions."""
    plt = pyplot()
    v = after.vertices
    centre = (v.max(axis=0) + v.min(axis=0)) / 2
    radius = 0.55 * float(np.linalg.norm(v.max(axis=0) - v.min(axis=0)))
    rows = [("input mesh", before)]
    if points is not None:
        rows.insert(0, ("scan points", None))
    rows.append(("prepared", after))
    fig, axes = plt.subplots(
        len(rows), 3, figsize=(9.5, 3.2 * len(rows)), squeeze=False, constrained_layout=True
    )
    for r, (label, mesh) in enumerate(rows):
        for c, (name, d) in enumerate(VIEW_DIRECTIONS.items()):
            ax = axes[r][c]
            if mesh is None:
                dn = d / np.linalg.norm(d)
                a, b = view_basis(dn)
                q = points - centre
                ax.scatter(q @ a, q @ b, s=0.2, c=q @ dn, cmap="viridis")
                ax.set_xlim(-radius, radius)
                ax.set_ylim(-radius, radius)
                ax.set_aspect("equal")
            else:
                ax.imshow(shaded_view(mesh, d, centre, radius), interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_title(f"{label}, {name}", fontsize=9)
    save_figure(fig, path, dpi=90)


def viewpoint_png(path: Path, result) -> None:
    """One view of the viewpoint model: its visible points (shaded by depth) and outline points
    with their outward directions, in that view's image plane."""
    plt = pyplot()
    views = result.views
    k = views.nearest_direction(VIEW_DIRECTIONS["front-left-top"])
    d = views.directions[k]
    a, b = view_basis(d)
    p = views.points[k] - views.centre
    cp = views.contour_points[k] - views.centre
    co = views.contour_outward[k]
    fig, ax = plt.subplots(figsize=(5, 5), constrained_layout=True)
    ax.scatter(p @ a, p @ b, s=4, c=p @ d, cmap="viridis", label="visible points")
    ax.quiver(cp @ a, cp @ b, co @ a, co @ b, color="r", scale=25, width=0.004, label="outline")
    ax.set_aspect("equal")
    ax.set_title(f"view {k} of {len(views)}: direction ({', '.join(f'{x:.2f}' for x in d)})")
    ax.legend(loc="lower right", fontsize=8)
    save_figure(fig, path, dpi=90)


def prepare_sections(result, folder: Path, prefix: str = "") -> list[ReportSection]:
    """Write the pictures into ``folder`` and return the report sections that show them."""
    folder.mkdir(parents=True, exist_ok=True)
    before_after_png(
        folder / f"{prefix}before_after.png",
        result.raw,
        result.mesh,
        result.raw_input.points - np.asarray(result.source.T_source_part)[:3, 3]
        if result.raw_input.points is not None
        else None,
    )
    c = result.cleaning
    table = [
        ("input", f"{result.input_path.name} ({result.source.kind}, {result.source.format})"),
        ("unit", f"{result.source.unit} (from {result.source.unit_from})"),
        ("faces", f"{c.faces_in} -> {c.faces_out}"),
        ("vertices", f"{c.vertices_in} -> {c.vertices_out}"),
        ("watertight", str(c.watertight)),
        ("size [mm]", " x ".join(f"{x:.2f}" for x in result.mesh.extent_m * 1000)),
        ("diameter [mm]", f"{1000 * result.diameter_m:.2f}"),
        (
            "symmetry",
            f"{result.symmetry.symmetry.describe()} ({result.symmetry_source}, "
            f"confidence {result.symmetry.confidence:.3f})",
        ),
    ]
    table += [(f"time: {k} [s]", f"{v:.2f}") for k, v in result.timings_s.items()]
    text = "Repairs: " + ("; ".join(c.repairs) if c.repairs else "none needed.")
    if result.notes:
        text += " Notes: " + "; ".join(result.notes)
    sections = [
        ReportSection(
            "Input and prepared model",
            text + " Red = faces seen from behind (inverted normals, or an open surface seen "
            "from inside).",
            [f"{prefix}before_after.png"],
            table,
        )
    ]
    if result.views is not None:
        viewpoint_png(folder / f"{prefix}viewpoint.png", result)
        sections.append(
            ReportSection(
                "Viewpoint model",
                f"{len(result.views)} views on a Fibonacci sphere, "
                f"{result.views.points.shape[1]} visible points and "
                f"{result.views.contour_points.shape[1]} outline points each.",
                [f"{prefix}viewpoint.png"],
            )
        )
    return sections


def write_prepare_report(result, folder: str | Path) -> Path:
    folder = Path(folder)
    sections = prepare_sections(result, folder)
    return write_html_report(folder, f"Prepared model: {result.mesh.name}", sections)
