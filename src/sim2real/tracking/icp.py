"""Projective point-to-plane ICP of a part's visible model points against a depth image, with a
robust (Tukey) kernel, coarse-to-fine gates, and the score that says whether the part is there.

Correspondences come from projecting each model point into the image (no search tree): the
measured point on the same pixel's ray. A measured surface well in front of the model is an
occluder (a hand, a gripper) and is ignored, so it cannot pull the pose; one well behind it is
a free-space violation: the camera sees through where the model says the part is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim2real.core.camera import CameraIntrinsics

MIN_CORRESPONDENCES = 12
MIN_CORRESPONDENCE_SHARE = 0.05
MAX_STEP_RAD = 0.35
SETTLED_SHARE = 0.02
"""A step moving no model point by more than 2 % of the gate ends that gate's iterations (the
projective pairing jitters below that)."""
MIN_OPINION_SHARE = 0.1
"""However few returns a tuned model expects, a tenth of the view's points must have one."""
CONVERGED = 1e-4
"""An ICP step smaller than this (radians and metres together: 0.1 mm, 0.006 deg) ends the
iterations: below the noise of any depth sensor."""
"""One ICP step may not move a model point by more than twice the gate, nor turn more than
20 degrees."""


@dataclass
class Alignment:
    T_cam_part: np.ndarray
    inliers: int
    behind: int
    in_front: int
    no_return: int
    visible: int
    rms_m: float

    points: int = 0
    """Model points of the view (in the image or not)."""
    outline: float = 1.0
    """Share of the model's outline that is an edge in the frame (``outline_edges``)."""
    outline_returns: float = 1.0
    """The same among the outline points with a return beside them (``outline_edges``)."""
    outline_clear: float = 1.0
    """Share of the outline inside the image with no occluder beside it: the rest cannot be
    judged (``outline_edges``)."""
    spread: float = 0.0
    """With colour: how far the evidence lets the model's points slide (RMS standard deviation,
    ``fused_align.pose_spread_m``) as a share of the part's diameter; 0 when not measured
    (depth alone)."""
    depth_share: float = 1.0
    """Depth alone: the least share, in any direction, of what the view could pin that the frame
    does (``depth_spread.weakest_share``); 1 when not measured (with colour)."""
    flat_outline: float = 1.0
    """Depth alone, a flat view: the share of the outline that is an edge on both sides (the
    part inside, farther or nothing outside); 1 when not judged."""
    facing: int = 0
    """Model points facing the camera, in the image or not: ``visible / facing`` is the share of
    the part's seen side that lies inside the image."""
    expected: float = 0.0
    """Model points expected to return depth (the sum of their return probabilities; = points
    when the model carries no tuned surface returns)."""
    expected_visible: float = 0.0
    """The same over the visible points (facing the camera, inside the image)."""

    @property
    def support(self) -> float:
        """Agreeing returns per expected return not explained by an occluder: a pose over a
        hole in the data (a dark part, a dropout) has few contradictions but little support."""
        return self.inliers / max(self.expected_visible - self.in_front, 1.0)

    @property
    def in_image(self) -> float:
        return self.visible / self.facing if self.facing else 0.0

    color_score: float | None = None
    """The colour image's agreement with the outline (region modality), on the depth score's
    scale (``tracker.color_score``); None without colour or with too few usable lines."""

    def details(self) -> dict:
        """Per-modality figures (``TrackResult.details``)."""
        return {
            "inliers": self.inliers,
            "behind": self.behind,
            "visible": self.visible,
            "depth_score": self.depth_score,
            "depth_rms_m": self.rms_m,
            "color_score": self.color_score,
            "pose_spread": self.spread,
            "depth_share": self.depth_share,
        }

    @property
    def depth_score(self) -> float:
        """Share of the model points with an opinion that agree: inliers / (inliers +
        contradictions), where at least a quarter of the view's points expected to return depth
        must have one (a part mostly outside the image, or hidden, cannot be confirmed), and
        never fewer than a tenth of them, however dark the part: a patch confirms no pose."""
        return self.inliers / max(self.inliers + self.behind, self._floor)

    @property
    def _floor(self) -> float:
        return max(0.25 * self.expected, MIN_OPINION_SHARE * self.points, 1)

    @property
    def depth_has_opinion(self) -> bool:
        """Enough returns on the model to confirm the pose, or more contradictions than
        agreement: otherwise (a dark part, a hidden one) the depth image cannot say."""
        return self.inliers + self.behind >= self._floor or self.behind > self.inliers

    @property
    def score(self) -> float:
        """The evidence of both modalities, where each has an opinion: the lower of the two
        (each must vouch for the pose); the depth score alone without colour, the colour's
        alone when the depth image cannot say."""
        if self.color_score is None:
            return self.depth_score
        if not self.depth_has_opinion:
            return self.color_score
        return min(self.depth_score, self.color_score)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise a x b of (N, 3) arrays (np.cross costs more in its axis handling than in the
    arithmetic at the few hundred rows of a model view)."""
    return np.stack(
        [
            a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1],
            a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2],
            a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0],
        ],
        axis=1,
    )


def _skew_update(x: np.ndarray) -> np.ndarray:
    """4x4 of a small motion (omega, v): Rodrigues for the rotation, then translation."""
    w, v = x[:3], x[3:]
    angle = float(np.linalg.norm(w))
    T = np.eye(4)
    if angle > 1e-12:
        k = w / angle
        K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
        T[:3, :3] = np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K
    T[:3, 3] = v
    return T


def _correspond(depth: np.ndarray, camera: CameraIntrinsics, p: np.ndarray):
    """Pixel of each camera-frame point and the measured point on its ray (z = measured depth)."""
    z = p[:, 2]
    ok = z > 1e-6
    u = np.full(len(p), -1, np.int64)
    v = np.full(len(p), -1, np.int64)
    u[ok] = np.rint(camera.fx * p[ok, 0] / z[ok] + camera.cx).astype(np.int64)
    v[ok] = np.rint(camera.fy * p[ok, 1] / z[ok] + camera.cy).astype(np.int64)
    inside = ok & (u >= 0) & (u < camera.width) & (v >= 0) & (v < camera.height)
    zm = np.zeros(len(p), np.float64)
    zm[inside] = depth[v[inside], u[inside]]
    q = np.stack([(u - camera.cx) / camera.fx * zm, (v - camera.cy) / camera.fy * zm, zm], axis=1)
    return inside, zm, q


def depth_equations(
    depth: np.ndarray,
    camera: CameraIntrinsics,
    points: np.ndarray,
    normals: np.ndarray,
    T: np.ndarray,
    gate_m: float,
    weights: np.ndarray | None = None,
    spread: bool = False,
    front_m: float = np.inf,
) -> tuple[np.ndarray, np.ndarray, int, np.ndarray, float] | None:
    """Point-to-plane normal equations of the model at ``T``: (A (6, 6), b (6,), pairs, the
    paired model points (camera frame), with ``spread`` the residuals' robust standard deviation
    (1.4826 MAD) [m], else 0), for the step x = A^-1 b of
    ``T <- exp(x) T``; pairs are the projective correspondences within ``gate_m`` on surfaces
    facing the camera, weighted by Tukey's biweight (c = gate / 2) and ``weights``. None when
    too few pairs to move the pose. A return more than ``front_m`` in front of its model point
    is an occluder's, not paired even within the gate: paired, a passing box pulled a noisy
    (5 mm) bracket's pose 38-49 mm under itself, where its hidden points stop counting."""
    R, t = T[:3, :3], T[:3, 3]
    p = points @ R.T + t
    n = normals @ R.T
    inside, zm, q = _correspond(depth, camera, p)
    # only surfaces that face the camera, and returns near the model (not occluders)
    facing = np.einsum("ij,ij->i", n, p) < 0
    dz = zm - p[:, 2]
    near = inside & facing & (zm > 0) & (np.abs(dz) < gate_m) & (dz > -front_m)
    pairs = int(near.sum())
    if pairs < max(MIN_CORRESPONDENCES, MIN_CORRESPONDENCE_SHARE * len(points)):
        return None
    pn, nn, qn = p[near], n[near], q[near]
    r = np.einsum("ij,ij->i", nn, qn - pn)
    c = gate_m / 2  # Tukey's biweight
    w = np.where(np.abs(r) < c, (1 - (r / c) ** 2) ** 2, 0.0)
    if weights is not None:
        w = w * weights[near]
    J = np.concatenate([_cross(pn, nn), nn], axis=1)
    Jw = J * w[:, None]
    scale = 1.4826 * float(np.median(np.abs(r))) if spread else 0.0
    return Jw.T @ J, Jw.T @ r, pairs, pn, scale


def largest_move(x: np.ndarray, p: np.ndarray) -> float:
    """How far the step x moves the farthest-moving point of ``p`` ((N, 3), camera frame) [m]."""
    return float(np.linalg.norm(_cross(np.broadcast_to(x[:3], p.shape), p) + x[3:], axis=1).max())


def step_is_safe(x: np.ndarray, p: np.ndarray, gate_m: float) -> bool:
    """Whether the step x moves no point of ``p`` ((N, 3), camera frame) by more than twice the
    gate and turns less than MAX_STEP_RAD (an under-constrained solve runs away)."""
    return largest_move(x, p) <= 2 * gate_m and np.linalg.norm(x[:3]) <= MAX_STEP_RAD


def align(
    depth: np.ndarray,
    camera: CameraIntrinsics,
    points: np.ndarray,
    normals: np.ndarray,
    T_init: np.ndarray,
    gates_m: tuple[float, ...] = (0.03, 0.012, 0.006),
    iterations: int = 6,
    inlier_m: float = 0.006,
    occluder_m: float = 0.05,
    weights: np.ndarray | None = None,
    edge_distance_m: np.ndarray | None = None,
    edge_margin_px: float = 0.0,
    front_m: float = np.inf,
    keep_start: bool = False,
) -> Alignment:
    """Refine ``T_init`` (part in camera) so the model ``points``/``normals`` (part frame, (P, 3))
    lie on the measured surface of ``depth`` ((H, W) metres, 0 = none). ``weights`` (P,): each
    point's chance of a return (tuned surfaces); rarely returning regions pull less. The
    result is scored by ``evaluate`` (with ``edge_distance_m`` and ``edge_margin_px``).
    ``front_m``: returns farther in front are not paired (``depth_equations``); the tracker gives
    its occluder margin on noise-widened frames only (on the real ViSP frames, depth only, it cost
    0.17 mm of median ADD). ``keep_start``: the start itself is kept where more of its points
    agree than of the refined pose's (noise-widened frames: from 1 mm off the truth, the coarse
    gate slid a 5 mm-noise bracket 41-50 mm under a passing box, where a third as many agree)."""
    T = T_init.copy()
    for gate in gates_m:
        for _ in range(iterations):
            eq = depth_equations(depth, camera, points, normals, T, gate, weights, front_m=front_m)
            if eq is None:
                break  # too little of the part is seen to move it: keep the pose
            A, b, _, pn, _ = eq
            x = np.linalg.solve(A + 1e-9 * np.eye(6), b)
            moved = largest_move(x, pn)
            if moved > 2 * gate or np.linalg.norm(x[:3]) > MAX_STEP_RAD:
                break  # an under-constrained solve runs away: stop rather than jump
            T = _skew_update(x) @ T
            if moved < SETTLED_SHARE * gate or np.linalg.norm(x) < CONVERGED:
                break  # settled at this gate: the finer one goes on

    def scored(T):
        return evaluate(
            depth, camera, points, normals, T, inlier_m, occluder_m, weights, edge_distance_m,
            edge_margin_px,
        )  # fmt: skip

    refined = scored(T)
    if not keep_start:
        return refined
    start = scored(T_init)
    return start if start.inliers > refined.inliers else refined


def inlier_tolerance_m(inlier_m: float, z: np.ndarray) -> np.ndarray:
    """How far a return may lie from the model's point at depth ``z`` to agree with it:
    ``inlier_m``, or 1 % of the depth beyond (the noise grows with depth)."""
    return np.maximum(inlier_m, 0.01 * z)


def evaluate(
    depth: np.ndarray,
    camera: CameraIntrinsics,
    points: np.ndarray,
    normals: np.ndarray,
    T: np.ndarray,
    inlier_m: float,
    occluder_m: float = 0.05,
    weights: np.ndarray | None = None,
    edge_distance_m: np.ndarray | None = None,
    edge_margin_px: float = 0.0,
) -> Alignment:
    """Count, for the model seen at ``T``, agreeing returns, occluders (a surface at least
    ``occluder_m`` in front), contradictions (``behind``: see-through, or a surface just in
    front of the model, which no occluder explains: the model would sit inside it) and
    dropouts. Points less than ``edge_margin_px`` from the view's outline (``edge_distance_m``,
    per point) have no opinion: depth sensors blur, fatten or lose thin features and what is
    next to an outline."""
    p = points @ T[:3, :3].T + T[:3, 3]
    n = normals @ T[:3, :3].T
    inside, zm, _ = _correspond(depth, camera, p)
    facing = (np.einsum("ij,ij->i", n, p) < 0) & (p[:, 2] > 0)
    visible = inside & facing
    has = visible & (zm > 0)
    dz = zm - p[:, 2]
    inl = has & (np.abs(dz) < inlier_tolerance_m(inlier_m, p[:, 2]))
    # in front by little: the model sits inside a surface the camera sees, which no
    # occluder explains (an occluder stands clear of the part): that contradicts the pose too
    front = has & (dz <= -occluder_m)
    behind = has & ~inl & ~front
    if behind.any():  # beside an occluder's edge, returns mix both surfaces: no opinion there
        behind &= ~_beside_occluder(depth, camera, p, behind, occluder_m)
    rms = float(np.sqrt(np.mean(dz[inl] ** 2))) if inl.any() else float("nan")
    opinion = np.ones(len(p), bool)
    if edge_distance_m is not None and edge_margin_px > 0:
        opinion = edge_distance_m * camera.fx >= edge_margin_px * np.maximum(p[:, 2], 1e-6)
    w = np.ones(len(p)) if weights is None else weights
    return Alignment(
        T,
        int((inl & opinion).sum()),
        int((behind & opinion).sum()),
        int((front & opinion).sum()),
        int((visible & ~has).sum()),
        int(visible.sum()),
        rms,
        int(opinion.sum()),
        facing=int(facing.sum()),
        expected=float(w[opinion].sum()),
        expected_visible=float(w[visible & opinion].sum()),
    )


OCCLUDER_EDGE_PX = 2
"""How far from an occluder's edge a return may be a mixed (flying) pixel."""


def _beside_occluder(
    depth: np.ndarray, camera: CameraIntrinsics, p: np.ndarray, which: np.ndarray, occluder_m: float
) -> np.ndarray:
    """(P,) bool: for the points ``which``, whether a pixel ``OCCLUDER_EDGE_PX`` away shows an
    occluder (a surface at least ``occluder_m`` in front of the point)."""
    out = np.zeros(len(p), bool)
    q = p[which]
    u = np.rint(camera.fx * q[:, 0] / q[:, 2] + camera.cx).astype(np.int64)
    v = np.rint(camera.fy * q[:, 1] / q[:, 2] + camera.cy).astype(np.int64)
    near = np.zeros(len(q), bool)
    k = OCCLUDER_EDGE_PX
    for du, dv in ((k, 0), (-k, 0), (0, k), (0, -k)):
        uu = np.clip(u + du, 0, camera.width - 1)
        vv = np.clip(v + dv, 0, camera.height - 1)
        z = depth[vv, uu]
        near |= (z > 0) & (z < q[:, 2] - occluder_m)
    out[which] = near
    return out


def edge_gap_m(z: np.ndarray) -> np.ndarray:
    """How much farther than an outline point at depth ``z`` a return must be to make it an
    edge (1 cm, 2 % beyond 0.5 m: the noise grows with depth)."""
    return np.maximum(0.01, 0.02 * z)


def outline_edges(
    depth: np.ndarray,
    camera: CameraIntrinsics,
    contour: np.ndarray,
    outward: np.ndarray,
    T: np.ndarray,
    step_px: float = 4.0,
    occluder_m: float = 0.05,
) -> tuple[float, float, float]:
    """(Share of the model's outline, seen at ``T``, that is also an edge in the frame, the same
    share among the outline points with a return just outside them, 1.0 when fewer than 8 have
    one, and the share of the outline inside the image with no occluder beside it), from one
    look at the frame. An edge: just outside the outline the camera sees something farther
    away, or nothing; a part matched onto a surface that merely contains its shape (a box's
    corner for an L-bracket) fails it. "Nothing" beside an outline is an emitter's shadow or
    the far background, but also a dark surface: a thin part matched onto a face bordered by
    dark things (a brush's bristles) must not pass on missing data alone."""
    c = contour @ T[:3, :3].T + T[:3, 3]
    o = outward @ T[:3, :3].T
    z = c[:, 2]
    ok = z > 1e-6
    shift_m = step_px * z / camera.fx  # metres that make step_px pixels at that depth
    q = c + o * shift_m[:, None]
    inside, zm, _ = _correspond(depth, camera, q)
    # an occluder well in front of the outline says nothing about it
    use = ok & inside & ~((zm > 0) & (zm < z - occluder_m))
    in_view = int((ok & inside).sum())
    clear = float(use.sum()) / in_view if in_view else 0.0
    edge = (zm == 0) | (zm > z + edge_gap_m(z))
    returns = use & (zm > 0)
    # too few returns beside the outline to object
    share_returns = float(edge[returns].mean()) if returns.sum() >= 8 else 1.0
    if use.sum() < 8:  # hidden by occluders: no objection
        return (1.0 if in_view >= 8 else 0.0), share_returns, clear
    return float(edge[use].mean()), share_returns, clear
