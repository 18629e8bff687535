"""The evaluation of a tracked sequence against ground truth (``sim2real track eval``):
BOP-style recall of the symmetry-aware ADD under fractions of the diameter, ADD-S, rotation and
translation errors, whether ``tracking`` was right, and how fast loss and recovery were
reported when the part left the view and came back.

A pose is judged by the ADD minimised over the part's symmetries (ADD for a part without one),
not by ADD-S: ADD-S pairs each point with the nearest one of the true pose, so a pose slid
along a face scores as right (a flat plate 37 mm off scored 100 % so), and on a symmetric part
the gap between its sampled points inflates it."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from sim2real.core.errors import InputError
from sim2real.core.pose_records import REPORTED, PoseRecord, read_pose_records
from sim2real.models.part import PreparedModel
from sim2real.models.symmetry import NO_SYMMETRY, Symmetry
from sim2real.models.symmetry_detect import symmetry_of
from sim2real.tracking.pose_errors import (
    adds_m,
    diameter_m,
    model_points,
    rotation_error_deg,
    symmetric_add_m,
    translation_error_m,
)
from sim2real.tracking.sequence import load_scene_gt, read_visible

CORRECT_FRACTION = 0.10
"""A pose is correct when its symmetry-aware ADD is under 10 % of the part's diameter."""
RECALL_THRESHOLDS = tuple(round(0.05 * k, 2) for k in range(1, 11))
"""BOP-style thresholds: 5, 10, ..., 50 % of the diameter."""
VISIBLE_MIN = 0.10
"""Frames where at least 10 % of the part is visible count for recall (BOP's targets)."""
GONE_MAX = 0.05
"""The part has disappeared when less than 5 % of it is visible."""


@dataclass
class TrackEvaluation:
    """What ``evaluate_track`` measured. Lengths in the per-frame rows are mm; ``*_rel`` are
    fractions of the diameter; None where a figure cannot be computed."""

    diameter_m: float
    symmetry: str
    frames: list[dict] = field(default_factory=list)
    """Per frame with ground truth: frame, status, score, ms, visible, add_mm, adds_mm,
    add_rel, adds_rel, rot_deg, trans_mm, correct (symmetry-aware ADD under 10 % of the
    diameter)."""
    thresholds_rel: list[float] = field(default_factory=lambda: list(RECALL_THRESHOLDS))
    recall: list[float] = field(default_factory=list)
    """Fraction of the evaluated (visible) frames reported tracking/recovered with the
    symmetry-aware ADD under each threshold; frames reported lost or without a record count as
    misses."""
    auc: float | None = None
    recall_at_10: float | None = None
    recall_at_10_any_status: float | None = None
    """The same as recall_at_10 but counting poses of lost frames too."""
    median_adds_mm: float | None = None
    median_add_mm: float | None = None
    median_rot_deg: float | None = None
    median_trans_mm: float | None = None
    n_gt_frames: int = 0
    n_eval_frames: int = 0
    n_missing: int = 0
    """Frames with ground truth but no record."""
    n_without_gt: int = 0
    """Records of frames the ground truth does not hold (not scored)."""
    tracking_precision: float | None = None
    n_reported_tracking: int = 0
    n_tracking_while_gone: int | None = None
    """Frames reported tracking/recovered while under 5 % of the part was visible."""
    lost_latency_frames: list[int | None] | None = None
    """Per disappearance: frames from the first frame with < 5 % visible to the first
    'lost' report (0 = at once); None = never reported lost before the part came back."""
    recover_latency_frames: list[int | None] | None = None
    """Per return: frames from the first frame with >= 5 % visible to the first correct
    tracking/recovered report; None = not recovered before it left again or the end."""
    ms_mean: float | None = None
    ms_median: float | None = None
    score_auroc: float | None = None
    """How well the score tells correct poses from wrong ones: the area under its ROC over the
    frames with a pose and a score (1 = every correct pose scores above every wrong one; None
    when all are correct or all wrong)."""

    @property
    def per_frame(self) -> dict[int, dict]:
        """frame id -> its row, with metre keys added (``add_m``, ``adds_m``, ``trans_m``;
        NaN where the frame has no pose), for plotting."""
        out = {}
        for row in self.frames:
            extra = {
                k[:-3] + "_m": (row[k] / 1000 if row[k] is not None else math.nan)
                for k in ("add_mm", "adds_mm", "trans_mm")
            }
            out[row["frame"]] = {**row, **extra}
        return out

    def to_dict(self) -> dict:
        return asdict(self)

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent) + "\n"

    def summary_lines(self) -> list[str]:
        def pct(x: float | None) -> str:
            return "n/a" if x is None else f"{100 * x:.1f} %"

        def num(x: float | None, unit: str, fmt: str = ".2f") -> str:
            return "n/a" if x is None else f"{x:{fmt}} {unit}"

        d_mm = 1000 * self.diameter_m
        unscored = self.n_without_gt and f", {self.n_without_gt} records without ground truth"
        unscored = f"{unscored} (not scored)" if unscored else ""
        add_kind = (  # without one, a symmetric part's equal poses count as errors
            "symmetry-aware"
            if self.symmetry != "none"
            else "no symmetry; --symmetry auto finds a mesh's"
        )
        lines = [
            f"frames: {self.n_gt_frames} with ground truth, {self.n_eval_frames} evaluated "
            f"(>= {VISIBLE_MIN:.0%} visible), {self.n_missing} without a record{unscored}; "
            f"diameter {d_mm:.1f} mm; symmetry {self.symmetry}",
            f"ADD ({add_kind}): median {num(self.median_add_mm, 'mm')}; recall at 10 % of d "
            f"{pct(self.recall_at_10)} (any status {pct(self.recall_at_10_any_status)}); "
            f"AUC 5..50 % {num(self.auc, '', '.3f').strip()}",
            f"rotation {num(self.median_rot_deg, 'deg')}, translation "
            f"{num(self.median_trans_mm, 'mm')}, ADD-S {num(self.median_adds_mm, 'mm')} "
            "(medians; ADD-S is blind to a slide along a face: not used to judge)",
            f"status: 'tracking' precision {pct(self.tracking_precision)} of "
            f"{self.n_reported_tracking} frames",
        ]
        if self.lost_latency_frames is not None:
            lines.append(
                f"lost reported after disappearing: {self.lost_latency_frames} frames; "
                f"correct again after returning: {self.recover_latency_frames} frames; "
                f"tracking while gone: {self.n_tracking_while_gone} frames"
            )
        if self.score_auroc is not None:
            lines.append(
                f"score: AUROC {self.score_auroc:.3f} for telling correct from wrong poses"
            )
        lines.append(
            f"time: mean {num(self.ms_mean, 'ms', '.1f')}, median {num(self.ms_median, 'ms', '.1f')}"
            " per frame"
        )
        return lines


def score_auroc(scores: list[float], correct: list[bool]) -> float | None:
    """Area under the ROC of ``scores`` for telling ``correct`` from wrong (Mann-Whitney U,
    ties counted half); None when one class is empty."""
    s = np.asarray(scores, dtype=np.float64)
    c = np.asarray(correct, dtype=bool)
    pos, neg = s[c], s[~c]
    if len(pos) == 0 or len(neg) == 0:
        return None
    ranks = np.empty(len(s))
    order = np.argsort(s, kind="mergesort")
    ranks[order] = np.arange(1, len(s) + 1)
    for value in np.unique(s):  # ties: their mean rank
        tie = s == value
        ranks[tie] = ranks[tie].mean()
    u = ranks[c].sum() - len(pos) * (len(pos) + 1) / 2
    return float(u / (len(pos) * len(neg)))


def _check_same_unit(source: str | Path, by_frame: dict, gt: dict[int, np.ndarray]) -> None:
    """Reported poses and ground truth 100x or more apart in distance from the camera: one of
    them is in millimetres (no tracker is that far off on the frames it reports)."""
    pairs = [
        (by_frame[f].T_cam_part, gt[f])
        for f in gt
        if f in by_frame and by_frame[f].status in REPORTED
    ]
    ratios = [
        np.linalg.norm(T[:3, 3]) / np.linalg.norm(G[:3, 3])
        for T, G in pairs
        if T is not None and np.linalg.norm(G[:3, 3]) > 0
    ]
    if ratios and not 0.01 < float(np.median(ratios)) < 100:
        why = (f"the poses lie {float(np.median(ratios)):.3g}x as far from the camera as the "
               "ground truth (median): one of them in millimetres, the other in metres?")  # fmt: skip
        raise InputError(source, "T_cam_part", why)


def _median(values: list[float]) -> float | None:
    return float(np.median(values)) if values else None


def _frame_errors(rec: PoseRecord | None, T_gt, points, symmetry, d: float) -> dict:
    T = None if rec is None else rec.T_cam_part
    if T is None:
        return dict.fromkeys(("add_mm", "adds_mm", "add_rel", "adds_rel", "rot_deg", "trans_mm"))
    T = np.asarray(T, dtype=np.float64)
    add, adds = symmetric_add_m(T, T_gt, points, symmetry), adds_m(T, T_gt, points)
    return {
        "add_mm": 1000 * add,
        "adds_mm": 1000 * adds,
        "add_rel": add / d,
        "adds_rel": adds / d,
        "rot_deg": rotation_error_deg(T, T_gt, symmetry),
        "trans_mm": 1000 * translation_error_m(T, T_gt, symmetry),
    }


def _latencies(rows: list[dict]) -> tuple[list[int | None], list[int | None]]:
    """Frames to report lost after each disappearance, and to be correct after each return."""
    lost: list[int | None] = []
    recover: list[int | None] = []
    for i, row in enumerate(rows):
        gone = row["visible"] < GONE_MAX
        if i == 0 or gone == (rows[i - 1]["visible"] < GONE_MAX):
            continue
        latency = None
        for later in rows[i:]:
            if (later["visible"] < GONE_MAX) != gone:
                break
            if gone:
                hit = later["status"] == "lost"
            else:
                hit = later["status"] in REPORTED and later["correct"]
            if hit:
                latency = later["frame"] - row["frame"]
                break
        (lost if gone else recover).append(latency)
    return lost, recover


def evaluate_track(
    records: list[PoseRecord],
    gt: dict[int, np.ndarray],
    mesh,
    symmetry: Symmetry | None = None,
    *,
    visible: dict[int, float] | None = None,
    n_points: int = 1000,
) -> TrackEvaluation:
    """Compare tracker records (``core.pose_records``) with ground truth (frame id ->
    ``T_cam_part``). ``mesh`` gives the model points and the diameter (of its vertices);
    ``visible`` (frame id -> visible fraction of the part) enables the visible-frame recall
    and the lost / recover latencies. Record ``frame`` values are frame ids."""
    symmetry = symmetry or NO_SYMMETRY
    points = model_points(mesh, n_points)
    d = diameter_m(mesh.vertices)
    by_frame = {r.frame: r for r in records}
    if gt and by_frame and not set(by_frame) & set(gt):
        raise InputError(
            None,
            "frame",
            f"no record's frame ({min(by_frame)}..{max(by_frame)}) is a ground-truth frame "
            f"({min(gt)}..{max(gt)})",
        )
    rows: list[dict] = []
    for frame in sorted(gt):
        rec = by_frame.get(frame)
        row = {
            "frame": frame,
            "status": None if rec is None else rec.status,
            "score": None if rec is None else rec.score,
            "ms": None if rec is None else rec.ms,
            "visible": None if visible is None else visible.get(frame),
        }
        row.update(_frame_errors(rec, gt[frame], points, symmetry, d))
        row["correct"] = row["add_rel"] is not None and row["add_rel"] < CORRECT_FRACTION
        rows.append(row)

    def counts(row: dict) -> bool:
        return row["visible"] is None or row["visible"] >= VISIBLE_MIN

    evaluated = [r for r in rows if counts(r)]
    reported = [r for r in rows if r["status"] in REPORTED]
    ev = TrackEvaluation(diameter_m=d, symmetry=symmetry.describe(), frames=rows)
    ev.n_gt_frames, ev.n_eval_frames = len(rows), len(evaluated)
    ev.n_missing = sum(r["status"] is None for r in rows)
    ev.n_without_gt = len(set(by_frame) - set(gt))
    if evaluated:
        ev.recall = [
            sum(r["status"] in REPORTED and r["add_rel"] < t for r in evaluated) / len(evaluated)
            for t in RECALL_THRESHOLDS
        ]
        ev.auc = float(np.mean(ev.recall))
        ev.recall_at_10 = ev.recall[RECALL_THRESHOLDS.index(CORRECT_FRACTION)]
        ev.recall_at_10_any_status = sum(r["correct"] for r in evaluated) / len(evaluated)
    with_pose = [r for r in evaluated if r["adds_mm"] is not None]
    ev.median_adds_mm = _median([r["adds_mm"] for r in with_pose])
    ev.median_add_mm = _median([r["add_mm"] for r in with_pose])
    ev.median_rot_deg = _median([r["rot_deg"] for r in with_pose])
    ev.median_trans_mm = _median([r["trans_mm"] for r in with_pose])
    ev.n_reported_tracking = len(reported)
    if reported:
        ev.tracking_precision = sum(r["correct"] for r in reported) / len(reported)
    if visible is not None:
        known = [r for r in rows if r["visible"] is not None]
        ev.n_tracking_while_gone = sum(
            r["visible"] is not None and r["visible"] < GONE_MAX for r in reported
        )
        ev.lost_latency_frames, ev.recover_latency_frames = _latencies(known)
    ms = [r.ms for r in records if r.ms is not None]
    ev.ms_mean = float(np.mean(ms)) if ms else None
    ev.ms_median = _median(ms)
    scored = [r for r in rows if r["score"] is not None and r["adds_mm"] is not None]
    ev.score_auroc = score_auroc([r["score"] for r in scored], [r["correct"] for r in scored])
    return ev


def evaluate_track_files(
    poses: str | Path,
    gt: str | Path,
    part: PreparedModel,
    symmetry: Symmetry | None = None,
    *,
    obj_id: int | None = None,
    visible: str | Path | None = None,
) -> TrackEvaluation:
    """``evaluate_track`` from files: the tracker's ``poses.jsonl``, BOP ``scene_gt.json`` (or
    the sequence folder holding it), ``visible.json`` (default: beside ``scene_gt.json`` when
    there). ``symmetry`` defaults to the part's own (``symmetry_of``)."""
    gt = Path(gt)
    gt_path = gt / "scene_gt.json" if gt.is_dir() else gt
    records = read_pose_records(poses)
    gt_poses = load_scene_gt(gt_path, obj_id)
    if visible is not None and not Path(visible).is_file():
        raise InputError(visible, "--visible", "file not found")
    visible_path = Path(visible) if visible is not None else gt_path.parent / "visible.json"
    fractions = read_visible(visible_path) if visible_path.is_file() else None
    _check_same_unit(poses, {r.frame: r for r in records}, gt_poses)  # two files: two writers
    return evaluate_track(
        records, gt_poses, part.mesh, symmetry or symmetry_of(part), visible=fractions
    )
