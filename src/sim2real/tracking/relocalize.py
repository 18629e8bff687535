"""Finding a lost part again: where to search (around where it was last seen, what moved in
front of the static background, the whole frame), global registration there (FPFH features and
RANSAC, Open3D: ``GlobalSearch``); which re-found pose to trust is ``bars.trusted_recovery``."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.mesh_io import Mesh
from sim2real.models.symmetry import rotation_about
from sim2real.models.symmetry_detect import surface_moments
from sim2real.models.viewpoints import ViewpointModel
from sim2real.tracking.background import StaticBackground
from sim2real.tracking.bars import recovery_rank, trusted_recovery
from sim2real.tracking.config import TrackerConfig
from sim2real.tracking.icp import Alignment

MAX_SCENE_POINTS = 20_000
NEAR_DIAMETERS = 1.5
"""A search "near" a point looks at the frame's points within this many part diameters of it."""
NEAR_SEARCH_FRAMES = 3
"""With a static camera, the region where the part was last seen is searched only this many lost
frames; after that the part may be anywhere, and the foreground covers it."""
STILL_SHARE = 0.5
"""A re-found pose with less than this share of its points on what moved is on still things."""
FOREGROUND_TRIES = 6
"""RANSAC runs on the foreground: it is small (only what moved), so more draws are cheap."""
NOISE_VOXELS = 1.5
"""The search's voxel is at least this many standard deviations of the frame's depth noise:
finer, its normals and features are the noise's (the L515 preset, 5 mm std, the bracket leaving
the view and coming back, seeds 1-3: recall 62 / 93 / 91 % at 7.5 mm, 51 / 50 / 87 % at the
4.4 mm default, 89 / 71 / 91 % at 10 mm)."""
REVOXEL = np.log(1.25)
"""The search is rebuilt for a new voxel only when it differs by a quarter or more."""
FIRST_SEARCH_TRIES = 12
"""RANSAC runs of the very first search (no pose yet, no background): nothing to fall back on.
On the PCL milk scene 35-100 % of the runs end at the right pose, by the seed of the model's
samples (7 seeds), and up to 22 % at a flipped, slid carton that passes every bar (below the
right pose's score, so it wins only alone): 6 runs miss the right pose in up to 7.5 % of
searches, 12 in 0.6 % (0.65^12), for 1.2-1.8 s more on that frame (2.2-2.5 -> 3.5-4.1 s)."""


class LostSearch:
    """The tracker's search for a part it has lost, over the regions of ``regions`` (cheapest
    first), each candidate aligned by the tracker's own ICP (``align``, ``align_nearest``)."""

    def __init__(
        self,
        mesh: Mesh,
        views: ViewpointModel,
        camera: CameraIntrinsics,
        config: TrackerConfig,
        background: StaticBackground | None,
    ):
        self.views = views
        self.camera = camera
        self.config = config
        self.background = background
        self.mesh = mesh
        self.search = GlobalSearch(mesh, search_voxel_m(config, mesh, None))
        self.half_turns = half_turns(mesh)

    def regions(
        self,
        depth: np.ndarray,
        last_T: np.ndarray | None,
        lost_frames: int,
        around: np.ndarray | None = None,
    ) -> Iterator[tuple[np.ndarray, int]]:
        """(points, RANSAC tries) to search, cheapest first: around where the part was last seen
        (only just after losing it, when the camera is static), what stands in front of the
        static background (a small set: more tries), and, not on every lost frame, everything.
        With ``around`` ((k, 3) points where an outside finder, a detector, places the part)
        only near those: the finder has looked at the whole frame, and a search there finds
        look-alikes (on randomized clutter, 12 of 19 whole-frame re-finds of a thin triangle
        after its detector's proposals failed were wrong; benchmarks/RESULTS.md)."""
        diameter = self.views.diameter_m
        if around is not None:
            yield points_near(self.camera.backproject(depth), around, diameter), 2
            return
        frame_points = None
        static = self.background is not None and self.background.frames > 0
        if last_T is not None and (not static or lost_frames < NEAR_SEARCH_FRAMES):
            frame_points = self.camera.backproject(depth)
            yield points_near(frame_points, last_T[None, :3, 3], diameter), 2
        if static:
            yield self.background.points_around_foreground(depth, 0.25 * diameter), FOREGROUND_TRIES
            if lost_frames % self.config.full_search_every != 0:
                return
        # the very first search (no pose yet, e.g. --init auto) has no prior to fall back on:
        # more draws, so a near-symmetric wrong match does not come alone
        first = last_T is None and not static
        everything = frame_points if frame_points is not None else self.camera.backproject(depth)
        yield everything, FIRST_SEARCH_TRIES if first else 2

    def on_still_background(
        self, moved_mask: np.ndarray | None, last_T: np.ndarray | None, a: Alignment
    ) -> bool:
        """Whether a re-found pose, away from where the part was last seen, lies mostly on
        what has stood still since the camera started (a distractor box): the part has been
        seen elsewhere and has moved, so it cannot be there (with a static camera only).
        ``moved_mask``: the frame's ``StaticBackground.foreground_mask`` (None: no check)."""
        if moved_mask is None or last_T is None:
            return False
        T = a.T_cam_part
        if np.linalg.norm(T[:3, 3] - last_T[:3, 3]) < self.views.diameter_m:
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

    def find(
        self,
        depth: np.ndarray,
        last_T: np.ndarray | None,
        lost_frames: int,
        align: Callable[[np.ndarray, np.ndarray], Alignment],
        align_nearest: Callable[[np.ndarray, np.ndarray], np.ndarray],
        around: np.ndarray | None = None,
        noise_m: float | None = None,
    ) -> Alignment | None:
        """The best re-found pose (trusted ones end the search), or None. ``align(depth, T)``:
        the tracker's scored ICP from T; ``align_nearest(depth, T)``: its wider-capture start;
        ``around``: search only near these points (:meth:`regions`); ``noise_m``: the frame's
        depth noise std (``depth_noise.frame_noise_m``), which sets the least voxel."""
        cfg = self.config
        voxel = search_voxel_m(cfg, self.mesh, noise_m)
        if abs(np.log(voxel / self.search.voxel)) >= REVOXEL:
            self.search = GlobalSearch(self.mesh, voxel)
        static = self.background is not None and self.background.frames > 0
        moved_mask = self.background.foreground_mask(depth) if static else None  # once a frame
        best = None
        for points, tries in self.regions(depth, last_T, lost_frames, around):
            for T in self.search.candidates_in(points, tries):
                a = align(depth, T)
                if a.score < cfg.recover_score:  # a near miss: widen the capture
                    wide = align(depth, align_nearest(depth, T))
                    a = wide if recovery_rank(wide, cfg) > recovery_rank(a, cfg) else a
                if self.on_still_background(moved_mask, last_T, a):
                    continue
                if best is None or recovery_rank(a, cfg) > recovery_rank(best, cfg):
                    best = a
            if best is not None and trusted_recovery(best, cfg):
                break
        if best is not None and trusted_recovery(best, cfg, in_image=False):
            best = self.turned_over(depth, best, align, align_nearest)
        return best

    def turned_over(
        self,
        depth: np.ndarray,
        found: Alignment,
        align: Callable[[np.ndarray, np.ndarray], Alignment],
        align_nearest: Callable[[np.ndarray, np.ndarray], np.ndarray],
    ) -> Alignment:
        """``found`` or, where one ranks higher, the pose aligned from one of its half-turns
        about the part's principal axes (``half_turns``). A nearly symmetric part matches its
        features turned over as well as right (the bracket coming back into view: 180 deg
        and 10 mm off, scoring 0.995 and 0.917 on two frames against 1.0 for the true pose,
        then reported `tracking`): a turned start lies centimetres off, and the wide capture
        (``align_nearest``) brings it in. A turned pose must pass the bars ``found`` passed
        (but the share inside the image); an exactly symmetric part keeps ``found`` (ties)."""

        def rank(a: Alignment) -> tuple[float, int]:
            return recovery_rank(a, self.config), a.inliers  # scores of 1.0 tie: more agree

        best = found
        for turn in self.half_turns:
            a = align(depth, align_nearest(depth, found.T_cam_part @ turn))
            if rank(a) > rank(best) and trusted_recovery(a, self.config, in_image=False):
                best = a
        return best


class GlobalSearch:
    def __init__(self, mesh: Mesh, voxel_m: float | None = None, seed: int = 0):
        import open3d as o3d

        self.o3d = o3d
        o3d.utility.set_verbosity_level(o3d.utility.VerbosityLevel.Error)  # RANSAC warns per try
        self.diameter = float(np.linalg.norm(mesh.vertices.max(axis=0) - mesh.vertices.min(axis=0)))
        self.voxel = voxel_m or default_search_voxel_m(self.diameter)
        legacy = o3d.geometry.TriangleMesh(
            o3d.utility.Vector3dVector(mesh.vertices), o3d.utility.Vector3iVector(mesh.faces)
        )
        legacy.compute_triangle_normals()
        # Open3D's own generator draws the model's samples where sample_points_uniformly takes
        # no seed (0.20 does not): seeded first, or each process gets another model cloud,
        # other features and another share of right matches (49-94 % of RANSAC runs on the
        # PCL milk scene, between processes). Seeded once: each later search draws new samples.
        o3d.utility.random.seed(seed)
        cloud = (
            legacy.sample_points_uniformly(20_000, use_triangle_normal=True, seed=seed)
            if _takes_seed(legacy)
            else legacy.sample_points_uniformly(20_000, use_triangle_normal=True)
        )
        self.model = cloud.voxel_down_sample(self.voxel)
        self.model_features = self._features(self.model)
        self.seed = seed

    def _features(self, cloud):
        o3d = self.o3d
        return o3d.pipelines.registration.compute_fpfh_feature(
            cloud, o3d.geometry.KDTreeSearchParamHybrid(radius=5 * self.voxel, max_nn=100)
        )

    def candidates(
        self, depth: np.ndarray, camera: CameraIntrinsics, centre: np.ndarray | None, tries: int = 2
    ) -> list[np.ndarray]:
        """Poses T_cam_part proposed by RANSAC on feature matches (best first), from the frame's
        points (within 1.5 diameters of ``centre`` when given)."""
        points = camera.backproject(depth)
        if centre is not None:
            points = points_near(points, np.reshape(centre, (1, 3)), self.diameter)
        return self.candidates_in(points, tries)

    def candidates_in(self, points: np.ndarray, tries: int = 2) -> list[np.ndarray]:
        """Poses T_cam_part proposed by RANSAC, searching only ``points`` ((N, 3), camera frame)."""
        o3d = self.o3d
        if len(points) < 50:
            return []
        scene = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(points)).voxel_down_sample(
            self.voxel
        )
        if len(scene.points) > MAX_SCENE_POINTS:
            scene = scene.random_down_sample(MAX_SCENE_POINTS / len(scene.points))
        if len(scene.points) < 30:
            return []
        scene.estimate_normals(
            o3d.geometry.KDTreeSearchParamHybrid(radius=2.5 * self.voxel, max_nn=30)
        )
        scene.orient_normals_towards_camera_location(np.zeros(3))
        features = self._features(scene)
        reg = o3d.pipelines.registration
        out = []
        for _ in range(tries):
            result = reg.registration_ransac_based_on_feature_matching(
                self.model, scene, self.model_features, features, True, 1.5 * self.voxel,
                reg.TransformationEstimationPointToPoint(False), 3,
                [reg.CorrespondenceCheckerBasedOnEdgeLength(0.9), reg.CorrespondenceCheckerBasedOnDistance(1.5 * self.voxel)],
                reg.RANSACConvergenceCriteria(20_000, 0.999),
            )  # fmt: skip
            if result.fitness > 0:
                out.append(np.asarray(result.transformation))
        return out


def default_search_voxel_m(diameter_m: float) -> float:
    """3 % of the part's diameter (bounding-box diagonal), at least 3 mm."""
    return max(0.003, 0.03 * diameter_m)


def search_voxel_m(config: TrackerConfig, mesh: Mesh, noise_m: float | None) -> float:
    """The global search's voxel: as configured (default 3 % of the diameter, at least 3 mm),
    or ``NOISE_VOXELS`` times the depth noise std ``noise_m`` where that is coarser."""
    voxel = config.search_voxel_m or default_search_voxel_m(float(np.linalg.norm(mesh.extent_m)))
    if noise_m is None or config.noise_sigmas <= 0:
        return voxel
    return max(voxel, NOISE_VOXELS * noise_m)


def half_turns(mesh: Mesh) -> np.ndarray:
    """(3, 4, 4) half-turns (part frame) about the principal axes of the part's surface, through
    its centroid, which a symmetry keeps in place."""
    centre, second_moment = surface_moments(mesh.vertices, mesh.faces)
    axes = np.linalg.eigh(second_moment)[1].T
    return np.array([rotation_about(axis, centre, np.pi) for axis in axes])


def points_near(points: np.ndarray, centres: np.ndarray, diameter_m: float) -> np.ndarray:
    """The ``points`` (N, 3) within ``NEAR_DIAMETERS`` part diameters of any of ``centres``."""
    near = np.zeros(len(points), bool)
    for centre in centres:
        near |= np.linalg.norm(points - centre, axis=1) < NEAR_DIAMETERS * diameter_m
    return points[near]


def _takes_seed(mesh) -> bool:
    try:
        mesh.sample_points_uniformly(10, seed=0)
        return True
    except TypeError:
        return False
