"""Report helpers: depth images as colour-mapped PNG panels with a colour bar, and a small
self-contained ``index.html`` that shows them. Matplotlib runs headless (Agg)."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sim2real.core.atomic import atomic_path, write_text_atomic


def pyplot():
    """matplotlib.pyplot on the headless Agg backend (imported on first use: heavy)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


FIGURE_LOG_ENV = "SIM2REAL_FIGURE_LOG"
"""When set to a file, every saved figure appends what it draws there (``describe_figure``, one
JSON line): how tests check a picture's content rather than its file size."""


def describe_figure(fig) -> dict:
    """What a matplotlib figure draws: per axes its title, axis labels, and each line's label,
    point count and y range, the number of images and of scatter / filled collections."""

    def line(ln) -> dict:
        y = np.asarray(ln.get_ydata(), dtype=float)
        finite = y[np.isfinite(y)]
        return {
            "label": ln.get_label(),
            "n": int(y.size),
            "ymin": float(finite.min()) if finite.size else None,
            "ymax": float(finite.max()) if finite.size else None,
        }

    axes = []
    for ax in fig.axes:
        if ax.get_label() == "<colorbar>":
            continue
        axes.append(
            {
                "title": ax.get_title(),
                "xlabel": ax.get_xlabel(),
                "ylabel": ax.get_ylabel(),
                "lines": [line(ln) for ln in ax.get_lines()],
                "images": len(ax.get_images()),
                "collections": len(ax.collections),
            }
        )
    return {"axes": axes}


def save_figure(fig, path: str | Path, dpi: int = 110) -> None:
    """Write a matplotlib figure as PNG atomically (temporary file, then rename) and close it."""
    import json
    import os

    plt = pyplot()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=dpi, format="png")
    log = os.environ.get(FIGURE_LOG_ENV)
    if log:
        with open(log, "a") as fh:
            fh.write(json.dumps({"file": Path(path).name, **describe_figure(fig)}) + "\n")
    plt.close(fig)


def keep_image_extent(ax, shape: tuple[int, ...]) -> None:
    """Axes limits of an ``imshow`` of an image of ``shape`` (rows, columns, ...): points
    plotted beyond the frame (a projected model, keypoints) would otherwise widen the panel."""
    ax.set_xlim(-0.5, shape[1] - 0.5)
    ax.set_ylim(shape[0] - 0.5, -0.5)


def crop_around(mask: np.ndarray, pad: int) -> tuple[slice, slice]:
    """The bounding box of ``mask``'s True pixels, grown by ``pad`` and clipped to the image;
    the whole image when nothing is set."""
    v, u = np.nonzero(mask)
    if v.size == 0:
        return slice(None), slice(None)
    return slice(max(v.min() - pad, 0), v.max() + pad + 1), slice(
        max(u.min() - pad, 0), u.max() + pad + 1
    )


def depth_panels_png(
    path: str | Path,
    panels: dict[str, np.ndarray],
    *,
    vmin_m: float | None = None,
    vmax_m: float | None = None,
    cmap: str = "turbo",
    label: str = "depth [m]",
    symmetric: bool = False,
) -> None:
    """Save (H, W) images side by side with one shared colour bar; 0 (no return) shows black.
    ``symmetric`` centres the colour scale on 0 (for signed differences), where 0 is a value."""
    plt = pyplot()
    values = np.concatenate([p[p != 0].ravel() for p in panels.values()] or [np.zeros(1)])
    values = values[np.isfinite(values)]
    if symmetric:
        bound = float(np.percentile(np.abs(values), 99)) if values.size else 1.0
        vmin_m, vmax_m = -bound, bound
    else:
        vmin_m = (
            float(np.percentile(values, 1)) if vmin_m is None and values.size else (vmin_m or 0.0)
        )
        vmax_m = (
            float(np.percentile(values, 99)) if vmax_m is None and values.size else (vmax_m or 1.0)
        )
    n = len(panels)
    first = next(iter(panels.values()))
    aspect = first.shape[1] / first.shape[0]
    fig, axes = plt.subplots(
        1, n, figsize=(3.6 * aspect * n / 1.3 + 1.0, 3.6), squeeze=False, constrained_layout=True
    )
    colormap = plt.get_cmap(cmap).with_extremes(bad="black")
    image = None
    for ax, (title, img) in zip(axes[0], panels.items(), strict=True):
        shown = (
            np.where(img != 0, img, np.nan)
            if not symmetric
            else np.where(np.isfinite(img), img, np.nan)
        )
        image = ax.imshow(shown, cmap=colormap, vmin=vmin_m, vmax=vmax_m, interpolation="nearest")
        ax.set_title(title, fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.colorbar(image, ax=axes[0].tolist(), shrink=0.85, label=label)
    save_figure(fig, path)


@dataclass
class ReportSection:
    title: str
    text: str = ""
    images: list[str] = field(default_factory=list)
    """Image file names relative to the report folder."""
    table: list[tuple[str, str]] = field(default_factory=list)
    grid: list[list[str]] = field(default_factory=list)
    """A table with a header row (first row) and any number of columns."""


def write_html_report(folder: str | Path, title: str, sections: list[ReportSection]) -> Path:
    """Write ``folder/index.html`` showing the sections' text, tables and images."""
    folder = Path(folder)
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title>",
        "<style>body{font-family:sans-serif;max-width:1400px;margin:2em auto;color:#222}"
        "img{max-width:100%;border:1px solid #ccc;margin:.5em 0}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .6em}"
        "h2{border-bottom:1px solid #ddd}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
    ]
    for section in sections:
        parts.append(f"<h2>{html.escape(section.title)}</h2>")
        if section.text:
            parts.append(f"<p>{html.escape(section.text)}</p>")
        if section.table:
            rows = "".join(
                f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>"
                for k, v in section.table
            )
            parts.append(f"<table>{rows}</table>")
        if section.grid:
            head = "".join(f"<th>{html.escape(c)}</th>" for c in section.grid[0])
            body = "".join(
                "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
                for row in section.grid[1:]
            )
            parts.append(f"<table><tr>{head}</tr>{body}</table>")
        for image in section.images:
            parts.append(f"<div><img src='{html.escape(image)}' alt='{html.escape(image)}'></div>")
    parts.append("</body></html>")
    index = folder / "index.html"
    write_text_atomic(index, "\n".join(parts))
    return index
