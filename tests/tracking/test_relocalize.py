"""The lost-part search of ``tracking.relocalize`` piece by piece: the bars a re-found pose must
pass, where the search looks (and how hard) with and without a static background, which
re-found poses lie on what never moved, the order in which candidates are kept, and the
global registration itself on the visible side of a box."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import trimesh
from scipy.spatial import cKDTree

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.mesh_io import validate_mesh
from sim2real.core.pose import make_pose, rpy_deg_to_matrix
from sim2real.models.viewpoints import ViewpointModel
from sim2real.tracking.background import StaticBackground
from sim2real.tracking.bars import (
    recovery_failures,
    recovery_rank,
    tracking_failures,
    trusted_recovery,
)
from sim2real.tracking.config import TrackerConfig
from sim2real.tracking.icp import Alignment
from sim2real.tracking.relocalize import (
    FIRST_SEARCH_TRIES,
    FOREGROUND_TRIES,
    NOISE_VOXELS,
    GlobalSearch,
    LostSearch,
    search_voxel_m,
)

CFG = TrackerConfig()
"""recover_score 0.9, recover_outline 0.45, recover_support 0.5, recover_in_image 0.8."""
CAMERA = CameraIntrinsics(fx=100, fy=100, cx=31.5, cy=23.5, width=64, height=48)
BOX = trimesh.creation.box((0.1, 0.06, 0.04))


def alignment(score, outline=1.0, support=1.0, in_image=1.0, x=0.0) -> Alignment:
    """An ICP result with these shares (of 1000 model points, all expected to return);
    ``x``: the pose's translation along x, to tell poses apart."""
    inliers = round(1000 * score)
    return Alignment(
        make_pose(np.eye(3), [x, 0.0, 0.5]), inliers=inliers, behind=1000 - inliers, in_front=0,
        no_return=0, visible=round(1000 * in_image), rms_m=0.001, points=1000, outline=outline,
        facing=1000, expected=1000.0, expected_visible=inliers / support,
    )  # fmt: skip


def test_a_recovered_pose_must_pass_every_bar():
    good = alignment(0.95, outline=0.6, support=0.7, in_image=0.9)
    assert good.score == pytest.approx(0.95) and good.support == pytest.approx(0.7)
    assert trusted_recovery(good, CFG)
    assert trusted_recovery(alignment(0.9, 0.45, 0.5, 0.8), CFG)  # every bar met exactly
    assert not trusted_recovery(alignment(0.89, 0.6, 0.7, 0.9), CFG)
    assert not trusted_recovery(alignment(0.95, 0.44, 0.7, 0.9), CFG)
    assert not trusted_recovery(alignment(0.95, 0.6, 0.49, 0.9), CFG)
    half_out = alignment(0.95, 0.6, 0.7, 0.79)
    assert not trusted_recovery(half_out, CFG)
    assert trusted_recovery(half_out, CFG, in_image=False)  # the one bar that can be waived


def test_the_bars_a_pose_misses_are_named():
    good = alignment(0.95, outline=0.6, support=0.7, in_image=0.9)
    assert recovery_failures(good, CFG) == [] and tracking_failures(good, CFG) == []
    weak = alignment(0.8, outline=0.3, support=0.4, in_image=0.5)
    assert recovery_failures(weak, CFG) == ["score", "outline", "support", "in_image"]
    assert tracking_failures(weak, CFG) == ["score", "outline"]
    # an outline beside missing data only, and a pose the evidence leaves loose
    good.outline_returns, good.spread = 0.3, 0.2
    assert recovery_failures(good, CFG) == ["outline_returns", "pose_spread"]
    assert tracking_failures(good, CFG) == ["pose_spread"]
    # an outline that is an edge wherever it can be judged (0.6), but 30 % of it is beside a
    # nearer surface: found again, the hidden part counts as unconfirmed (0.6 x 0.7 = 0.42 <
    # 0.45); followed, it is skipped
    good.outline_returns, good.spread, good.outline_clear = 1.0, 0.0, 0.7
    assert recovery_failures(good, CFG) == ["outline"]
    assert recovery_failures(good, CFG, in_image=False) == ["outline"]
    assert tracking_failures(good, CFG) == []
    good.outline_clear = 0.8  # 0.48: confirmed
    assert recovery_failures(good, CFG) == []


def test_an_outline_that_is_no_edge_ranks_below_every_other():
    assert recovery_rank(alignment(0.95, outline=0.6), CFG) == pytest.approx(0.95)
    # 0.99 on the score but its outline (0.3) is no edge in the frame: 0.99 - 1
    assert recovery_rank(alignment(0.99, outline=0.3), CFG) == pytest.approx(-0.01)
    assert recovery_rank(alignment(0.2, outline=0.5), CFG) > recovery_rank(
        alignment(0.99, outline=0.3), CFG
    )


# --- where the search looks -----------------------------------------------------------------

WALL = np.full((48, 64), 1.0, np.float32)
"""The empty scene: a wall 1 m away."""
FRAME = WALL.copy()
FRAME[16:32, 28:36] = 0.8
"""The part: a 16 x 8 px block (rows 16-31, columns 28-35) 0.8 m away (12.8 x 6.4 cm), 0.2 m
before the wall."""
LAST_T = make_pose(np.eye(3), [0.0, 0.0, 0.8])
"""Where the part was last seen: at the block's centre."""


def one_view(diameter_m: float = 0.1) -> ViewpointModel:
    """A single view: a 5 x 5 grid of points 1 cm apart in the part's xy plane."""
    g = np.stack(np.meshgrid(np.linspace(-0.02, 0.02, 5), np.linspace(-0.02, 0.02, 5)), -1)
    points = np.concatenate([g.reshape(-1, 2), np.zeros((25, 1))], axis=1)[None].astype(np.float32)
    normals = np.zeros_like(points)
    normals[..., 2] = -1
    contour = points[:, :4]
    return ViewpointModel(
        np.array([[0.0, 0.0, -1.0]]), points, normals, contour, contour, np.array([25], np.int32),
        np.zeros(3), diameter_m, 8,
    )  # fmt: skip


@pytest.fixture(scope="module")
def base_search() -> LostSearch:
    mesh = validate_mesh(BOX.vertices, BOX.faces, "box")
    return LostSearch(mesh, one_view(), CAMERA, CFG, None)


def test_the_search_voxel_coarsens_with_the_depth_noise_only(base_search):
    """The box's default voxel (3 % of its 12.3 cm diagonal, 3.7 mm) holds for a quiet frame;
    a frame of 5 mm noise is searched at 1.5 x 5 mm, rebuilt once, and back when quiet."""
    mesh, default = base_search.mesh, base_search.search.voxel
    assert default == pytest.approx(0.03 * np.linalg.norm(BOX.extents))
    assert search_voxel_m(CFG, mesh, None) == default
    assert search_voxel_m(CFG, mesh, 0.001) == default
    assert search_voxel_m(CFG, mesh, 0.005) == pytest.approx(NOISE_VOXELS * 0.005)
    off = CFG.model_copy(update={"noise_sigmas": 0.0})
    assert search_voxel_m(off, mesh, 0.005) == default
    s = copy.copy(base_search)
    nothing = np.zeros((CAMERA.height, CAMERA.width))
    assert s.find(nothing, None, 1, None, None, noise_m=0.005) is None
    assert s.search.voxel == pytest.approx(0.0075)
    assert s.find(nothing, None, 1, None, None, noise_m=None) is None
    assert s.search.voxel == default


def with_background(search: LostSearch, frames: list[np.ndarray], every: int = 10) -> LostSearch:
    s = copy.copy(search)
    s.config = CFG.model_copy(update={"full_search_every": every})
    s.background = StaticBackground(CAMERA)
    for f in frames:
        s.background.update(f)
    return s


def regions(search: LostSearch, last_T, lost_frames: int) -> list[tuple[int, int]]:
    """(points, tries) of each region searched."""
    return [(len(p), tries) for p, tries in search.regions(FRAME, last_T, lost_frames)]


def test_a_moving_camera_searches_near_the_last_pose_then_everywhere(base_search):
    # no background: near the last pose (within 1.5 diameters = 15 cm: the block's 128
    # pixels, the wall is 20 cm behind), then all 48 x 64 returns; 2 RANSAC tries each
    assert regions(base_search, LAST_T, 0) == [(128, 2), (48 * 64, 2)]
    near = next(base_search.regions(FRAME, LAST_T, 0))[0]
    assert np.allclose(near[:, 2], 0.8)
    # never seen (first search, e.g. --init auto): the whole frame, with more tries
    assert FIRST_SEARCH_TRIES > FOREGROUND_TRIES > 2
    assert regions(base_search, None, 0) == [(48 * 64, FIRST_SEARCH_TRIES)]


def test_a_static_camera_searches_what_moved_and_the_whole_frame_only_now_and_then(base_search):
    s = with_background(base_search, [WALL], every=10)
    foreground = len(s.background.points_around_foreground(FRAME, 0.25 * 0.1))
    assert 0 < foreground < 48 * 64
    # just lost: near, then what moved (more tries), then all (lost frame 0 is a 10th)
    assert regions(s, LAST_T, 0) == [(128, 2), (foreground, FOREGROUND_TRIES), (48 * 64, 2)]
    # 3 lost frames on: the part may be anywhere, the near search stops; not a 10th frame
    assert regions(s, LAST_T, 3) == [(foreground, FOREGROUND_TRIES)]
    assert regions(s, LAST_T, 10) == [(foreground, FOREGROUND_TRIES), (48 * 64, 2)]
    assert regions(s, None, 0) == [(foreground, FOREGROUND_TRIES), (48 * 64, 2)]
    # a background that has seen no frame yet is none
    assert regions(with_background(base_search, []), LAST_T, 5) == [(128, 2), (48 * 64, 2)]


def test_a_pose_far_away_on_what_never_moved_is_rejected(base_search):
    # the wall never moved (background from the empty scene), the block did. A pose at
    # (x, 0, 0.5) m projects the view's 5 x 5 points (1 cm apart) 2 px apart around column
    # 31.5 + 200 x, every row on the block: x = 17.5 mm puts columns 31, 33, 35 of 31..39 on
    # it (a share of 0.6 on what moved: kept), x = 22.5 mm only 32, 34 of 32..40 (0.4: on
    # still things, rejected)
    s = with_background(base_search, [WALL])
    moved = s.background.foreground_mask(FRAME)
    still = np.zeros_like(moved)
    far_last = make_pose(np.eye(3), [0.3, 0.2, 0.8])  # last seen over 40 cm from the poses
    three_fifths, two_fifths = (make_pose(np.eye(3), [x, 0.0, 0.5]) for x in (0.0175, 0.0225))
    assert not s.on_still_background(moved, far_last, _at(three_fifths))
    assert s.on_still_background(moved, far_last, _at(two_fifths))
    # within a diameter (10 cm) of where it was last seen: never rejected
    assert not s.on_still_background(still, LAST_T, _at(make_pose(np.eye(3), [0.05, 0, 0.8])))
    # entirely outside the image, or no background or no last pose: nothing to judge
    assert not s.on_still_background(still, far_last, _at(make_pose(np.eye(3), [5.0, 0, 0.8])))
    assert not s.on_still_background(None, far_last, _at(two_fifths))
    assert not s.on_still_background(still, None, _at(two_fifths))


def _at(T: np.ndarray) -> Alignment:
    a = alignment(0.95)
    a.T_cam_part = T
    return a


# --- which candidate is kept ----------------------------------------------------------------


class Proposals:
    """A stand-in for ``GlobalSearch``: the poses proposed for each region, in turn."""

    def __init__(self, *per_region: list[float]):
        self.per_region = list(per_region)
        self.calls: list[int] = []

    def candidates_in(self, points, tries):
        self.calls.append(tries)
        xs = self.per_region.pop(0) if self.per_region else []
        return [make_pose(np.eye(3), [x, 0.0, 0.5]) for x in xs]


def run_find(base_search, proposals: Proposals, results: dict[float, Alignment], turns=()):
    """``find`` with ICP results looked up by the pose's x (``align_nearest`` adds 100); the
    found pose's half-turns replaced by ``turns`` (x shifts: none, unless given)."""
    s = copy.copy(base_search)
    proposals.voxel = base_search.search.voxel  # a quiet frame: no new voxel
    s.search = proposals
    s.half_turns = [make_pose(np.eye(3), [dx, 0.0, 0.0]) for dx in turns]
    aligned = []

    def align(depth, T):
        aligned.append(round(T[0, 3], 6))
        return results[round(T[0, 3], 6)]

    def align_nearest(depth, T):
        return make_pose(np.eye(3), [T[0, 3] + 100, 0.0, 0.5])

    return s.find(FRAME, LAST_T, 0, align, align_nearest), aligned


def test_a_trusted_pose_ends_the_search_after_its_region(base_search):
    # near region: x=1 scores 0.92 but its outline is no edge; x=2 is trusted. The whole
    # frame (second region) is never searched
    proposals = Proposals([1.0, 2.0], [3.0])
    results = {1.0: alignment(0.92, outline=0.3, x=1.0), 2.0: alignment(0.95, 0.6, x=2.0)}
    best, aligned = run_find(base_search, proposals, results)
    assert best is results[2.0]
    assert proposals.calls == [2] and aligned == [1.0, 2.0]


def test_a_pose_to_be_trusted_is_checked_turned_over(base_search):
    """x=2 is trusted; aligned from its "half-turns" (x + 10, 20, 30, then the wide capture:
    + 100) it scores 0.97 at x=112: that is returned (0.99 at x=132 misses the support bar).
    An untrusted best is not checked."""
    proposals = Proposals([2.0], [])
    results = {
        2.0: alignment(0.95, 0.6, x=2.0),
        112.0: alignment(0.97, 0.6, x=112.0),
        122.0: alignment(0.96, 0.6, x=122.0),
        132.0: alignment(0.99, 0.6, support=0.3, x=132.0),
    }
    best, aligned = run_find(base_search, proposals, results, turns=(10.0, 20.0, 30.0))
    assert best is results[112.0] and aligned == [2.0, 112.0, 122.0, 132.0]
    untrusted = {2.0: alignment(0.95, outline=0.3)}
    best, aligned = run_find(base_search, Proposals([2.0], []), untrusted, turns=(10.0,))
    assert best is untrusted[2.0] and aligned == [2.0]


def test_without_a_trusted_pose_the_best_ranked_of_all_regions_is_returned(base_search):
    # x=1: 0.95 with its outline no edge (rank -0.05); x=3 (whole frame): 0.91 but support
    # 0.3 (untrusted, rank 0.91): the best, returned after every region was searched
    proposals = Proposals([1.0], [3.0])
    results = {1.0: alignment(0.95, outline=0.3), 3.0: alignment(0.91, support=0.3)}
    best, _ = run_find(base_search, proposals, results)
    assert best is results[3.0] and not trusted_recovery(best, CFG)
    assert proposals.calls == [2, 2]
    assert run_find(base_search, Proposals([], []), {})[0] is None


def test_a_near_miss_is_aligned_again_from_a_wider_capture(base_search):
    # x=1 scores 0.6 (< 0.9): ICP again from align_nearest's start (x=101), which scores 0.95
    # and replaces it; x=2 scores 0.5, its wider retry 0.4: the first result stays
    proposals = Proposals([1.0, 2.0], [])
    results = {
        1.0: alignment(0.6),
        101.0: alignment(0.95, 0.6),
        2.0: alignment(0.5),
        102.0: alignment(0.4),
    }
    best, aligned = run_find(base_search, proposals, results)
    assert best is results[101.0]
    assert aligned == [1.0, 101.0, 2.0, 102.0]
    # alone, the worse retry is not kept either
    best, _ = run_find(base_search, Proposals([2.0], []), results)
    assert best is results[2.0]
    # a first result above the bar is not retried
    best, aligned = run_find(base_search, Proposals([1.0], []), {1.0: alignment(0.93, 0.2)})
    assert aligned == [1.0]


def test_poses_on_still_background_are_skipped(base_search):
    s = copy.copy(base_search)
    s.on_still_background = lambda mask, last_T, a: a.T_cam_part[0, 3] == 2.0
    proposals = Proposals([1.0, 2.0], [])
    results = {1.0: alignment(0.92, outline=0.3, x=1.0), 2.0: alignment(0.97, 0.6, x=2.0)}
    best, _ = run_find(s, proposals, results)
    assert best is results[1.0]  # the trusted x=2 lies on what never moved


# --- global registration ---------------------------------------------------------------------


def test_global_search_finds_a_box_from_its_visible_side():
    # the camera-facing side of a 10 x 6 x 4 cm box at 0.5 m (the points a depth frame would
    # hold): the best RANSAC proposal puts the model within a few voxels (3.7 mm) of the
    # truth, by the symmetric mean distance (a box matches itself turned over); a pose on
    # the wrong side or inverted is tens of centimetres off
    mesh = validate_mesh(BOX.vertices, BOX.faces, "box")
    search = GlobalSearch(mesh)
    assert search.voxel == pytest.approx(0.03 * np.linalg.norm([0.1, 0.06, 0.04]))
    T = make_pose(rpy_deg_to_matrix(20, -30, 40), [0.02, -0.01, 0.5])
    points, faces = trimesh.sample.sample_surface_even(BOX, 6000, seed=0)
    seen = points @ T[:3, :3].T + T[:3, 3]
    facing = np.einsum("ij,ij->i", BOX.face_normals[faces] @ T[:3, :3].T, seen) < 0
    proposals = search.candidates_in(seen[facing], tries=2)
    assert 1 <= len(proposals) <= 2
    model = np.asarray(search.model.points)
    truth = cKDTree(model @ T[:3, :3].T + T[:3, 3])
    adds_mm = [1e3 * truth.query(model @ P[:3, :3].T + P[:3, 3])[0].mean() for P in proposals]
    assert min(adds_mm) < 25.0, adds_mm
    assert search.candidates_in(seen[facing][:49]) == []  # fewer than 50 points: no search


def test_the_model_cloud_is_the_same_whatever_open3d_drew_before():
    # the model's samples come from Open3D's own generator where sample_points_uniformly takes
    # no seed: a second search of the same mesh, after the first drew from that generator
    # (RANSAC, a random down-sampling), must hold the same cloud, or its features, and the
    # share of right matches, change from one process or run to the next
    import open3d as o3d

    mesh = validate_mesh(BOX.vertices, BOX.faces, "box")
    first = GlobalSearch(mesh)
    cloud = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(np.asarray(first.model.points)))
    cloud.random_down_sample(0.5)
    second = GlobalSearch(mesh)
    assert np.array_equal(np.asarray(first.model.points), np.asarray(second.model.points))
    other = GlobalSearch(mesh, seed=1)
    assert not np.array_equal(np.asarray(first.model.points), np.asarray(other.model.points))
