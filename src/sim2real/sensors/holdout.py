"""Out-of-sample checks of depth calibrations, by construction.

With two or more frames, every k-th frame (default every 3rd, at least one) is held out of
the calibration and the calibrated profile is judged on it. With one frame there is no
held-out frame: every second usable plane is held out instead (a *spatial* hold-out, said so
wherever it is reported), so the profile is still judged on surfaces it was not fitted to.
The profile records what it was fitted to (``validation:``), so ``depth gap`` judges it on
the rest by default.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sim2real.sensors.profile import FrameRecord, HoldoutRecord, NoiseProfile
from sim2real.sensors.reference_frame import ReferenceFrame, subset_regions

DEFAULT_HOLDOUT_EVERY = 3
MIN_USABLE_INTERIOR_PX = 2000
"""A plane is usable for calibration when this many of its pixels are interior (their 9×9
window lies on it)."""
PLANE_MATCH_DEG = 2.0
PLANE_MATCH_RELATIVE = 0.02
"""A recorded plane is the same as a found one within 2 deg and 2 % of its distance."""


def _ordinal(k: int) -> str:
    return {1: "", 2: "2nd", 3: "3rd"}.get(k, f"{k}th")


def usable_planes(ref: ReferenceFrame) -> list[int]:
    """Indices of the regions of ``ref`` that are planes with enough interior pixels."""
    counts = np.bincount(ref.region_id[ref.interior], minlength=len(ref.regions))
    return [
        k
        for k, r in enumerate(ref.regions)
        if r.kind == "plane" and counts[k] >= MIN_USABLE_INTERIOR_PX
    ]


def frame_record(ref: ReferenceFrame) -> FrameRecord:
    return FrameRecord(source=ref.source, digest=ref.digest)


def _plane_params(ref: ReferenceFrame, k: int) -> list[float]:
    info = ref.regions[k].info
    return [float(x) for x in info["normal_cam"]] + [float(info["offset_m"])]


@dataclass
class HoldoutSplit:
    """Which data a calibration is fitted to and which it is judged on."""

    kind: str
    """'frames', 'planes' or 'none'."""
    fit: list[ReferenceFrame]
    held: list[ReferenceFrame]
    description: str
    heldout_frames: list[FrameRecord] = field(default_factory=list)
    heldout_planes: dict[str, list[list[float]]] = field(default_factory=dict)
    fit_frames: list[FrameRecord] = field(default_factory=list)


def split_holdout(refs: list[ReferenceFrame], every: int = DEFAULT_HOLDOUT_EVERY) -> HoldoutSplit:
    """Frames i with i % every == every - 1 held out (at least the last one) when there are
    two or more; with one frame, every second usable plane. ``every`` 0: no hold-out."""
    if every < 0:
        raise ValueError("every must be >= 0")
    records = [frame_record(r) for r in refs]
    if every == 0:
        return HoldoutSplit("none", refs, [], "no hold-out (asked for): in-sample figures only",
                            fit_frames=records)  # fmt: skip
    if len(refs) >= 2:
        held = [i for i in range(len(refs)) if i % every == every - 1] or [len(refs) - 1]
        fit = [i for i in range(len(refs)) if i not in held]
        names = ", ".join(refs[i].source for i in held)
        return HoldoutSplit(
            "frames",
            [refs[i] for i in fit],
            [refs[i] for i in held],
            f"held-out frame(s): {names} (every {_ordinal(every)} frame; fitted on {len(fit)})",
            [records[i] for i in held],
            {},
            [records[i] for i in fit],
        )
    ref = refs[0]
    planes = usable_planes(ref)
    if len(planes) < 2:
        return HoldoutSplit(
            "none",
            refs,
            [],
            "no held-out frame (one frame) and fewer than 2 usable planes: in-sample only",
            fit_frames=records,
        )
    held_ids = planes[1::2]
    fit_ids = [k for k in range(len(ref.regions)) if k not in held_ids]
    names = ", ".join(ref.regions[k].name for k in held_ids)
    return HoldoutSplit(
        "planes",
        [subset_regions(ref, fit_ids)],
        [subset_regions(ref, held_ids)],
        f"no held-out frame (one frame): spatial hold-out of planes {names} "
        f"(every 2nd usable plane; fitted on the other {len(fit_ids)} region(s))",
        [],
        {records[0].digest: [_plane_params(ref, k) for k in held_ids]},
        records,
    )


def _matching_planes(ref: ReferenceFrame, planes: list[list[float]]) -> list[int]:
    """Regions of ``ref`` that are the recorded planes (normal within PLANE_MATCH_DEG, offset
    within PLANE_MATCH_RELATIVE)."""
    found = []
    for p in planes:
        n, d = np.asarray(p[:3]), p[3]
        for k, region in enumerate(ref.regions):
            if region.kind != "plane" or k in found:
                continue
            m = np.asarray(region.info["normal_cam"])
            angle = np.degrees(np.arccos(np.clip(abs(float(n @ m)), 0, 1)))
            if (
                angle <= PLANE_MATCH_DEG
                and abs(region.info["offset_m"] - d) <= PLANE_MATCH_RELATIVE * d
            ):
                found.append(k)
                break
    return found


def evaluation_refs(
    refs: list[ReferenceFrame], profile: NoiseProfile
) -> tuple[list[ReferenceFrame], str]:
    """The frames (or held-out planes) a profile is judged on by default: those it was not
    fitted to, by its ``validation`` record. (refs, label); when it was fitted to all of
    them, all of them, labelled in-sample."""
    record = profile.validation
    if record is None:
        return refs, f"{len(refs)} frame(s)"
    fitted = {f.digest for f in record.fit_frames}
    out, unseen, spatial = [], 0, 0
    for ref in refs:
        digest = ref.digest
        if digest in record.heldout_planes:
            ids = _matching_planes(ref, record.heldout_planes[digest])
            if ids:
                out.append(subset_regions(ref, ids))
                spatial += 1
        elif digest not in fitted:
            out.append(ref)
            unseen += 1
    if not out:
        return refs, f"IN-SAMPLE: it was fitted to all {len(refs)} frame(s)"
    parts = [f"{unseen} unseen frame(s)"] if unseen else []
    if spatial:
        parts.append(f"held-out planes of {spatial} frame(s)")
    return out, " + ".join(parts)


def holdout_record(
    split: HoldoutSplit,
    base_name: str,
    metrics: dict[str, float],
    base_metrics: dict[str, float],
    targets_met: dict[str, bool],
) -> HoldoutRecord:
    m = metrics
    if split.kind == "none":
        summary = split.description
    else:
        summary = (
            f"out of sample ({split.kind}): {100 * m.get('noise_bins_within_25pct', np.nan):.0f} % "
            f"of {int(m.get('noise_bins_counted', 0))} depth bins within 25 %, worst plane "
            f"valid rate {m.get('valid_rate_region_pp_max', np.nan):.2f} pp"
        )
    return HoldoutRecord(
        kind=split.kind,
        fit_frames=split.fit_frames,
        heldout_frames=split.heldout_frames,
        heldout_planes=split.heldout_planes,
        base_profile=base_name,
        metrics={k: float(v) for k, v in metrics.items() if np.isfinite(v)},
        base_metrics={k: float(v) for k, v in base_metrics.items() if np.isfinite(v)},
        targets_met=targets_met,
        summary=summary,
    )
