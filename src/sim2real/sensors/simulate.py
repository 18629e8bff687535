"""Frames simulated from the reference geometry of real frames: what calibration matches and
the gap compares, with the statistics of ``statistics.py`` computed identically on both."""

from __future__ import annotations

import numpy as np

from sim2real.sensors import fit_terms
from sim2real.sensors.frame import RenderedFrame
from sim2real.sensors.noise import apply_noise
from sim2real.sensors.profile import NoiseProfile
from sim2real.sensors.reference_frame import ReferenceFrame
from sim2real.sensors.statistics import PixelTables, pixel_tables


def reference_frame_for_simulation(ref: ReferenceFrame, shadow: np.ndarray) -> RenderedFrame:
    """The ideal frame of the reference geometry: true depth on the regions (0 elsewhere, and in
    the predicted shadow), true normals and incidence, the scene's edges."""
    depth = np.where(shadow, np.float32(0), ref.ref_depth_m).astype(np.float32)
    return RenderedFrame(
        ref.camera, depth, ref.normal_cam, ref.incidence_rad, ref.region_id, ref.edge, shadow
    )


def simulate_reference(
    ref: ReferenceFrame, profile: NoiseProfile, seed: int, shadow: np.ndarray | None = None
) -> np.ndarray:
    """What a sensor with ``profile`` would measure of ``ref``'s geometry: (H, W) float32 m.
    Lateral jitter needs ray casting and is not applied here."""
    if shadow is None:
        shadow = fit_terms.predicted_shadow(ref, profile.shadow_baseline_m)
    return apply_noise(
        reference_frame_for_simulation(ref, shadow), profile, np.random.default_rng(seed)
    )


def region_offsets(refs: list[ReferenceFrame]) -> np.ndarray:
    """(len(refs) + 1,) int: the first global region index of each frame, then the total."""
    return np.cumsum([0] + [len(r.regions) for r in refs])


def real_tables(
    refs: list[ReferenceFrame],
    shadows: list[np.ndarray] | None,
    samples: list[tuple[np.ndarray, np.ndarray]],
) -> PixelTables:
    """Per-pixel tables of the real frames, regions numbered globally across frames;
    ``shadows`` (or None) are left out of the dropout statistics."""
    offsets = region_offsets(refs)
    shadows = shadows if shadows is not None else [None] * len(refs)
    return PixelTables.concatenate(
        [
            pixel_tables(r, r.depth_m, int(o), s, smp)
            for r, o, s, smp in zip(refs, offsets[:-1], shadows, samples, strict=True)
        ]
    )


def simulated_tables(
    refs: list[ReferenceFrame],
    profile: NoiseProfile,
    shadows: list[np.ndarray],
    samples: list[tuple[np.ndarray, np.ndarray]],
    seeds: tuple[int, ...],
    exclude_shadow: bool = True,
) -> PixelTables:
    """Per-pixel tables of simulations of ``refs`` (one per seed), regions numbered as in the
    real tables. ``exclude_shadow`` leaves the predicted shadow out of the dropout statistics."""
    tables, offset = [], 0
    for ref, shadow, sample in zip(refs, shadows, samples, strict=True):
        for seed in seeds:
            depth = simulate_reference(ref, profile, seed, shadow)
            tables.append(
                pixel_tables(ref, depth, offset, shadow if exclude_shadow else None, sample)
            )
        offset += len(ref.regions)
    return PixelTables.concatenate(tables)
