"""``sim2real depth calibrate`` as one library call: read the frames, build their reference
geometry, hold data out, choose the base by evidence (unless given), calibrate on the rest,
judge the profile on what was held out, and return everything with the lines to print."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sim2real.core.errors import InputError
from sim2real.core.mesh_io import Mesh
from sim2real.sensors.base_choice import BaseChoice, choose_base
from sim2real.sensors.calibrate import CalibrationResult, calibrate_profile
from sim2real.sensors.gap import GapResult, measure_gap
from sim2real.sensors.holdout import (
    DEFAULT_HOLDOUT_EVERY,
    MIN_USABLE_INTERIOR_PX,
    HoldoutSplit,
    holdout_record,
    split_holdout,
    usable_planes,
)
from sim2real.sensors.presets import resolve_profile
from sim2real.sensors.profile import NoiseProfile
from sim2real.sensors.reference import references_from_files
from sim2real.sensors.reference_frame import ReferenceFrame

VALIDATION_SEEDS = (100, 101)


@dataclass
class CalibrationRun:
    """What ``depth calibrate`` found: the profile (with its out-of-sample record), the
    calibration itself, the base and why, the split, and the gap on the held-out data."""

    profile: NoiseProfile
    calibration: CalibrationResult
    base: BaseChoice
    split: HoldoutSplit
    references: list[ReferenceFrame]
    validation: GapResult | None
    notes: list[str] = field(default_factory=list)

    def summary_lines(self) -> list[str]:
        lines = []
        for ref in self.references:
            for region in ref.regions:
                if region.kind == "part":
                    info = region.info
                    if info.get("accepted"):
                        verdict = (
                            f"refined by {1e3 * info.get('correction_m', 0):.1f} mm / "
                            f"{info.get('correction_deg', 0):.2f} deg"
                        )
                    else:
                        verdict = f"kept the given pose: {info.get('reason')}"
                    lines.append(f"{ref.source}: part {region.name}: ICP {verdict}")
            regions = ", ".join(f"{r.name} {r.pixels} px" for r in ref.regions[:6])
            z = ref.depth_m[ref.depth_m > 0]
            lines.append(
                f"{ref.source}: returns at {np.min(z):.3f}-{np.max(z):.3f} m, "
                f"{len(ref.regions)} regions ({regions})"
            )
        lines += self.notes
        lines.append(self.base.reason())
        kept = []
        for key, v in (self.profile.calibration or {}).items():
            std = f" ± {v.std:.2g}" if v.std is not None else ""
            lines.append(f"  {key:32s} {v.value:12.6g}{std:12s} {v.pixels:8d} px  {v.status}")
            if v.status.startswith("base"):
                kept.append(key)
        if kept:
            lines.append("kept from the base (the frames cannot pin them down): " + ", ".join(kept))
        lines.append(f"hold-out: {self.split.description}")
        record = self.profile.validation
        if record is not None and record.kind != "none":
            lines.append(record.summary)
            for target, met in record.targets_met.items():
                lines.append(f"  target {target}: {'met' if met else 'NOT met'}")
        return lines


def check_usable(refs: list[ReferenceFrame], parts_given: bool) -> list[str]:
    """InputError when the frames hold fewer than 2 usable planes and no part was given; a
    note to print when parts make up for them."""
    planes = sum(len(usable_planes(r)) for r in refs)
    if planes >= 2:
        return []
    names = ", ".join(Path(r.source).name for r in refs)
    if not parts_given:
        raise InputError(
            refs[0].source,
            "planes",
            f"{planes} usable plane(s) in {names} (a plane needs {MIN_USABLE_INTERIOR_PX} "
            "interior pixels; 2 are needed, to fit on one and judge on another): give frames "
            "with more flat surfaces in view, or known parts with --mesh/--pose",
        )
    return [f"only {planes} usable plane(s) in {names}: calibrating against the known part(s) too"]


def run_calibration(
    frames: Sequence[str | Path],
    camera: str | Path | None,
    *,
    parts: Sequence[tuple[Mesh, np.ndarray]] = (),
    planes: bool = True,
    base_profile: str | None = None,
    encoding: str = "auto",
    depth_scale: float | None = None,
    name: str | None = None,
    seed: int = 0,
    holdout_every: int = DEFAULT_HOLDOUT_EVERY,
    bootstrap: int = 20,
) -> CalibrationRun:
    """Calibrate a profile on real frames, out of sample by construction (module doc)."""
    if holdout_every < 0:
        raise InputError(None, "--holdout-frames", f"must be >= 0, got {holdout_every}")
    seen: set[Path] = set()
    for frame in frames:  # a frame twice would be fitted and held out: "out of sample" that is not
        if Path(frame).resolve() in seen:
            raise InputError(frame, "--frames", "given twice: each frame once")
        seen.add(Path(frame).resolve())
    try:
        given = resolve_profile(base_profile) if base_profile else None  # a bad name fails first
    except InputError as err:  # a preset name: the option, not "sensor"
        if err.field != "sensor":
            raise
        raise InputError(None, "--base-profile", err.message) from None
    refs = references_from_files(
        frames,
        camera,
        parts=parts,
        planes=planes,
        encoding=encoding,
        depth_scale=depth_scale,
        seed=seed,
    )
    return calibrate_references(
        refs,
        base=given,
        parts_given=bool(parts),
        name=name,
        seed=seed,
        holdout_every=holdout_every,
        bootstrap=bootstrap,
    )


def calibrate_references(
    refs: list[ReferenceFrame],
    *,
    base: tuple[str, NoiseProfile] | None = None,
    parts_given: bool = False,
    name: str | None = None,
    seed: int = 0,
    holdout_every: int = DEFAULT_HOLDOUT_EVERY,
    bootstrap: int = 20,
) -> CalibrationRun:
    """``run_calibration`` from frames whose reference geometry is built: check them, hold
    data out, choose the base (``base`` None: by evidence), calibrate, judge."""
    notes = check_usable(refs, parts_given)
    split = split_holdout(refs, holdout_every)
    if not split.fit:  # every k-th frame with k = 1: all of them
        why = f"{holdout_every} holds out every frame: give 2 or more (every k-th held out), or 0"
        raise InputError(None, "--holdout-frames", why)
    if base is not None:
        choice = BaseChoice(base[0], base[1], {}, "user")
    else:
        choice = choose_base(split.fit)
    result = calibrate_profile(split.fit, choice.profile, name=name, seed=seed, bootstrap=bootstrap)
    profile = result.profile
    validation = None
    if split.held:
        validation = measure_gap(
            split.held,
            {"calibrated": profile, f"base ({choice.name})": choice.profile},
            seeds=VALIDATION_SEEDS,
            judged_on=split.kind if split.kind == "frames" else "held-out planes",
        )
        ours, theirs = validation.gaps
        record = holdout_record(
            split, choice.name, ours.metrics, theirs.metrics, ours.targets_met()
        )
    else:
        record = holdout_record(split, choice.name, {}, {}, {})
    profile = profile.model_copy(update={"validation": record})
    profile = NoiseProfile.model_validate(profile.model_dump())
    result.profile = profile
    return CalibrationRun(profile, result, choice, split, refs, validation, notes)
