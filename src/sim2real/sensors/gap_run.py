"""``sim2real depth gap`` as one library call: each profile judged, by default, only on the
frames (or held-out planes) it was not fitted to, as its ``validation:`` record says."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from sim2real.core.errors import InputError
from sim2real.core.mesh_io import Mesh
from sim2real.sensors.gap import GAP_SEEDS, GapResult, measure_gap
from sim2real.sensors.holdout import evaluation_refs
from sim2real.sensors.presets import resolve_profile
from sim2real.sensors.profile import NoiseProfile
from sim2real.sensors.reference import references_from_files
from sim2real.sensors.reference_frame import ReferenceFrame


def gap_out_of_sample(
    refs: list[ReferenceFrame],
    profiles: dict[str, NoiseProfile],
    seeds: tuple[int, ...] = GAP_SEEDS,
    holdout: bool = True,
) -> GapResult:
    """The gap of each profile on the data it was not fitted to (``holdout``), else on all
    of ``refs``. Profiles judged on the same data share one comparison."""
    groups: dict[tuple, tuple[list[ReferenceFrame], str, dict[str, NoiseProfile]]] = {}
    for name, profile in profiles.items():
        subset, label = (
            evaluation_refs(refs, profile) if holdout else (refs, f"{len(refs)} frame(s)")
        )
        key = (label, tuple((r.digest, tuple(g.name for g in r.regions)) for r in subset))
        groups.setdefault(key, (subset, label, {}))[2][name] = profile
    gaps, first = [], None
    for subset, label, members in groups.values():
        result = measure_gap(subset, members, seeds=seeds, judged_on=label)
        first = first or result
        gaps += result.gaps
    order = list(profiles)
    gaps.sort(key=lambda g: order.index(g.profile))
    all_real = first.real
    summary = {
        "frames": len(refs),
        "region_pixels": int(all_real.valid.size),
        "valid_rate": float(np.mean(all_real.valid)),
    }
    return GapResult(all_real, gaps, summary)


def run_gap(
    frames: Sequence[str | Path],
    camera: str | Path | None,
    profiles: Sequence[str],
    *,
    parts: Sequence[tuple[Mesh, np.ndarray]] = (),
    planes: bool = True,
    encoding: str = "auto",
    depth_scale: float | None = None,
    seeds: int = len(GAP_SEEDS),
    holdout: bool = True,
) -> tuple[GapResult, list[ReferenceFrame]]:
    """Read the frames, build their references and measure each profile's gap (module doc).
    ``profiles``: preset names or profile YAML files."""
    if not profiles:
        raise InputError(None, "--profile", "give at least one profile to compare")
    resolved = dict(resolve_profile(p) for p in profiles)
    refs = references_from_files(
        frames, camera, parts=parts, planes=planes, encoding=encoding, depth_scale=depth_scale
    )
    return gap_out_of_sample(refs, resolved, tuple(range(seeds)), holdout), refs
