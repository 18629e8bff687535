"""The working range of a depth sensor from its frames: where its returns start and stop.

The frames' depth histogram gives the nearest and farthest returns (robust extremes, a few
hundred pixels of strays ignored). That the sensor returns there is certain; that it returns
no nearer (or farther) is only shown where a plane of the reference geometry runs on past the
extreme at moderate incidence and the returns stop: the limit is then *pinned* at the extreme.
Otherwise a base range that the returns contradict is widened to them with a margin, and one
they do not contradict is kept, and reported as kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from sim2real.sensors.profile import RangeLimits
from sim2real.sensors.reference_frame import ReferenceFrame

EXTREME_QUANTILE = 0.0005
"""The nearest and farthest returns: the 0.05 % and 99.95 % quantiles of the returns' depth."""
MIN_STRAY_PX = 20
"""... ignoring at least this many pixels at each end (stray returns)."""
BAND_RELATIVE = 0.02
"""Returns within 2 % of an extreme depth form its band."""
NEIGHBOUR_PX = 2
"""A no-return pixel within 2 px of the band is a neighbour of it."""
MAX_EVIDENCE_INCIDENCE_DEG = 60.0
"""Beyond 60 deg a plane's returns may stop for incidence, not range: no evidence there."""
MIN_CUTOFF_PX = 200
"""A limit is pinned when at least this many no-return neighbours of its band lie on a plane
of the band that runs on past the extreme..."""
MIN_CUTOFF_SHARE = 0.25
"""... and they are at least a quarter as many as the band's returns on planes."""
RANGE_MARGIN_RELATIVE = 0.03
"""An unpinned limit widened to the returns keeps a 3 % margin beyond them."""


@dataclass
class RangeFit:
    """The range to write (None: no range term) and, per end, its value and status."""

    limits: RangeLimits | None
    nearest_m: float
    farthest_m: float
    status: dict[str, str]
    """'min_m' / 'max_m' -> 'fitted: ...' or 'base: ...'."""
    cutoff_pixels: dict[str, int]


def _extremes(refs: list[ReferenceFrame]) -> tuple[float, float, int]:
    z = np.concatenate([r.depth_m[r.fit_valid] for r in refs]).astype(np.float64)
    if z.size == 0:
        return float("nan"), float("nan"), 0
    q = max(EXTREME_QUANTILE, MIN_STRAY_PX / z.size)
    q = min(q, 0.01)
    lo, hi = np.quantile(z, [q, 1 - q])
    return float(lo), float(hi), int(z.size)


def _cutoff_evidence(refs: list[ReferenceFrame], extreme_m: float, near: bool) -> tuple[int, int]:
    """(no-return pixels beside the band where the band's plane runs on past the extreme at
    moderate incidence, band returns on planes)."""
    evidence = band_total = 0
    structure = np.ones((2 * NEIGHBOUR_PX + 1,) * 2, dtype=bool)
    for ref in refs:
        valid = ref.fit_valid
        z = ref.depth_m
        inside = (
            z <= extreme_m * (1 + BAND_RELATIVE) if near else z >= extreme_m * (1 - BAND_RELATIVE)
        )
        moderate = np.degrees(ref.incidence_rad) < MAX_EVIDENCE_INCIDENCE_DEG
        no_return = (z <= 0) if ref.withheld is None else (z <= 0) & ~ref.withheld
        rays = None
        for k, region in enumerate(ref.regions):
            if region.kind != "plane" or "normal_cam" not in region.info:
                continue
            band = valid & inside & moderate & (ref.region_id == k)
            n_band = int(band.sum())
            if n_band == 0:
                continue
            band_total += n_band
            neighbours = ndimage.binary_dilation(band, structure) & no_return
            neighbours &= ~ref.in_region | (ref.region_id == k)
            if not neighbours.any():
                continue
            if rays is None:
                rays = ref.camera.pixel_rays()
            normal = np.asarray(region.info["normal_cam"], dtype=np.float64)
            r = rays[neighbours].astype(np.float64)
            facing = r @ normal
            with np.errstate(divide="ignore", invalid="ignore"):
                plane_z = np.where(facing < -1e-6, -float(region.info["offset_m"]) / facing, 0.0)
            cos = np.abs(facing) / np.linalg.norm(r, axis=1)
            ok = (plane_z > 0) & (
                np.degrees(np.arccos(np.clip(cos, 0, 1))) < MAX_EVIDENCE_INCIDENCE_DEG
            )
            past = plane_z < extreme_m if near else plane_z > extreme_m
            evidence += int((ok & past).sum())
    return evidence, band_total


def fit_range(refs: list[ReferenceFrame], base: RangeLimits | None) -> RangeFit:
    """The working range the frames support (see the module doc)."""
    lo, hi, n = _extremes(refs)
    if n == 0:
        why = "no returns to read a range from"
        return RangeFit(base, lo, hi, {"min_m": f"base: {why}", "max_m": f"base: {why}"}, {})
    status, cut = {}, {}
    values = {}
    for end, extreme, near in (("min_m", lo, True), ("max_m", hi, False)):
        evidence, band = _cutoff_evidence(refs, extreme, near)
        cut[end] = evidence
        base_value = getattr(base, end) if base is not None else None
        side = "nearest" if near else "farthest"
        if evidence >= MIN_CUTOFF_PX and evidence >= MIN_CUTOFF_SHARE * band:
            values[end] = extreme
            status[end] = (
                f"fitted: the returns stop at {extreme:.3f} m where {evidence} px of planes "
                "run on past it"
            )
            continue
        widened = extreme * (1 - RANGE_MARGIN_RELATIVE if near else 1 + RANGE_MARGIN_RELATIVE)
        contradicted = base_value is not None and (
            base_value > extreme if near else base_value < extreme
        )
        if contradicted:
            values[end] = widened
            status[end] = (
                f"fitted: the {side} return ({extreme:.3f} m) contradicts the base's "
                f"{base_value:.3f} m; set {100 * RANGE_MARGIN_RELATIVE:.0f} % beyond it (no "
                "cutoff seen: the limit may lie further still)"
            )
        elif base_value is not None:
            values[end] = base_value
            status[end] = (
                f"base: consistent with the frames ({side} return {extreme:.3f} m, no cutoff seen)"
            )
        else:
            values[end] = None
            status[end] = f"off: no cutoff seen ({side} return {extreme:.3f} m)"
    if values["min_m"] is None and values["max_m"] is None:
        return RangeFit(None, lo, hi, status, cut)
    low = values["min_m"] if values["min_m"] is not None else 0.0
    high = values["max_m"] if values["max_m"] is not None else max(hi * 10, 100.0)
    return RangeFit(RangeLimits(min_m=low, max_m=high), lo, hi, status, cut)
