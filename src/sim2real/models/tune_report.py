"""Pictures of a tuned model: the model coloured by return probability and by confidence, and
the real frame's valid pixels on the part beside the simulated ones, untuned and tuned."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sim2real.core.report import (
    ReportSection,
    crop_around,
    pyplot,
    save_figure,
    write_html_report,
)


def _attribute_images(result, T: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pixel, from the camera at ``T``: return probability, confidence, part mask."""
    from sim2real.sensors.render import DepthRenderer
    from sim2real.sensors.scene import Scene, SceneObject

    returns = result.returns
    renderer = DepthRenderer(Scene([SceneObject(returns.mesh, T)]), result.camera)
    hit = renderer.cast_rays()
    mask = np.isfinite(hit["t_hit"])
    p = np.full(mask.shape, np.nan)
    c = np.full(mask.shape, np.nan)
    v, u = np.nonzero(mask)
    ids, uvs = hit["primitive_ids"][v, u], hit["primitive_uvs"][v, u]
    p[v, u] = returns.at_faces(ids, uvs, returns.return_probability)
    c[v, u] = returns.at_faces(ids, uvs, returns.confidence)
    return p, c, mask


def tune_figures(result, folder: Path) -> list[str]:
    plt = pyplot()
    T = result.tune.poses[0]
    behind = T.copy()  # the far side, unseen in the frames: low confidence expected
    behind[:3, :3] = T[:3, :3] @ np.diag([-1.0, 1.0, -1.0])
    images = []
    fig, axes = plt.subplots(2, 2, figsize=(8, 6.5), constrained_layout=True)
    for row, (pose, label) in enumerate(((T, "as in frame 0"), (behind, "turned around"))):
        p, c, mask = _attribute_images(result, pose)
        sl = crop_around(mask, 12)
        for ax, image, title, cmap in (
            (axes[row, 0], p, f"return probability ({label})", "viridis"),
            (axes[row, 1], c, f"confidence ({label})", "magma"),
        ):
            shown = ax.imshow(image[sl], vmin=0, vmax=1, cmap=cmap)
            ax.set_title(title, fontsize=9)
            ax.set_xticks([])
            ax.set_yticks([])
            fig.colorbar(shown, ax=ax, shrink=0.8)
    save_figure(fig, folder / "tuned_model.png", dpi=100)
    images.append("tuned_model.png")

    fig, axes = plt.subplots(1, 3, figsize=(11, 3.8), constrained_layout=True)
    region = result.region[0]
    sl = crop_around(region, 12)
    real = result.depths[0]
    on_part = result.sim_before[0][region & (result.sim_before[0] > 0)]
    lo, hi = np.percentile(on_part, [1, 99]) if on_part.size else (None, None)
    for ax, depth, title in (
        (axes[0], real, "real frame"),
        (
            axes[1],
            result.sim_before[0],
            f"simulated, untuned ({result.before[0]['agreement']:.2f})",
        ),
        (axes[2], result.sim_after[0], f"simulated, tuned ({result.after[0]['agreement']:.2f})"),
    ):
        image = np.where(depth > 0, depth, np.nan)
        ax.imshow(image[sl], cmap="turbo", vmin=lo, vmax=hi)
        ax.contour(region[sl], [0.5], colors="black", linewidths=0.8)
        ax.set_title(title, fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    save_figure(fig, folder / "valid_pixels.png", dpi=100)
    images.append("valid_pixels.png")
    return images


def tune_sections(result, folder: Path) -> list[ReportSection]:
    folder.mkdir(parents=True, exist_ok=True)
    s = result.summary()
    table = [
        ("frames", str(s["frames"])),
        ("returns on the part's observed pixels", f"{100 * s['return_rate']:.1f} %"),
        ("return probability range", f"{s['probability_range'][0]:.2f} .. {s['probability_range'][1]:.2f}"),
        ("valid-pixel agreement, untuned", f"{s['valid_pixel_agreement']['untuned']:.3f}"),
        ("valid-pixel agreement, tuned", f"{s['valid_pixel_agreement']['tuned']:.3f}"),
        ("valid-pixel IoU, untuned", f"{s['valid_pixel_iou']['untuned']:.3f}"),
        ("valid-pixel IoU, tuned", f"{s['valid_pixel_iou']['tuned']:.3f}"),
    ]  # fmt: skip
    return [
        ReportSection(
            "Tuned model",
            "Where the real sensor returns depth on the part (probability per surface region) "
            "and how much each region's estimate rests on observations (confidence); below, the "
            "real frame's valid pixels on the part (black outline: the part, less occluders) "
            "beside simulated frames without and with the tuning. Agreement: share of the "
            "outlined pixels where real and simulated agree on valid / no return (the same "
            "frames the tuning used).",
            tune_figures(result, folder),
            table,
        )
    ]


def write_tune_report(result, folder: str | Path) -> Path:
    folder = Path(folder)
    return write_html_report(folder, "sim2real model tune", tune_sections(result, folder))
