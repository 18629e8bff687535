"""Surface returns: tuned from frames of a part whose one side returns almost no depth, they must
predict the valid pixels of an unseen view, make the renderer drop that side, and let the
tracker confirm the part from the side that does return."""

import numpy as np
import pytest

from sim2real.core.errors import InputError
from sim2real.core.pose import invert_pose, look_at, make_pose, rpy_deg_to_matrix
from sim2real.models.tune_returns import (
    subdivided,
    tune_surface_returns,
    valid_pixel_agreement,
)
from sim2real.sensors.demo_part import machined_bracket
from sim2real.sensors.presets import get_preset
from sim2real.sensors.render import DepthRenderer
from sim2real.sensors.scene import Scene, SceneObject
from sim2real.sensors.surface_returns import SurfaceReturns

D435 = get_preset("realsense-d435")
CAMERA = D435.camera
BRACKET = machined_bracket()
CENTRE = (BRACKET.vertices.max(axis=0) + BRACKET.vertices.min(axis=0)) / 2
T_A = invert_pose(look_at([0.15, -0.25, 0.45], [0.0, 0.0, 0.02]))


def dark_material(dark_share_x: float, p_dark: float = 0.03) -> SurfaceReturns:
    """The 'real' part: vertices below a cut along x return with ``p_dark``, the rest always."""
    fine = subdivided(BRACKET, 0.004)
    x = fine.vertices[:, 0]
    cut = np.quantile(x, dark_share_x)
    p = np.where(x < cut, p_dark, 1.0)
    n = len(fine.vertices)
    return SurfaceReturns(fine, p, np.ones(n), np.zeros(n), np.ones(n))


def real_frame(material: SurfaceReturns, T, seed: int) -> np.ndarray:
    scene = Scene([SceneObject(material.mesh, T, returns=material)])
    return DepthRenderer(scene, CAMERA).render(D435.profile, seed=seed).depth_m


def views(n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [
        T_A @ make_pose(rpy_deg_to_matrix(*rng.uniform(-25, 25, 3)), [0, 0, 0]) for _ in range(n)
    ]


def test_the_renderer_drops_a_tuned_region_at_its_probability():
    n = len(subdivided(BRACKET, 0.004).vertices)
    fine = subdivided(BRACKET, 0.004)
    half = SurfaceReturns(fine, np.full(n, 0.5), np.ones(n), np.zeros(n), np.ones(n))
    plain = DepthRenderer(Scene([SceneObject(fine, T_A)]), CAMERA).render(D435.profile, seed=0)
    tuned = DepthRenderer(Scene([SceneObject(fine, T_A, returns=half)]), CAMERA).render(
        D435.profile, seed=0
    )
    assert np.allclose(tuned.frame.return_probability[tuned.frame.object_id == 0], 0.5)
    ratio = (tuned.depth_m > 0).sum() / (plain.depth_m > 0).sum()
    assert 0.45 < ratio < 0.55, ratio


def test_tuned_returns_predict_the_valid_pixels_of_an_unseen_view(tmp_path):
    material = dark_material(0.5)
    train = views(3)
    frames = [real_frame(material, T, seed=i) for i, T in enumerate(train)]
    result = tune_surface_returns(BRACKET, frames, CAMERA, train, refine=False)
    returns = result.returns
    # regions: the dark side is found dark, the other bright, where they were seen
    truth = material.probability_at_points(returns.mesh.vertices)
    seen = returns.confidence > 0.8
    assert seen.sum() > 100
    assert np.mean(np.abs(returns.return_probability[seen] - truth[seen]) < 0.3) > 0.85
    # a view the tuning never saw
    T_new = T_A @ make_pose(rpy_deg_to_matrix(10, -15, 30), [0.01, 0, 0])
    real = real_frame(material, T_new, seed=10)
    region = DepthRenderer(Scene([SceneObject(BRACKET, T_new)]), CAMERA).render(None).depth_m > 0
    untuned = DepthRenderer(Scene([SceneObject(BRACKET, T_new)]), CAMERA).render(D435.profile, 11)
    tuned = DepthRenderer(Scene([SceneObject(BRACKET, T_new, returns=returns)]), CAMERA).render(
        D435.profile, 11
    )
    before = valid_pixel_agreement(real, untuned.depth_m, region)
    after = valid_pixel_agreement(real, tuned.depth_m, region)
    assert after["agreement"] > before["agreement"] + 0.2, (before, after)
    # and the file round-trips
    returns.save(tmp_path / "returns.npz")
    back = SurfaceReturns.load(tmp_path / "returns.npz")
    assert np.array_equal(back.return_probability, returns.return_probability)
    assert np.array_equal(back.mesh.faces, returns.mesh.faces)


def test_a_mostly_dark_part_is_confirmed_only_with_its_tuned_returns():
    from sim2real.models.part import PreparedModel
    from sim2real.tracking.tracker import Tracker, TrackerConfig, score_pose

    material = dark_material(0.9, p_dark=0.0)
    train = views(3)
    frames = [real_frame(material, T, seed=i) for i, T in enumerate(train)]
    returns = tune_surface_returns(BRACKET, frames, CAMERA, train, refine=False).returns
    depth = real_frame(material, T_A, seed=20)
    start = T_A @ make_pose(rpy_deg_to_matrix(1, -1, 1), [0.002, -0.001, 0.0])
    plain = Tracker(BRACKET, CAMERA, TrackerConfig(views=200))
    tuned = Tracker(PreparedModel(BRACKET, returns=returns), CAMERA, TrackerConfig(views=200))
    # at the true pose, too few points return to confirm it unless the dark side is expected
    assert score_pose(plain, depth, T_A).score < plain.config.track_score
    assert score_pose(tuned, depth, T_A).score > 0.95
    tuned.initialize(start)
    result = tuned.update(depth)
    assert result.status == "tracking"
    assert np.linalg.norm(result.T_cam_part[:3, 3] - T_A[:3, 3]) < 0.003
    plain.initialize(start)
    result = plain.update(depth)
    if result.status != "lost":  # a global search may find it; it must then be right
        assert np.linalg.norm(result.T_cam_part[:3, 3] - T_A[:3, 3]) < 0.005


def test_bad_inputs(tmp_path):
    with pytest.raises(InputError, match="2 frames but 1 poses"):
        tune_surface_returns(BRACKET, [np.zeros((2, 2))] * 2, CAMERA, [T_A])
    bad = T_A.copy()
    bad[2, 3] = -0.4
    depth = np.zeros((CAMERA.height, CAMERA.width), np.float32)
    with pytest.raises(InputError, match="behind the camera"):
        tune_surface_returns(BRACKET, [depth], CAMERA, [bad], refine=False)
    (tmp_path / "x.npz").write_bytes(b"not a zip")
    with pytest.raises(InputError, match=r"x\.npz"):
        SurfaceReturns.load(tmp_path / "x.npz")
