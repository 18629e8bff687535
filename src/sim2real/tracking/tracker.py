"""The part tracker: ``Tracker(mesh, camera, config).update(depth) -> TrackResult``.

Per frame: predict the pose (constant velocity), take the precomputed view of the part nearest
to the predicted viewpoint, align it to the frame (projective point-to-plane ICP, robust kernel,
coarse to fine, with the outline's depth edges or colour), and score it (agreeing returns against
see-through). States, with hysteresis: ``tracking`` (the pose is trustworthy), ``lost`` (it is
not: never move a robot on it) and ``recovered`` (found again this frame by global registration;
``tracking`` from the next good frame on). When lost, it is searched for (FPFH and RANSAC)
around where it was last seen, then in the whole frame; given a detector, only near its proposals.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.errors import InputError
from sim2real.core.mesh_io import Mesh
from sim2real.core.pose import check_rigid
from sim2real.core.pose_records import PoseRecord
from sim2real.models.part import PreparedModel
from sim2real.models.viewpoints import ViewpointModel
from sim2real.tracking.background import StaticBackground
from sim2real.tracking.bars import recovery_failures, tracking_failures, trusted_recovery
from sim2real.tracking.config import TrackerConfig
from sim2real.tracking.depth_noise import frame_noise_m, noise_config
from sim2real.tracking.depth_outline import DepthOutlineModality
from sim2real.tracking.depth_spread import depth_share
from sim2real.tracking.fused_align import FusedSettings, fused_align, pose_spread_m
from sim2real.tracking.icp import Alignment, align, evaluate, outline_edges
from sim2real.tracking.nearest_icp import align_nearest_around
from sim2real.tracking.proposals import Proposer, best_proposal, proposal_centres
from sim2real.tracking.region import RegionModality
from sim2real.tracking.relocalize import LostSearch

LATERAL_STARTS = 3
"""Best-scoring sideways shifts of a missed prediction that ICP is started from."""


@dataclass
class TrackResult:
    status: str
    score: float
    T_cam_part: np.ndarray
    ms: float
    details: dict = field(default_factory=dict)

    def record(self, frame: int) -> PoseRecord:
        """This frame's line of ``poses.jsonl``."""
        return PoseRecord(
            frame=frame,
            status=self.status,
            score=round(float(self.score), 4),
            T_cam_part=self.T_cam_part,
            ms=round(self.ms, 3),
            refused=self.details.get("refused"),
            noise_mm=self.details.get("noise_mm"),
        )


class Tracker:
    """Follows one rigid part in a stream of depth frames of a fixed camera."""

    def __init__(
        self,
        part: PreparedModel | Mesh,
        camera: CameraIntrinsics,
        config: TrackerConfig | None = None,
        color_camera: CameraIntrinsics | None = None,
        T_color_depth: np.ndarray | None = None,
    ):
        """``part``: a ``PreparedModel`` (a bare ``Mesh`` is wrapped in one). Its stored
        viewpoint model is used when it has one (else one is built from the mesh), and its tuned
        surface returns (``sim2real model tune``) when it has them: regions that rarely return
        depth on the real sensor (dark, shiny) are not expected to, so a part that is mostly
        such regions can still be confirmed by the rest. ``camera``: the depth camera (poses
        are in its frame); ``color_camera`` and ``T_color_depth`` (depth frame -> colour frame):
        the colour camera of ``update(depth, color)``, by default the depth camera itself
        (colour registered to depth)."""
        self.part = part if isinstance(part, PreparedModel) else PreparedModel(part)
        self.mesh = self.part.mesh
        self.camera = camera
        self.config = self.settings = config or TrackerConfig()  # ``config``: widened per frame
        self.views: ViewpointModel = self.part.viewpoints(
            self.config.views, self.config.points_per_view
        )
        # an occluder stands clear of the part: a surface nearer the model contradicts it
        self.occluder_m = float(np.clip(0.5 * self.views.diameter_m, 0.03, 0.10))
        self._search: LostSearch | None = None  # built when the part is first lost
        self.background = StaticBackground(camera) if self.config.static_camera else None
        self._lost_frames = 0
        self._noise_m: float | None = None  # this frame's depth noise std (depth_noise)
        self.T: np.ndarray | None = None
        self.velocity = np.eye(4)
        self.status = "lost"
        self.region = RegionModality(
            color_camera or camera,
            None if T_color_depth is None else check_rigid(T_color_depth, None, "T_color_depth"),
            self.config.region,
        )
        self.depth_outline = DepthOutlineModality(camera, None, self.config.region)
        self._color: np.ndarray | None = None  # this frame's colour image, if any
        self._colors_trusted = False  # learned at a confirmed pose (not only at a given start)
        self.proposer: Proposer | None = None  # poses to try first when lost (a detector)

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

    def _edges(self, k: int) -> np.ndarray | None:
        return None if self.views.edge_distance_m is None else self.views.edge_distance_m[k]

    def _evaluate(
        self,
        depth: np.ndarray,
        T: np.ndarray,
        k: int,
        inlier_m: float,
        occluder_m: float | None = None,
    ) -> Alignment:
        """The depth evidence for pose ``T`` on view ``k`` (``icp.evaluate``)."""
        return evaluate(
            depth, self.camera, self.views.points[k], self.views.normals[k], T, inlier_m,
            occluder_m or self.occluder_m, self._weights(k), self._edges(k),
            self.config.outline_margin_px,
        )  # fmt: skip

    def _align(
        self, depth: np.ndarray, T_guess: np.ndarray, occluder_m: float | None = None
    ) -> Alignment:
        """ICP from ``T_guess`` on the nearest view (with this frame's colour: depth and colour
        fused in each step), scored; ``occluder_m`` (default: the strict gap of a re-found pose)
        is how far in front a surface must be to count as occluder; only a followed pose (given
        ``occluder_m``) takes depth edges, which can make a wrong re-found one pass."""
        following, occluder_m = occluder_m is not None, occluder_m or self.occluder_m
        cfg = self.config
        fused = self._uses_color()
        if fused:
            settings = FusedSettings(cfg.gates_m, cfg.depth_sigma_m)
            T, _, information = fused_align(
                depth, self.camera, self.views, T_guess, self.region, self._color, settings,
                self._weights,
            )  # fmt: skip
            k = self.views.nearest(T)
            a = self._evaluate(depth, T, k, cfg.inlier_m, occluder_m)
        else:
            a = self._depth_align(depth, T_guess, cfg.gates_m, occluder_m, following)
            if self.views.nearest(a.T_cam_part) != self.views.nearest(T_guess):
                # the view may change with the pose: settle once, at the finest gate
                a = self._depth_align(depth, a.T_cam_part, cfg.gates_m[-1:], occluder_m, following)
            T = a.T_cam_part
            k = self.views.nearest(T)
        a.outline, a.outline_returns, a.outline_clear = outline_edges(
            depth, self.camera, self.views.contour_points[k], self.views.contour_outward[k], T,
            occluder_m=occluder_m,
        )  # fmt: skip
        if fused:
            a.color_score = self.color_score(depth, T)
            points = self.views.points[k] @ T[:3, :3].T + T[:3, 3]
            a.spread = pose_spread_m(information, points) / self.views.diameter_m
        else:
            a.depth_share, a.flat_outline = depth_share(
                depth, self.camera, self.views, k, T, self.part.symmetry, self.config, occluder_m
            )
        return a

    def _depth_align(
        self, depth: np.ndarray, T: np.ndarray, gates: tuple, occluder_m: float, edges: bool
    ) -> Alignment:
        a, cfg = self._icp(depth, T, gates, occluder_m), self.config
        if not (edges and cfg.depth_outline):
            return a
        T = self.depth_outline.refine(
            depth, self.views, a.T_cam_part, gates[-1], cfg.depth_sigma_m, self._weights
        )
        if T is None:  # the view's surface pins the pose by itself
            return a
        return self._evaluate(depth, T, self.views.nearest(T), cfg.inlier_m, occluder_m)

    def _icp(self, depth: np.ndarray, T: np.ndarray, gates: tuple[float, ...], occluder_m: float):
        k, widened = self.views.nearest(T), self.config is not self.settings
        return align(
            depth, self.camera, self.views.points[k], self.views.normals[k], T, gates,
            inlier_m=self.config.inlier_m, occluder_m=occluder_m, weights=self._weights(k),
            edge_distance_m=self._edges(k), edge_margin_px=self.config.outline_margin_px,
            front_m=occluder_m if widened else np.inf, keep_start=widened,
        )  # fmt: skip

    def _uses_color(self) -> bool:
        """Colour this frame, learned colours, and colours that tell the part from its
        surroundings (a colourless scene leaves depth alone)."""
        h = self.region.histograms
        return (
            self._color is not None
            and h.ready
            and h.separation() >= self.config.region.min_separation
        )

    def color_score(self, depth: np.ndarray, T: np.ndarray, lines=None) -> float | None:
        """The colour image's agreement with the outline at ``T`` (or of ``lines`` already
        located at scale 1), on the depth score's scale (``color_agreement`` maps to
        ``track_score``); None with too few usable lines."""
        if lines is None:
            lines = self.region.correspond(
                self._color, self.region.lines(self.views, T, depth, self.camera), 1
            )
        evidence = self.region.evidence(self._color, lines, scale=1)
        if evidence.lines < max(8, 0.25 * evidence.total):
            return None  # mostly hidden or outside the image: colour cannot say
        cfg = self.config
        return min(1.0, cfg.track_score * evidence.agreement / cfg.color_agreement)

    def _confirms(self, a: Alignment) -> bool:
        """Whether a followed pose is still the part's (``bars.tracking_failures``)."""
        return not tracking_failures(a, self.config)

    def update(self, depth_m: np.ndarray, color: np.ndarray | None = None) -> TrackResult:
        """Track the part in one frame: depth (H, W) float metres, 0 = no return, and
        optionally the colour image (h, w, 3) uint8 RGB of the colour camera."""
        started = time.perf_counter()
        depth = np.asarray(depth_m)
        if depth.shape != (self.camera.height, self.camera.width):
            raise InputError(
                None,
                "depth",
                f"frame is {depth.shape[1]}x{depth.shape[0]}, the camera {self.camera.width}x{self.camera.height}",
            )
        self._color = None if color is None else self._checked_color(color)
        guess = None if self.T is None else self.velocity @ self.T
        self._noise_m = frame_noise_m(depth, self.camera, self.views, guess)
        self.config = cfg = noise_config(self.settings, self._noise_m)
        if self._color is not None and self.status == "init" and not self.region.histograms.ready:
            # the given start pose teaches the part's colours (refined once the track holds)
            self.region.learn(
                self._color, self.region.lines(self.views, self.T, depth, self.camera)
            )
        result: Alignment | None = None
        was_tracking = self.status in ("tracking", "recovered")
        judged_as_followed = self.status in ("tracking", "init")  # else the stricter bars
        # continuing a confirmed track, an occluder may come close to the part (a gripper);
        # a pose not confirmed yet must keep a clear gap to anything in front of it
        margin = cfg.track_occluder_m if was_tracking or self.status == "init" else None
        if guess is not None:
            result = self._align(depth, guess, margin)
            # the motion may stop; noise-widened, an ICP slid under an occluder passes (fewer agree)
            widened = cfg is not self.settings
            if (widened or not self._confirms(result)) and not np.allclose(guess, self.T):
                alt = self._align(depth, self.T, margin)
                key = (lambda a: (self._confirms(a), a.inliers)) if widened else (lambda a: a.score)
                if key(alt) > key(result):
                    result = alt
            if not self._confirms(result):  # fast motion: widen the capture
                # a pose slid along a flat face agrees in depth as well as the right one; its
                # outline does not: rank by both
                for start in self._lateral_starts(depth, guess, margin):
                    wide = self._align(depth, start, margin)
                    if wide.score + wide.outline > result.score + result.outline:
                        result = wide
        following, found = False, None
        if judged_as_followed:
            good = result is not None and self._confirms(result)
        else:  # just re-found (its motion unknown) or lost: the stricter bars confirm it
            good = result is not None and trusted_recovery(result, cfg)
            if good and self._search is not None:  # followed in since found: turned over?
                result = self._search.turned_over(depth, result, self._align, self._align_nearest)
        if good:
            status = "tracking" if was_tracking or self.status == "init" else "recovered"
            following = True
        else:
            found = self._relocalize(depth)
            if found is not None and trusted_recovery(found, cfg):
                result, status, following = found, "recovered", True
            elif found is not None and trusted_recovery(found, cfg, in_image=False):
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
            # a given start's correction is no motion (the part may be still)
            moved = self.T is not None and status == "tracking" and self.status != "init"
            v = new_T @ np.linalg.inv(self.T) if moved else np.eye(4)
            self.velocity = v if np.linalg.norm(v[:3, 3]) < cfg.max_step_m else np.eye(4)
            self.T = new_T
        else:
            self.velocity = np.eye(4)
            if self.status == "init":
                self.T = None  # a given start that does not match the frame is not kept
        self.status = status
        self._lost_frames = self._lost_frames + 1 if status == "lost" else 0
        if self._color is not None and status in ("tracking", "recovered"):
            # a trusted pose teaches the part's colours; the first one replaces what the given
            # start (perhaps off by a few pixels) taught
            lines = self.region.lines(self.views, self.T, depth, self.camera)
            rate = cfg.region.learning_rate if self._colors_trusted else None
            self.region.learn(self._color, lines, rate)
            self._colors_trusted = True
        if self.background is not None:
            self.background.update(depth)
        T_out = self.T if self.T is not None else np.eye(4)
        ms = (time.perf_counter() - started) * 1e3
        details = {} if result is None else result.details()
        details["noise_mm"] = None if self._noise_m is None else round(1e3 * self._noise_m, 3)
        if status == "lost" and result is not None:
            # why the best pose of the frame is not reported (found poses face the strict bars)
            followed = result is not found and judged_as_followed
            details["refused"] = (
                tracking_failures(result, cfg) if followed else recovery_failures(result, cfg)
            )
        return TrackResult(status, score, T_out, ms, details)

    def _checked_color(self, color: np.ndarray) -> np.ndarray:
        color = np.asarray(color)
        cam = self.region.camera
        if color.ndim != 3 or color.shape[2] != 3 or color.dtype != np.uint8:
            raise InputError(
                None, "color", f"expected (H, W, 3) uint8 RGB, got {color.shape} {color.dtype}"
            )
        if color.shape[:2] != (cam.height, cam.width):
            raise InputError(
                None,
                "color",
                f"colour frame is {color.shape[1]}x{color.shape[0]}, the colour camera "
                f"{cam.width}x{cam.height}: give the colour camera's own intrinsics",
            )
        return color

    def _lateral_starts(
        self, depth: np.ndarray, guess: np.ndarray, occluder_m: float | None = None
    ) -> list[np.ndarray]:
        """Starts for a pose the prediction missed: projective ICP captures a sideways error of
        millimetres, so the best few of a grid of shifts across the line of sight, up to the
        distance moved since the last frame (at least 2 cm; 5 cm on a finer grid when just
        re-found), then nearest-neighbour ICP's (``nearest_icp``)."""
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
                e = self._evaluate(depth, T, k, 2 * self.config.inlier_m, occluder_m)
                scored.append((e.score, T))
        scored.sort(key=lambda st: -st[0])
        return [T for _, T in scored[:LATERAL_STARTS]] + [self._align_nearest(depth, guess)]

    def _align_nearest(self, depth: np.ndarray, T_guess: np.ndarray) -> np.ndarray:
        return align_nearest_around(depth, self.camera, self.views, T_guess)

    def _relocalize(self, depth: np.ndarray) -> Alignment | None:
        around = None
        if self.proposer is not None:
            proposals = self.proposer(depth, self._color)
            found = best_proposal(self._align, depth, proposals, self.config)
            if found is not None and trusted_recovery(found, self.config):
                return found
            if not proposals:
                return None  # the finder sees no part: nowhere to search
            around = proposal_centres(proposals, self.mesh)  # its search: only where it says
        if self._search is None:
            self._search = LostSearch(
                self.mesh, self.views, self.camera, self.settings, self.background
            )
        aligners = (self._align, self._align_nearest)
        return self._search.find(depth, self.T, self._lost_frames, *aligners, around, self._noise_m)


def score_pose(tracker: Tracker, depth: np.ndarray, T: np.ndarray) -> Alignment:
    """The tracker's score of a given pose on a frame (no alignment)."""
    return tracker._evaluate(depth, T, tracker.views.nearest(T), tracker.config.inlier_m)
