"""Pictures of a calibration and of a gap measurement: real against simulated statistics,
and the frames with their reference geometry."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sim2real.core.report import depth_panels_png, pyplot, save_figure
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
    plt = pyplot()
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
    plt = pyplot()
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
    plt = pyplot()
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
    plt = pyplot()
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


def _gap_rows(gap) -> list[tuple[str, str]]:
    header, *rows = gap.table()
    return [
        (
            f"{row[0]} ({row[1]})",
            "  ".join(f"{h}={v}" for h, v in zip(header[2:], row[2:], strict=True)),
        )
        for row in rows
    ]


def write_calibration_report(folder: str | Path, run) -> Path:
    """``folder/index.html`` of a ``CalibrationRun``: fitted values, noise and dropout curves
    (real, calibrated and the base profile) on the frames it was fitted to and on the held-out
    data, residual histograms, and each frame with its reference geometry."""
    from sim2real.core.report import ReportSection, write_html_report
    from sim2real.sensors.fit_terms import predicted_shadow
    from sim2real.sensors.simulate import simulated_tables
    from sim2real.sensors.statistics import noise_sample_pixels

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    result, base = run.calibration, run.base
    refs = result.references
    shadows = [predicted_shadow(r, base.profile.shadow_baseline_m) for r in refs]
    samples = [noise_sample_pixels(r, 0) for r in refs]
    sims = {
        "calibrated": result.simulated,
        base.name: simulated_tables(refs, base.profile, shadows, samples, (100,)),
    }
    noise_curves_png(folder / "noise_curves.png", result.real, sims)
    dropout_curves_png(folder / "dropout_curves.png", result.real, sims)
    residual_histograms_png(folder / "residuals.png", result.real, sims)
    overlays = []
    for i, ref in enumerate(run.references):
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
        for ref in run.references
        for r in ref.regions
    ]
    sections = [
        ReportSection(
            "Fitted values",
            f"Profile '{result.profile.name}': {base.reason()}. Value ± bootstrap std over "
            "regions, pixels behind it, and how it was obtained (fitted, or kept from the base "
            "and why).",
            [],
            fits,
        ),
    ]
    if run.validation is not None:
        held = run.validation
        noise_curves_png(
            folder / "holdout_noise_curves.png",
            held.real,
            {g.profile: g.simulated for g in held.gaps},
        )
        sections.append(
            ReportSection(
                "Out of sample: the held-out data",
                f"{run.split.description}. {run.profile.validation.summary}. The calibrated "
                "profile and its base, simulated on data the calibration never saw; "
                "noise_bins_within_25pct is higher-is-better, the rest lower-is-better.",
                ["holdout_noise_curves.png"],
                _gap_rows(held),
            )
        )
    else:
        sections.append(ReportSection("Out of sample", run.split.description, []))
    sections += [
        ReportSection(
            "Random noise (fitted frames)",
            "Spread of depth minus its local 9x9 median on the reference regions (away from their borders), per 10 cm depth bin and per incidence angle: real frames against frames simulated from the same reference geometry.",
            ["noise_curves.png"],
        ),
        ReportSection(
            "Dropouts (fitted frames)",
            "Share of returns by incidence angle (away from edges) and of no-returns by distance to the nearest depth edge.",
            ["dropout_curves.png"],
        ),
        ReportSection(
            "Depth minus reference (fitted frames)",
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


def write_gap_report(folder: str | Path, gap, refs: list[ReferenceFrame]) -> Path:
    """``folder/index.html``: the metric table, real vs simulated frames, histograms, curves
    (one set per group of profiles judged on the same data)."""
    from sim2real.core.report import ReportSection, write_html_report
    from sim2real.sensors.simulate import simulate_reference

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    groups: dict[int, list] = {}
    for g in gap.gaps:
        groups.setdefault(id(g.real), []).append(g)
    sections = [
        ReportSection(
            "Gap per profile",
            "Each profile judged on the frames (or held-out planes) it was not fitted to. "
            "w1_mm: Wasserstein-1 of depth - reference; valid_rate_pp: |sim - real| valid "
            "pixels [pp]; valid_rate_region_pp_max: the worst plane or part; edge_profile_pp: "
            "mean |sim - real| no-return rate 0-15 px from edges; noise_bins_within_25pct: share "
            "of 10 cm bins (>= 2000 px) whose local-noise spread is within 25 % (higher is "
            "better); noise_spread_rel_max: the worst bin.",
            [],
            _gap_rows(gap),
        )
    ]
    for k, members in enumerate(groups.values()):
        real = members[0].real
        sims = {g.profile: g.simulated for g in members}
        names = [f"residuals_{k}.png", f"noise_curves_{k}.png", f"dropout_curves_{k}.png"]
        residual_histograms_png(folder / names[0], real, sims)
        noise_curves_png(folder / names[1], real, sims)
        dropout_curves_png(folder / names[2], real, sims)
        sections.append(
            ReportSection(
                f"Judged on {members[0].judged_on}: {', '.join(sims)}",
                "Depth minus reference, random noise, dropouts.",
                names,
            )
        )
    frames = []
    for i, ref in enumerate(refs[:3]):
        name = f"frame_{i}_real_vs_sim.png"
        sims = {g.profile: simulate_reference(ref, g.noise_profile, seed=0) for g in gap.gaps}
        real_vs_simulated_png(folder / name, ref, sims)
        frames.append(name)
    sections.append(
        ReportSection(
            "Real and simulated frames",
            "The reference regions of each real frame, and the same geometry simulated with each profile.",
            frames,
        )
    )
    return write_html_report(folder, "sim2real depth gap", sections)
