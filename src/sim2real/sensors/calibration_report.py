"""Pictures of a calibration and of a gap measurement: real against simulated statistics,
and the frames with their reference geometry."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sim2real.core.report import _pyplot, depth_panels_png, save_figure
from sim2real.sensors.reference_frame import ReferenceFrame
from sim2real.sensors.statistics import (
    DEPTH_BIN_M,
    INCIDENCE_BIN_EDGES_DEG,
    PixelTables,
    noise_spread_by_bin,
    valid_rates,
)

REAL_STYLE = {"color": "black", "marker": "o", "linestyle": "-", "label": "real"}


def _series(real: PixelTables, sims: dict[str, PixelTables]):
    """(table, plot style) of the real frames, then of each simulation."""
    yield real, REAL_STYLE
    for name, table in sims.items():
        yield table, {"marker": ".", "linestyle": "--", "label": name}


def reference_overlay_png(path: str | Path, ref: ReferenceFrame) -> None:
    """The real frame (grey) with its reference regions coloured and the scene's edges in red."""
    plt = _pyplot()
    depth = ref.depth_m
    valid = depth > 0
    lo, hi = np.percentile(depth[valid], [1, 99]) if valid.any() else (0, 1)
    grey = np.clip((depth - lo) / max(hi - lo, 1e-6), 0, 1)
    rgb = np.stack([grey] * 3, axis=-1)
    rgb[~valid] = 0
    colours = plt.get_cmap("tab10")
    for k in range(len(ref.regions)):
        mask = ref.region_id == k
        rgb[mask] = 0.55 * rgb[mask] + 0.45 * np.array(colours(k % 10)[:3])
    rgb[ref.edge] = (1, 0, 0)
    fig, ax = plt.subplots(
        figsize=(7, 7 * depth.shape[0] / depth.shape[1] + 0.6), constrained_layout=True
    )
    ax.imshow(rgb, interpolation="nearest")
    names = ", ".join(f"{r.name} ({r.kind}, {r.pixels} px)" for r in ref.regions[:6])
    ax.set_title(f"{Path(ref.source).name}: {names}", fontsize=7)
    ax.set_xticks([])
    ax.set_yticks([])
    save_figure(fig, Path(path))


def noise_curves_png(path: str | Path, real: PixelTables, sims: dict[str, PixelTables]) -> None:
    """Local noise spread against depth (left) and incidence angle (right), real and simulated."""
    plt = _pyplot()
    fig, (ax_z, ax_t) = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    for table, style in _series(real, sims):
        by_z = noise_spread_by_bin(table)
        keys = sorted(by_z)
        if keys:
            ax_z.plot(
                [(k[0] + 0.5) * DEPTH_BIN_M for k in keys],
                [1e3 * by_z[k][0] for k in keys],
                **style,
            )
        by_zt = noise_spread_by_bin(table, by_incidence=True)
        angles = sorted({k[1] for k in by_zt})
        spread = [
            np.average(
                [v[0] for k, v in by_zt.items() if k[1] == a],
                weights=[v[1] for k, v in by_zt.items() if k[1] == a],
            )
            for a in angles
        ]
        centres = [
            (INCIDENCE_BIN_EDGES_DEG[a] + INCIDENCE_BIN_EDGES_DEG[a + 1]) / 2 for a in angles
        ]
        if angles:
            ax_t.plot(centres, 1e3 * np.array(spread), **style)
    ax_z.set_xlabel("depth [m]")
    ax_z.set_ylabel("spread of depth - local 9x9 median [mm]")
    ax_z.set_title("random noise vs depth")
    ax_t.set_xlabel("incidence angle [deg]")
    ax_t.set_title("random noise vs incidence (all depths pooled)")
    for ax in (ax_z, ax_t):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    save_figure(fig, Path(path))


def dropout_curves_png(path: str | Path, real: PixelTables, sims: dict[str, PixelTables]) -> None:
    """Valid rate against incidence angle (left), invalid rate against edge distance (right)."""
    plt = _pyplot()
    fig, (ax_t, ax_e) = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    for table, style in _series(real, sims):
        rates = valid_rates(table)
        inc = sorted(rates["incidence"])
        ax_t.plot(
            [(INCIDENCE_BIN_EDGES_DEG[b] + INCIDENCE_BIN_EDGES_DEG[b + 1]) / 2 for b in inc],
            [100 * rates["incidence"][b][0] for b in inc],
            **style,
        )
        dist = sorted(rates["edge"])
        ax_e.plot(dist, [100 * (1 - rates["edge"][d][0]) for d in dist], **style)
    ax_t.set_xlabel("incidence angle [deg]")
    ax_t.set_ylabel("valid pixels [%] (away from edges)")
    ax_e.set_xlabel("distance to the nearest depth edge [px]")
    ax_e.set_ylabel("no return [%]")
    for ax in (ax_t, ax_e):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    save_figure(fig, Path(path))


def residual_histograms_png(
    path: str | Path, real: PixelTables, sims: dict[str, PixelTables]
) -> None:
    """Histograms of depth - reference (away from edges), real and simulated, overlaid."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4), constrained_layout=True)
    lim = (
        float(np.percentile(np.abs(real.ref_residual_m), 99)) * 1e3
        if real.ref_residual_m.size
        else 10.0
    )
    bins = np.linspace(-lim, lim, 81)
    counts, _, _ = ax.hist(
        1e3 * real.ref_residual_m, bins=bins, density=True, color="black", alpha=0.35, label="real"
    )
    for name, table in sims.items():
        ax.hist(
            1e3 * table.ref_residual_m,
            bins=bins,
            density=True,
            histtype="step",
            linewidth=1.5,
            label=name,
        )
    if (
        counts.size and counts.max() > 0
    ):  # a noise-free profile is a spike: keep the real shape visible
        ax.set_ylim(0, 2.5 * counts.max())
    ax.set_xlabel("depth - reference [mm]")
    ax.set_ylabel("density")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    save_figure(fig, Path(path))


def real_vs_simulated_png(
    path: str | Path, ref: ReferenceFrame, simulated: dict[str, np.ndarray]
) -> None:
    """The real frame beside simulations of its reference geometry (regions only)."""
    panels = {"real (reference regions)": np.where(ref.in_region, ref.depth_m, 0)}
    panels.update({f"simulated: {k}": v for k, v in simulated.items()})
    depth_panels_png(path, panels)


def write_calibration_report(
    folder: str | Path, result, base_name: str, base_sim: PixelTables | None = None
) -> Path:
    """``folder/index.html``: fitted values, noise and dropout curves (real, calibrated and the
    base profile), residual histograms, and each frame with its reference geometry."""
    from sim2real.core.report import ReportSection, write_html_report

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    sims = {"calibrated": result.simulated}
    if base_sim is not None:
        sims[base_name] = base_sim
    noise_curves_png(folder / "noise_curves.png", result.real, sims)
    dropout_curves_png(folder / "dropout_curves.png", result.real, sims)
    residual_histograms_png(folder / "residuals.png", result.real, sims)
    overlays = []
    for i, ref in enumerate(result.references):
        name = f"frame_{i}_reference.png"
        reference_overlay_png(folder / name, ref)
        overlays.append(name)
    fits = [
        (
            key,
            f"{v.value:.6g}"
            + (f" ± {v.std:.2g}" if v.std is not None else "")
            + f"  [{v.pixels} px] {v.status}",
        )
        for key, v in (result.profile.calibration or {}).items()
    ]
    regions = [
        (
            f"{Path(ref.source).name}: {r.name}",
            f"{r.kind}, {r.pixels} px"
            + (f", refinement: {r.info.get('reason') or 'accepted'}" if r.kind == "part" else ""),
        )
        for ref in result.references
        for r in ref.regions
    ]
    sections = [
        ReportSection(
            "Fitted values",
            f"Profile '{result.profile.name}' from base '{base_name}'. Value ± bootstrap std over regions, pixels behind it, and how it was obtained.",
            [],
            fits,
        ),
        ReportSection(
            "Random noise",
            "Spread of depth minus its local 9x9 median on the reference regions (away from their borders), per 10 cm depth bin and per incidence angle: real frames against frames simulated from the same reference geometry.",
            ["noise_curves.png"],
        ),
        ReportSection(
            "Dropouts",
            "Share of returns by incidence angle (away from edges) and of no-returns by distance to the nearest depth edge.",
            ["dropout_curves.png"],
        ),
        ReportSection(
            "Depth minus reference",
            "All of the error at once: random noise, slow warps and bias.",
            ["residuals.png"],
        ),
        ReportSection(
            "Frames and their reference geometry",
            "Coloured: the regions (planes found in the frame, known parts); red: depth edges; black: no return.",
            overlays,
            regions,
        ),
    ]
    return write_html_report(folder, "sim2real depth calibrate", sections)


def write_gap_report(folder: str | Path, gap, refs: list[ReferenceFrame], profiles: dict) -> Path:
    """``folder/index.html``: the metric table, real vs simulated frames, histograms, curves."""
    from sim2real.core.report import ReportSection, write_html_report
    from sim2real.sensors.simulate import simulate_reference

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    sims = {g.profile: g.simulated for g in gap.gaps}
    residual_histograms_png(folder / "residuals.png", gap.real, sims)
    noise_curves_png(folder / "noise_curves.png", gap.real, sims)
    dropout_curves_png(folder / "dropout_curves.png", gap.real, sims)
    frames = []
    for i, ref in enumerate(refs[:3]):
        name = f"frame_{i}_real_vs_sim.png"
        real_vs_simulated_png(
            folder / name, ref, {k: simulate_reference(ref, p, seed=0) for k, p in profiles.items()}
        )
        frames.append(name)
    header, *rows = gap.table()
    table = [
        (row[0], "  ".join(f"{h}={v}" for h, v in zip(header[1:], row[1:], strict=True)))
        for row in rows
    ]
    sections = [
        ReportSection(
            "Gap per profile (lower is better)",
            "w1_mm: Wasserstein-1 of depth - reference; valid_rate_pp: |sim - real| valid pixels [pp]; valid_rate_by_incidence_pp: the same per incidence bin, mean; edge_profile_pp: mean |sim - real| no-return rate 0-15 px from edges; noise_spread_rel_max: worst 10 cm bin of |sim/real - 1| of the local noise spread.",
            [],
            table,
        ),
        ReportSection(
            "Real and simulated frames",
            "The reference regions of each real frame, and the same geometry simulated with each profile.",
            frames,
        ),
        ReportSection("Depth minus reference", "", ["residuals.png"]),
        ReportSection("Random noise", "", ["noise_curves.png"]),
        ReportSection("Dropouts", "", ["dropout_curves.png"]),
    ]
    return write_html_report(folder, "sim2real depth gap", sections)
