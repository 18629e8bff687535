"""Track a part through a recorded sequence (``sim2real track run``) and draw what happened."""

from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import dataclass

import numpy as np

from sim2real.core.errors import InputError
from sim2real.core.mesh_io import Mesh
from sim2real.core.pose import invert_pose
from sim2real.core.pose_records import PoseRecord
from sim2real.models.part import PreparedModel
from sim2real.models.symmetry import Symmetry
from sim2real.models.symmetry_detect import symmetry_of
from sim2real.tracking.config import TrackerConfig
from sim2real.tracking.depth_noise import noise_config
from sim2real.tracking.evaluation import TrackEvaluation, evaluate_track
from sim2real.tracking.icp import _correspond
from sim2real.tracking.proposals import Proposer
from sim2real.tracking.tracker import Tracker


@dataclass
class TrackRun:
    records: list[PoseRecord]
    """One per frame (``poses.jsonl``)."""
    tracker: Tracker


def track_sequence(
    part: PreparedModel | Mesh,
    sequence,
    init: np.ndarray | None,
    config: TrackerConfig | None = None,
    progress=None,
    proposer: Proposer | None = None,
) -> TrackRun:
    """Run the tracker over every frame of ``sequence`` (``sim2real.tracking.sequence.Sequence``).
    ``init``: the part's pose in the first frame, or None to search for it. A frame that cannot
    be read as the camera's size is reported ``lost`` (with a warning), never tracked.
    ``part``: a ``PreparedModel`` (its stored views and tuned returns are used) or a mesh;
    ``proposer``: poses the tracker tries first whenever it has none (first frame, lost);
    ``progress(done, total, record)`` after each frame."""
    T_color_depth = None if sequence.T_depth_color is None else invert_pose(sequence.T_depth_color)
    tracker = Tracker(part, sequence.camera, config, sequence.color_camera, T_color_depth)
    tracker.initialize(init)
    tracker.proposer = proposer
    records = []
    total = len(sequence.frame_ids)
    for i, frame_id in enumerate(sequence.frame_ids):
        try:
            depth = sequence.read(i)
            color = sequence.read_color(i)
        except InputError as err:
            warnings.warn(f"frame {frame_id}: {err}; reported lost", stacklevel=2)
            tracker.status, tracker.velocity = "lost", np.eye(4)
            records.append(
                PoseRecord(frame=int(frame_id), status="lost", score=0.0, T_cam_part=tracker.T)
            )
        else:
            if i == 0 and init is not None:
                _warn_depth_unit(tracker, depth, init, frame_id)
            records.append(tracker.update(depth, color).record(int(frame_id)))
        if progress is not None:
            progress(i + 1, total, records[-1])
    return TrackRun(records, tracker)


UNIT_RATIO = 4.0
"""Measured depth over the start pose's around the part beyond which (or below 1 / it) the frames'
unit, not the scene, is the likelier cause: mm read as 0.1 mm is 10x, TUM's x5 read as mm is 5x."""


def start_depth_ratio(tracker: Tracker, depth: np.ndarray, T: np.ndarray) -> float | None:
    """Median measured over predicted depth on the part's points seen at the start pose ``T``
    (None: fewer than 20 with a return)."""
    views = tracker.views
    p = views.points[views.nearest(T)] @ T[:3, :3].T + T[:3, 3]
    inside, zm, _ = _correspond(depth, tracker.camera, p)
    has = inside & (zm > 0)
    return float(np.median(zm[has] / p[has, 2])) if has.sum() >= 20 else None


def _warn_depth_unit(tracker: Tracker, depth: np.ndarray, T: np.ndarray, frame_id: int) -> None:
    """Warn when the first frame's returns where the part should be lie ``UNIT_RATIO`` times
    farther or nearer than the given start pose says (a depth unit off by 10 loses every frame
    with no other word)."""
    ratio = start_depth_ratio(tracker, depth, T)
    if ratio is not None and not 1 / UNIT_RATIO <= ratio <= UNIT_RATIO:
        warnings.warn(
            f"frame {frame_id}: the depth where --init puts the part is {ratio:.3g}x the pose's "
            "distance: is the frames' unit right (a BOP depth_scale, --encoding)?",
            stacklevel=3,
        )


@dataclass
class PartResidual:
    """Measured minus model depth on the pixels where the model, seen at a pose, has a measured
    return that is not an occluder in front of it."""

    pixels: int
    """Pixels of the part's image with such a return."""
    part_pixels: int
    median_abs_mm: float
    within_share: float
    """Share of those pixels within ``gate_m`` of the model (the rest: see-through, where the
    model is larger than the real part, or mixed pixels at its outline)."""
    within_rms_mm: float
    """RMS over the pixels within the gate."""


def part_residual(
    mesh: Mesh,
    camera,
    depth: np.ndarray,
    T_cam_part: np.ndarray,
    occluder_m: float = 0.02,
    gate_m: float = 0.01,
) -> PartResidual:
    """How well the model at ``T_cam_part`` explains the frame ``depth`` ((H, W) metres) on the
    part's own pixels (returns ``occluder_m`` or more in front are ignored)."""
    from sim2real.sensors.render import DepthRenderer
    from sim2real.sensors.scene import Scene, SceneObject

    model = DepthRenderer(Scene([SceneObject(mesh, T_cam_part)]), camera).render(None).depth_m
    part = model > 0
    use = part & (depth > 0) & (depth > model - occluder_m)
    dz = 1e3 * (depth[use] - model[use]).astype(np.float64)
    if dz.size == 0:
        return PartResidual(0, int(part.sum()), float("nan"), 0.0, float("nan"))
    within = np.abs(dz) < 1e3 * gate_m
    return PartResidual(
        int(use.sum()),
        int(part.sum()),
        float(np.median(np.abs(dz))),
        float(within.mean()),
        float(np.sqrt(np.mean(dz[within] ** 2))) if within.any() else float("nan"),
    )


@dataclass
class RecordingTrack:
    """What ``track_recording`` did: the run, what it ran on, how well the model explains the
    last frame the part was found in, and the evaluation when the sequence has ground truth."""

    run: TrackRun
    part: PreparedModel
    sequence: object
    """The ``tracking.sequence.Sequence`` tracked."""
    residual: PartResidual | None = None
    residual_frame: int | None = None
    evaluation: TrackEvaluation | None = None

    def summary_lines(self) -> list[str]:
        records = self.run.records
        counts = {s: sum(r.status == s for r in records) for s in ("tracking", "recovered", "lost")}
        ms = sorted(r.ms for r in records if r.ms is not None)
        lines = [
            f"{len(records)} frames, "
            + ", ".join(f"{k} {v}" for k, v in counts.items())
            + (f", median {ms[len(ms) // 2]:.1f} ms/frame" if ms else "")
        ]
        refused = Counter(bar for r in records if r.refused for bar in r.refused)
        if refused:
            why = (
                " (pose_spread: the evidence does not pin the pose)"
                if "pose_spread" in refused
                else ""
            )
            missed = ", ".join(f"{bar} {n}" for bar, n in refused.most_common())
            lines.append(f"lost frames' best poses missed: {missed}{why}")
        noise = [r.noise_mm for r in records if r.noise_mm is not None]
        if noise:
            lines.append(noise_line(noise, self.run.tracker.settings))
        if self.part.returns is not None:
            lines.append(f"using the tuned surface returns of {self.part.folder}")
        res = self.residual
        if res is not None:
            lines.append(
                f"residual on the part's pixels (frame {self.residual_frame}): median "
                f"|measured - model| {res.median_abs_mm:.2f} mm over {res.pixels} of its "
                f"{res.part_pixels} pixels; {100 * res.within_share:.1f} % within 1 cm, "
                f"RMS {res.within_rms_mm:.2f} mm there"
            )
        if self.evaluation is not None:
            lines += self.evaluation.summary_lines()
        return lines


def track_recording(
    part: PreparedModel,
    sequence,
    init: np.ndarray | None,
    *,
    symmetry: Symmetry | None = None,
    config: TrackerConfig | None = None,
    proposer: Proposer | None = None,
    progress=None,
) -> RecordingTrack:
    """Track ``part`` through a recorded ``sequence`` (``tracking.sequence.load_sequence``) from
    ``init`` (T_cam_part of the first frame, or None to search for it); measure the residual
    on the last frame it was found in, and evaluate against the sequence's ground truth when it
    has some (with ``symmetry``, default the part's own). ``progress``: as
    :func:`track_sequence`'s."""
    if max(part.mesh.extent_m) > 2.0:
        raise InputError(
            part.mesh.path or part.name,
            "size",
            f"the part is {max(part.mesh.extent_m):.1f} m across: much larger than a tracked "
            "part (check --mesh-unit)",
        )
    sequence.read(0)  # a first frame that does not fit the camera is bad input, not 'lost'
    if sequence.has_color:
        sequence.read_color(0)
    run = track_sequence(part, sequence, init, config, progress=progress, proposer=proposer)
    out = RecordingTrack(run, part, sequence)
    found = [i for i, r in enumerate(run.records) if r.status != "lost"]
    if found:
        i = found[-1]
        out.residual_frame = run.records[i].frame
        out.residual = part_residual(
            part.mesh, sequence.camera, sequence.read(i), run.records[i].T_cam_part
        )
    if sequence.gt:
        out.evaluation = evaluate_track(
            run.records,
            sequence.gt,
            part.mesh,
            symmetry or symmetry_of(part),
            visible=getattr(sequence, "visible", None),
        )
    return out


def noise_line(noise_mm: list[float], settings: TrackerConfig) -> str:
    """The frames' depth noise, and how far it widened the agreeing-return tolerance."""
    median = float(np.median(noise_mm))
    line = f"depth noise where the part was expected: median {median:.2f} mm std"
    widened = sum(noise_config(settings, 1e-3 * n) is not settings for n in noise_mm)
    if widened:
        line += (
            f"; the {1e3 * settings.inlier_m:.1f} mm agreeing-return tolerance widened to "
            f"{settings.noise_sigmas:g} std ({settings.noise_sigmas * median:.1f} mm) on "
            f"{widened} of {len(noise_mm)} frames"
        )
    return line
