"""The part tracker: ``Tracker(mesh, camera, config).update(depth) -> TrackResult``.

Per frame: predict the pose (constant velocity), take the precomputed view of the part nearest
to the predicted viewpoint, align it to the frame (projective point-to-plane ICP, robust kernel,
coarse to fine), and score it (agreeing returns against see-through). States, with hysteresis:
``tracking`` (the pose is trustworthy), ``lost`` (it is not: never move a robot on it) and
``recovered`` (found again this frame by global registration; ``tracking`` from the next good
frame on). When lost, the part is searched for with FPFH features and RANSAC, first around where
it was last seen, then in the whole frame.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.errors import InputError
from sim2real.core.mesh_io import Mesh
from sim2real.sensors.surface_returns import SurfaceReturns
from sim2real.tracking.background import StaticBackground
from sim2real.tracking.icp import Alignment, align, align_nearest, evaluate, outline_agreement
from sim2real.tracking.model_view import ModelViews, build_model_views

NEAR_SEARCH_FRAMES = 3
"""With a static camera, the region where the part was last seen is searched only this many lost
frames; after that the part may be anywhere, and the foreground covers it."""
STILL_SHARE = 0.5
"""A re-found pose with less than this share of its points on what moved is on still things."""
LATERAL_STARTS = 3
"""Best-scoring sideways shifts of a missed prediction that ICP is started from."""
FOREGROUND_TRIES = 6
"""RANSAC runs on the foreground: it is small (only what moved), so more draws are cheap."""


class TrackerConfig(BaseModel):
    """Thresholds of the tracker. Scores are shares of the visible model points that agree."""

    model_config = ConfigDict(extra="forbid")
    views: int = Field(800, ge=20, description="precomputed viewpoints around the part")
    points_per_view: int = Field(400, ge=50, description="model points aligned per frame")
    track_score: float = Field(0.85, gt=0, le=1, description="score to report tracking")
    lost_score: float = Field(0.35, ge=0, le=1, description="below it: lost at once")
    recover_score: float = Field(
        0.9,
        gt=0,
        le=1,
        description="score to accept a re-found pose (a wrong match elsewhere must not pass)",
    )
    gates_m: tuple[float, ...] = Field(
        (0.03, 0.012, 0.006), description="ICP correspondence gates [m]"
    )
    track_outline: float = Field(
        0.35,
        ge=0,
        le=1,
        description="share of the outline that must be a depth edge to keep tracking",
    )
    recover_outline: float = Field(
        0.45,
        ge=0,
        le=1,
        description="share of a re-found pose's outline that must be a depth edge in the frame "
        "(a shape matched inside a larger surface, e.g. an L-bracket on a box's corner, scores "
        "~0.2; but a bracket lying on a table scores ~0.5, its contact being no edge)",
    )
    recover_support: float = Field(
        0.5,
        ge=0,
        le=1,
        description="share of a re-found pose's expected returns (less those an occluder "
        "explains) that must agree: over a hole in the data, a wrong pose meets few "
        "contradictions but finds little support",
    )
    recover_in_image: float = Field(
        0.8,
        gt=0,
        le=1,
        description="share of a re-found pose's camera-facing surface that must lie inside the "
        "image: a part half outside it matches flipped or shifted poses as well as the true one",
    )
    track_occluder_m: float = Field(
        0.012,
        gt=0,
        description="while tracking, a surface this much in front of the model is an occluder "
        "(a gripper or a hand close to the part), not a contradiction; a re-found pose needs a "
        "clear gap of half the part's diameter (3 to 10 cm)",
    )
    inlier_m: float = Field(
        0.006, gt=0, description="agreeing-return tolerance (at least 1 % of depth) [m]"
    )
    search_voxel_m: float | None = Field(
        None, description="voxel of the global search; None = 3 % of the diameter"
    )
    max_speed_m_s: float = Field(3.0, gt=0, description="faster predicted motion is reset [m/s]")
    static_camera: bool = Field(
        True,
        description="the camera does not move: when lost, search first where the frame stands "
        "in front of the farthest depth seen so far (what moved), then the whole frame",
    )
    full_search_every: int = Field(
        10,
        ge=1,
        description="while lost with a static camera, search the whole frame only on every n-th "
        "lost frame (the foreground is searched on each): bounds the cost of a lost frame",
    )


@dataclass
class TrackResult:
    status: str
    score: float
    T_cam_part: np.ndarray
    ms: float
    details: dict = field(default_factory=dict)

    def record(self, frame: int) -> dict:
        return {
            "frame": frame,
            "status": self.status,
            "score": round(float(self.score), 4),
            "T_cam_part": np.round(self.T_cam_part, 7).tolist(),
            "ms": round(self.ms, 3),
        }


class Tracker:
    """Follows one rigid part in a stream of depth frames of a fixed camera."""

    def __init__(
        self,
        mesh: Mesh,
        camera: CameraIntrinsics,
        config: TrackerConfig | None = None,
        returns: SurfaceReturns | None = None,
        views: ModelViews | None = None,
    ):
        """``returns``: the part's tuned surface returns (``sim2real model tune``): regions that
        rarely return depth on the real sensor (dark, shiny) are not expected to, so a part
        that is mostly such regions can still be confirmed by the rest. ``views``: a stored
        viewpoint model of ``mesh`` (a prepared MODEL_DIR's), instead of building one."""
        self.mesh = mesh
        self.camera = camera
        self.config = config or TrackerConfig()
        self.views: ModelViews = views or build_model_views(
            mesh, self.config.views, self.config.points_per_view
        )
        if returns is not None:
            self.views.with_returns(returns)
        # an occluder stands clear of the part; a surface closer to the model than this is a
        # contradiction (the model would be inside it), not an occluder
        self.occluder_m = float(np.clip(0.5 * self.views.diameter_m, 0.03, 0.10))
        self._search = None  # global-registration model, built when first needed
        self.background = StaticBackground(camera) if self.config.static_camera else None
        self._lost_frames = 0
        self.T: np.ndarray | None = None
        self.velocity = np.eye(4)
        self.status = "lost"

    def initialize(self, T_cam_part: np.ndarray | None) -> None:
        """Start from a known pose, or (None) search the next frame for the part."""
        if T_cam_part is not None:
            T_cam_part = np.asarray(T_cam_part, dtype=np.float64)
            if T_cam_part[2, 3] <= 0:
                raise InputError(
                    None, "--init", "the initial pose puts the part behind the camera (z <= 0)"
                )
        self.T = T_cam_part
        self.velocity = np.eye(4)
        self.status = "init" if T_cam_part is not None else "lost"

    def _weights(self, k: int) -> np.ndarray | None:
        return None if self.views.weights is None else self.views.weights[k]

    def _align(
        self, depth: np.ndarray, T_guess: np.ndarray, occluder_m: float | None = None
    ) -> Alignment:
        """ICP from ``T_guess`` on the nearest view, scored; ``occluder_m`` (default: the strict
        gap of a re-found pose) is how far in front a surface must be to count as occluder."""
        occluder_m = occluder_m or self.occluder_m
        k = self.views.nearest(T_guess)
        a = align(
            depth,
            self.camera,
            self.views.points[k],
            self.views.normals[k],
            T_guess,
            self.config.gates_m,
            inlier_m=self.config.inlier_m,
            occluder_m=occluder_m,
            weights=self._weights(k),
        )
        k2 = self.views.nearest(a.T_cam_part)  # the view may change with the pose: settle once
        if k2 != k:
            a = align(
                depth,
                self.camera,
                self.views.points[k2],
                self.views.normals[k2],
                a.T_cam_part,
                self.config.gates_m[-1:],
                inlier_m=self.config.inlier_m,
                occluder_m=occluder_m,
                weights=self._weights(k2),
            )
        k = self.views.nearest(a.T_cam_part)
        a.outline = outline_agreement(
            depth,
            self.camera,
            self.views.contour_points[k],
            self.views.contour_outward[k],
            a.T_cam_part,
            occluder_m=occluder_m,
        )
        return a

    def update(self, depth_m: np.ndarray) -> TrackResult:
        """Track the part in one frame ((H, W) float metres, 0 = no return)."""
        started = time.perf_counter()
        depth = np.asarray(depth_m)
        if depth.shape != (self.camera.height, self.camera.width):
            raise InputError(
                None,
                "depth",
                f"frame is {depth.shape[1]}x{depth.shape[0]}, the camera {self.camera.width}x{self.camera.height}",
            )
        cfg = self.config
        result: Alignment | None = None
        was_tracking = self.status in ("tracking", "recovered")
        # continuing a confirmed track, an occluder may come close to the part (a gripper);
        # a pose not confirmed yet must keep a clear gap to anything in front of it
        margin = cfg.track_occluder_m if was_tracking or self.status == "init" else None
        if self.T is not None:
            guess = self.velocity @ self.T
            result = self._align(depth, guess, margin)
            if result.score < cfg.track_score and not np.allclose(guess, self.T):
                alt = self._align(depth, self.T, margin)  # the motion may have stopped
                if alt.score > result.score:
                    result = alt
            if result.score < cfg.track_score:  # fast motion: widen the capture
                # a pose slid along a flat face agrees in depth as well as the right one; its
                # outline does not: rank by both
                for start in self._lateral_starts(depth, guess, margin):
                    wide = self._align(depth, start, margin)
                    if wide.score + wide.outline > result.score + result.outline:
                        result = wide
        following = False
        if self.status in ("tracking", "init"):
            good = (
                result is not None
                and result.score >= cfg.track_score
                and result.outline >= cfg.track_outline
            )
        else:  # just re-found (its motion unknown) or lost: the stricter bars confirm it
            good = result is not None and self._trusted_recovery(result)
        if good:
            status = "tracking" if was_tracking or self.status == "init" else "recovered"
            following = True
        else:
            found = self._relocalize(depth)
            if found is not None and self._trusted_recovery(found):
                result, status, following = found, "recovered", True
            elif found is not None and self._trusted_recovery(found, in_image=False):
                # good but mostly outside the image: not trusted yet, followed, so the next
                # frames confirm it by ICP as it comes in, without another global search's luck
                result, status, following = found, "lost", True
            else:
                status = "lost"
                # a weak match right after tracking is still followed (not trusted: reported
                # lost); it must reach recover_score again to be trusted
                following = was_tracking and result is not None and result.score >= cfg.lost_score
                if result is None or (found is not None and found.score > result.score):
                    result = found
        score = result.score if result is not None else 0.0
        if following:
            new_T = result.T_cam_part
            velocity = (
                new_T @ np.linalg.inv(self.T)
                if self.T is not None and status == "tracking"
                else np.eye(4)
            )
            self.velocity = (
                velocity if np.linalg.norm(velocity[:3, 3]) < cfg.max_speed_m_s / 10 else np.eye(4)
            )
            self.T = new_T
        else:
            self.velocity = np.eye(4)
            if self.status == "init":
                self.T = None  # a given start that does not match the frame is not kept
        self.status = status
        self._lost_frames = self._lost_frames + 1 if status == "lost" else 0
        if self.background is not None:
            self.background.update(depth)
        T_out = self.T if self.T is not None else np.eye(4)
        ms = (time.perf_counter() - started) * 1e3
        details = (
            {}
            if result is None
            else {"inliers": result.inliers, "behind": result.behind, "visible": result.visible}
        )
        return TrackResult(status, score, T_out, ms, details)

    def _lateral_starts(
        self, depth: np.ndarray, guess: np.ndarray, occluder_m: float | None = None
    ) -> list[np.ndarray]:
        """Starts for a pose the prediction missed: projective ICP captures a sideways error of
        only a few millimetres (it pairs along rays), so score a grid of shifts across the line of
        sight, up to the distance moved since the last frame (at least 2 cm; 5 cm, on a finer
        grid, when the motion is unknown: just re-found), and start from the best few; then from nearest-neighbour ICP, whose capture is wider but biased by the
        surfaces around the part."""
        known = self.status == "tracking"  # the motion is known only while tracking
        step = max(0.02, float(np.linalg.norm(self.velocity[:3, 3]))) if known else 0.05
        n = 5 if known else 9
        ray = guess[:3, 3] / np.linalg.norm(guess[:3, 3])
        across = np.linalg.svd(ray[None, :])[2][1:]  # two unit vectors normal to the ray
        k = self.views.nearest(guess)
        scored = []
        for a in np.linspace(-step, step, n):
            for b in np.linspace(-step, step, n):
                T = guess.copy()
                T[:3, 3] += a * across[0] + b * across[1]
                e = evaluate(
                    depth,
                    self.camera,
                    self.views.points[k],
                    self.views.normals[k],
                    T,
                    2 * self.config.inlier_m,
                    occluder_m or self.occluder_m,
                    self._weights(k),
                )
                scored.append((e.score, T))
        scored.sort(key=lambda st: -st[0])
        return [T for _, T in scored[:LATERAL_STARTS]] + [self._align_nearest(depth, guess)]

    def _align_nearest(self, depth: np.ndarray, T_guess: np.ndarray) -> np.ndarray:
        """Nearest-neighbour ICP on the frame's points within one diameter of the guess."""
        pts = self.camera.backproject(depth)
        near = np.linalg.norm(pts - T_guess[:3, 3], axis=1) < self.views.diameter_m
        pts = pts[near]
        if len(pts) > 20_000:
            pts = pts[:: len(pts) // 20_000 + 1]
        k = self.views.nearest(T_guess)
        return align_nearest(pts, self.views.points[k], self.views.normals[k], T_guess, 0.05)

    def _trusted_recovery(self, a: Alignment, in_image: bool = True) -> bool:
        """A pose found again (not followed) must pass the stricter bars (``in_image=False``:
        all but the share of the part inside the image)."""
        cfg = self.config
        return (
            a.score >= cfg.recover_score
            and a.outline >= cfg.recover_outline
            and a.support >= cfg.recover_support
            and (not in_image or a.in_image >= cfg.recover_in_image)
        )

    def _rank(self, a: Alignment) -> float:
        """Re-found candidates whose outline is no edge in the frame rank below all others."""
        return a.score - (0.0 if a.outline >= self.config.recover_outline else 1.0)

    def _search_regions(self, depth: np.ndarray):
        """(points, RANSAC tries) to search, cheapest first: around where the part was last seen
        (only just after losing it, when the camera is static), what stands in front of the
        static background (a small set: more tries), and, not on every lost frame, everything."""
        frame_points = None
        static = self.background is not None and self.background.frames > 0
        if self.T is not None and (not static or self._lost_frames < NEAR_SEARCH_FRAMES):
            frame_points = self.camera.backproject(depth)
            near = (
                np.linalg.norm(frame_points - self.T[:3, 3], axis=1) < 1.5 * self.views.diameter_m
            )
            yield frame_points[near], 2
        if static:
            around = self.background.points_around_foreground(depth, 0.25 * self.views.diameter_m)
            yield around, FOREGROUND_TRIES
            if self._lost_frames % self.config.full_search_every != 0:
                return
        # the very first search (no pose yet, e.g. --init auto) has no prior to fall back on:
        # more draws, so a near-symmetric wrong match does not come alone
        first = self.T is None and not static
        everything = frame_points if frame_points is not None else self.camera.backproject(depth)
        yield everything, FOREGROUND_TRIES if first else 2

    def _on_still_background(self, moved_mask: np.ndarray | None, a: Alignment) -> bool:
        """Whether a re-found pose, away from where the part was last seen, lies mostly on
        what has stood still since the camera started (a distractor box): the part has been
        seen elsewhere and has moved, so it cannot be there (with a static camera only).
        ``moved_mask``: the frame's ``StaticBackground.foreground_mask`` (None: no check)."""
        if moved_mask is None or self.T is None:
            return False
        T = a.T_cam_part
        if np.linalg.norm(T[:3, 3] - self.T[:3, 3]) < self.views.diameter_m:
            return False
        k = self.views.nearest(T)
        p = self.views.points[k] @ T[:3, :3].T + T[:3, 3]
        p = p[p[:, 2] > 1e-6]
        cam, stride = self.camera, self.background.stride
        u = np.rint(cam.fx * p[:, 0] / p[:, 2] + cam.cx).astype(np.int64)
        v = np.rint(cam.fy * p[:, 1] / p[:, 2] + cam.cy).astype(np.int64)
        inside = (u >= 0) & (u < cam.width) & (v >= 0) & (v < cam.height)
        if not inside.any():
            return False
        moved = moved_mask[v[inside] // stride, u[inside] // stride]
        return float(moved.mean()) < STILL_SHARE

    def _relocalize(self, depth: np.ndarray) -> Alignment | None:
        """Global registration (FPFH + RANSAC) over the regions of ``_search_regions``."""
        from sim2real.tracking.relocalize import GlobalSearch

        if self._search is None:
            self._search = GlobalSearch(self.mesh, self.config.search_voxel_m)
        static = self.background is not None and self.background.frames > 0
        moved_mask = self.background.foreground_mask(depth) if static else None  # once a frame
        best = None
        for points, tries in self._search_regions(depth):
            for T in self._search.candidates_in(points, tries):
                a = self._align(depth, T)
                if a.score < self.config.recover_score:  # a near miss: widen the capture
                    wide = self._align(depth, self._align_nearest(depth, T))
                    a = wide if self._rank(wide) > self._rank(a) else a
                if self._on_still_background(moved_mask, a):
                    continue
                if best is None or self._rank(a) > self._rank(best):
                    best = a
            if best is not None and self._trusted_recovery(best):
                return best
        return best


def score_pose(tracker: Tracker, depth: np.ndarray, T: np.ndarray) -> Alignment:
    """The tracker's score of a given pose on a frame (no alignment)."""
    k = tracker.views.nearest(T)
    return evaluate(
        depth,
        tracker.camera,
        tracker.views.points[k],
        tracker.views.normals[k],
        T,
        tracker.config.inlier_m,
        tracker.occluder_m,
        tracker._weights(k),
    )
