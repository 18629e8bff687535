"""Pose errors that respect a part's symmetry, and the evaluation of a tracked sequence.

Conventions: poses are (4, 4) ``T_cam_part`` in metres; ``points`` are (N, 3) model points
in the part frame, metres. ADD (Hinterstoisser et al., ACCV 2012) is the mean distance
between corresponding model points under the two poses; ADD-S the mean distance from each
estimated point to the closest ground-truth point (for any symmetry, declared or not).
``symmetric_add_m`` is ADD minimised over the declared symmetries (BOP's MSSD uses the max
instead of the mean).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from sim2real.core.errors import InputError
from sim2real.core.pose import check_rigid
from sim2real.tracking.symmetry import NO_SYMMETRY, Symmetry

REPORTED = ("tracking", "recovered")
STATUSES = ("tracking", "lost", "recovered")
CORRECT_FRACTION = 0.10
"""A pose is correct when its ADD-S is under 10 % of the part's diameter."""
RECALL_THRESHOLDS = tuple(round(0.05 * k, 2) for k in range(1, 11))
"""BOP-style thresholds: 5, 10, ..., 50 % of the diameter."""
VISIBLE_MIN = 0.10
"""Frames where at least 10 % of the part is visible count for recall (BOP's targets)."""
GONE_MAX = 0.05
"""The part has disappeared when less than 5 % of it is visible."""


def transform_points(T: np.ndarray, points: np.ndarray) -> np.ndarray:
    """(N, 3) ``points`` mapped by the (4, 4) transform ``T``."""
    T = np.asarray(T, dtype=np.float64)
    return points @ T[:3, :3].T + T[:3, 3]


def add_m(T_est: np.ndarray, T_gt: np.ndarray, points: np.ndarray) -> float:
    """ADD [m]: mean |T_est p - T_gt p| over the model points."""
    diff = transform_points(T_est, points) - transform_points(T_gt, points)
    return float(np.linalg.norm(diff, axis=1).mean())


def adds_m(T_est: np.ndarray, T_gt: np.ndarray, points: np.ndarray) -> float:
    """ADD-S [m]: mean distance from each estimated point to the closest ground-truth point."""
    from scipy.spatial import cKDTree

    distances, _ = cKDTree(transform_points(T_gt, points)).query(transform_points(T_est, points))
    return float(np.mean(distances))


def symmetric_add_m(
    T_est: np.ndarray,
    T_gt: np.ndarray,
    points: np.ndarray,
    symmetry: Symmetry | None,
    n_continuous: int = 72,
) -> float:
    """ADD [m] minimised over the symmetry transforms S: min_S ADD(T_est, T_gt S). A continuous
    symmetry is sampled every 360 / n_continuous deg, then the best angle refined."""
    symmetry = symmetry or NO_SYMMETRY
    if symmetry.kind == "none":
        return add_m(T_est, T_gt, points)
    est = transform_points(T_est, points)
    G = np.asarray(T_gt, dtype=np.float64) @ symmetry.transforms(n_continuous)
    gt = np.einsum("nj,kij->kni", points, G[:, :3, :3]) + G[:, None, :3, 3]
    errors = np.linalg.norm(gt - est[None], axis=2).mean(axis=1)
    k = int(np.argmin(errors))
    best = float(errors[k])
    if symmetry.kind == "continuous":
        from scipy.optimize import minimize_scalar

        D = symmetry.discrete_with_identity()[k // n_continuous]
        step = 2 * np.pi / n_continuous
        theta = step * (k % n_continuous)
        res = minimize_scalar(
            lambda a: add_m(T_est, T_gt @ D @ symmetry.continuous_transform(a), points),
            bounds=(theta - step, theta + step),
            method="bounded",
            options={"xatol": 1e-7},
        )
        best = min(best, float(res.fun))
    return best


def _angle_deg(trace: float) -> float:
    return math.degrees(math.acos(min(1.0, max(-1.0, (trace - 1.0) / 2.0))))


def _skew(a: np.ndarray) -> np.ndarray:
    return np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])


def rotation_error_deg(
    T_est: np.ndarray, T_gt: np.ndarray, symmetry: Symmetry | None = None
) -> float:
    """Angle [deg] of R_est^T R_gt S, minimised over the symmetries S (exactly, for a
    continuous axis: max over angle of trace(M R_axis) = tr M + C + sqrt(B^2 + C^2))."""
    symmetry = symmetry or NO_SYMMETRY
    R_est, R_gt = np.asarray(T_est)[:3, :3], np.asarray(T_gt)[:3, :3]
    D_list = symmetry.discrete_with_identity() if symmetry.kind != "none" else [np.eye(4)]
    best = 180.0
    for D in D_list:
        M = R_est.T @ R_gt @ D[:3, :3]
        trace = float(np.trace(M))
        if symmetry.kind == "continuous":
            K = _skew(symmetry.axis)
            B, C = float(np.trace(M @ K)), float(np.trace(M @ K @ K))
            trace += C + math.hypot(B, C)
        best = min(best, _angle_deg(trace))
    return best


def translation_error_m(
    T_est: np.ndarray, T_gt: np.ndarray, symmetry: Symmetry | None = None
) -> float:
    """|t_est - t(T_gt S)| [m], minimised over the symmetries S (exactly, for a continuous
    axis: the axis point p sweeps a circle, so the minimum is closed-form)."""
    symmetry = symmetry or NO_SYMMETRY
    T_est, T_gt = np.asarray(T_est, dtype=np.float64), np.asarray(T_gt, dtype=np.float64)
    D_list = symmetry.discrete_with_identity() if symmetry.kind != "none" else [np.eye(4)]
    best = math.inf
    for D in D_list:
        if symmetry.kind != "continuous":
            best = min(best, float(np.linalg.norm(T_est[:3, 3] - (T_gt @ D)[:3, 3])))
            continue
        a = symmetry.axis
        p = symmetry.point if symmetry.point is not None else np.zeros(3)
        Q = T_gt[:3, :3] @ D[:3, :3]
        w = T_est[:3, 3] - T_gt[:3, :3] @ D[:3, 3] - T_gt[:3, 3] - Q @ p
        v = Q.T @ w  # error = |v + R_axis(theta) p|
        along = float(a @ (v + p))
        v_perp = np.linalg.norm(v - (a @ v) * a)
        p_perp = np.linalg.norm(p - (a @ p) * a)
        best = min(best, math.hypot(along, v_perp - p_perp))
    return best


def model_points(mesh, n: int = 1000, seed: int = 0) -> np.ndarray:
    """(n, 3) float64 points sampled uniformly by area on the mesh surface, part frame, m."""
    import trimesh

    tm = trimesh.Trimesh(vertices=mesh.vertices, faces=mesh.faces, process=False)
    points, _ = trimesh.sample.sample_surface(tm, n, seed=seed)
    return np.asarray(points, dtype=np.float64)


def diameter_m(points: np.ndarray) -> float:
    """Largest distance [m] between two of the (N, 3) points (over their convex hull)."""
    from scipy.spatial import ConvexHull, QhullError
    from scipy.spatial.distance import pdist

    points = np.asarray(points, dtype=np.float64)
    if len(points) < 2:
        return 0.0
    try:
        candidates = points[ConvexHull(points).vertices]
    except (QhullError, ValueError):  # flat or degenerate: all points (subsampled if huge)
        candidates = points if len(points) <= 4000 else points[:: len(points) // 4000 + 1]
    return float(pdist(candidates).max())


def read_poses_jsonl(path: str | Path) -> list[dict]:
    """Tracker output, one JSON object per line: ``frame`` (int >= 0), ``status`` (tracking,
    lost, recovered), ``score`` and ``ms`` (numbers or NaN, optional), ``T_cam_part`` (4x4 list,
    metres; may be null when lost). Returns the records with ``T_cam_part`` as (4, 4) arrays
    (or None), in file order. A bad line raises ``InputError(path, 'line N', ...)``."""
    path = Path(path)
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise InputError(path, None, f"cannot read poses file ({exc.strerror})") from exc
    records: list[dict] = []
    seen: set[int] = set()
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"line {n}"
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(path, where, f"not valid JSON ({exc.msg})") from exc
        if not isinstance(rec, dict):
            raise InputError(path, where, "expected a JSON object")
        frame = rec.get("frame")
        if isinstance(frame, bool) or not isinstance(frame, int) or frame < 0:
            raise InputError(path, where, f"'frame' must be an integer >= 0, got {frame!r}")
        if frame in seen:
            raise InputError(path, where, f"frame {frame} appears twice")
        seen.add(frame)
        if rec.get("status") not in STATUSES:
            raise InputError(
                path, where, f"'status' must be one of {STATUSES}, got {rec.get('status')!r}"
            )
        for key in ("score", "ms"):
            value = rec.get(key)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float)
            ):
                raise InputError(path, where, f"'{key}' must be a number, got {value!r}")
            if value is not None and math.isnan(value):
                rec[key] = None  # NaN (json.dumps writes it for a float nan): no value
        T = rec.get("T_cam_part")
        if T is None and rec["status"] != "lost":
            raise InputError(path, where, "'T_cam_part' missing (only a lost frame may omit it)")
        if T is not None:
            try:
                arr = np.asarray(T, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise InputError(path, where, f"'T_cam_part' is not a 4x4 matrix ({exc})") from exc
            try:
                rec["T_cam_part"] = check_rigid(arr, path, where)
            except InputError as exc:
                raise InputError(path, where, f"'T_cam_part': {exc.message}") from exc
        records.append(rec)
    if not records:
        raise InputError(path, None, "no pose records in the file")
    return records


@dataclass
class TrackEvaluation:
    """What ``evaluate_track`` measured. Lengths in the per-frame rows are mm; ``*_rel`` are
    fractions of the diameter; None where a figure cannot be computed."""

    diameter_m: float
    symmetry: str
    frames: list[dict] = field(default_factory=list)
    """Per frame with ground truth: frame, status, score, ms, visible, add_mm, adds_mm,
    add_rel, adds_rel, rot_deg, trans_mm, correct (ADD-S under 10 % of the diameter)."""
    thresholds_rel: list[float] = field(default_factory=lambda: list(RECALL_THRESHOLDS))
    recall: list[float] = field(default_factory=list)
    """Fraction of the evaluated (visible) frames reported tracking/recovered with ADD-S under
    each threshold; frames reported lost or without a record count as misses."""
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
        lines = [
            f"frames: {self.n_gt_frames} with ground truth, {self.n_eval_frames} evaluated "
            f"(>= {VISIBLE_MIN:.0%} visible), {self.n_missing} without a record; "
            f"diameter {d_mm:.1f} mm; symmetry {self.symmetry}",
            f"ADD-S: median {num(self.median_adds_mm, 'mm')}; recall at 10 % of d "
            f"{pct(self.recall_at_10)} (any status {pct(self.recall_at_10_any_status)}); "
            f"AUC 5..50 % {num(self.auc, '', '.3f').strip()}",
            f"ADD (symmetry-aware): median {num(self.median_add_mm, 'mm')}; rotation "
            f"{num(self.median_rot_deg, 'deg')}, translation {num(self.median_trans_mm, 'mm')} "
            "(medians)",
            f"status: 'tracking' precision {pct(self.tracking_precision)} of "
            f"{self.n_reported_tracking} frames",
        ]
        if self.lost_latency_frames is not None:
            lines.append(
                f"lost reported after disappearing: {self.lost_latency_frames} frames; "
                f"correct again after returning: {self.recover_latency_frames} frames; "
                f"tracking while gone: {self.n_tracking_while_gone} frames"
            )
        lines.append(
            f"time: mean {num(self.ms_mean, 'ms', '.1f')}, median {num(self.ms_median, 'ms', '.1f')}"
            " per frame"
        )
        return lines


def _median(values: list[float]) -> float | None:
    return float(np.median(values)) if values else None


def _frame_errors(rec: dict, T_gt, points, symmetry, d: float) -> dict:
    T = rec.get("T_cam_part")
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
    records: list[dict],
    gt: dict[int, np.ndarray],
    mesh,
    symmetry: Symmetry | None = None,
    *,
    visible: dict[int, float] | None = None,
    n_points: int = 1000,
) -> TrackEvaluation:
    """Compare tracker records (``read_poses_jsonl``) with ground truth (frame id ->
    ``T_cam_part``). ``mesh`` gives the model points and the diameter (of its vertices);
    ``visible`` (frame id -> visible fraction of the part) enables the visible-frame recall
    and the lost / recover latencies. Record ``frame`` values are frame ids."""
    symmetry = symmetry or NO_SYMMETRY
    points = model_points(mesh, n_points)
    d = diameter_m(mesh.vertices)
    by_frame = {int(r["frame"]): r for r in records}
    if gt and by_frame and not set(by_frame) & set(gt):
        raise InputError(
            None,
            "frame",
            f"no record's frame ({min(by_frame)}..{max(by_frame)}) is a ground-truth frame "
            f"({min(gt)}..{max(gt)})",
        )
    rows: list[dict] = []
    for frame in sorted(gt):
        rec = by_frame.get(frame, {"status": None})
        row = {
            "frame": frame,
            "status": rec["status"],
            "score": rec.get("score"),
            "ms": rec.get("ms"),
            "visible": None if visible is None else visible.get(frame),
        }
        row.update(_frame_errors(rec, gt[frame], points, symmetry, d))
        row["correct"] = row["adds_rel"] is not None and row["adds_rel"] < CORRECT_FRACTION
        rows.append(row)

    def counts(row: dict) -> bool:
        return row["visible"] is None or row["visible"] >= VISIBLE_MIN

    evaluated = [r for r in rows if counts(r)]
    reported = [r for r in rows if r["status"] in REPORTED]
    ev = TrackEvaluation(diameter_m=d, symmetry=symmetry.describe(), frames=rows)
    ev.n_gt_frames, ev.n_eval_frames = len(rows), len(evaluated)
    ev.n_missing = sum(r["status"] is None for r in rows)
    if evaluated:
        ev.recall = [
            sum(r["status"] in REPORTED and r["adds_rel"] < t for r in evaluated) / len(evaluated)
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
    ms = [float(r["ms"]) for r in records if r.get("ms") is not None]
    ev.ms_mean = float(np.mean(ms)) if ms else None
    ev.ms_median = _median(ms)
    return ev
