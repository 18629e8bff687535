"""Noise terms against values computed by hand: synthetic frames, no renderer needed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import ndimage

from sim2real.core.camera import CameraIntrinsics
from sim2real.sensors.frame import RenderedFrame
from sim2real.sensors.noise import (
    apply_axial_noise,
    apply_disparity_noise,
    apply_flying_pixels,
    apply_noise,
    axial_sigma_m,
    blob_pixels,
    disparity_sigma_m,
    distortion_field,
    edge_band,
    incidence_dropout_index,
    sample_missing_blobs,
)
from sim2real.sensors.presets import get_preset, preset_names
from sim2real.sensors.profile import (
    AxialNoise,
    DepthDistortion,
    DisparityNoise,
    EdgeDropout,
    FlyingPixels,
    IncidenceDropout,
    MissingBlobs,
    NoiseProfile,
    OutputQuantization,
    RangeLimits,
)

VGA = CameraIntrinsics(fx=525.0, fy=525.0, cx=319.5, cy=239.5, width=640, height=480)


def make_frame(
    depth_m: np.ndarray,
    incidence_rad: np.ndarray | None = None,
    edge: np.ndarray | None = None,
    camera: CameraIntrinsics | None = None,
) -> RenderedFrame:
    """A RenderedFrame from hand-made arrays (head-on incidence and no edges by default)."""
    depth = np.asarray(depth_m, np.float32)
    h, w = depth.shape
    if camera is None:
        camera = VGA.model_copy(update={"width": w, "height": h})
    normals = np.zeros((h, w, 3), np.float32)
    normals[depth > 0] = (0.0, 0.0, -1.0)
    return RenderedFrame(
        camera=camera,
        depth_m=depth,
        normal_cam=normals,
        incidence_rad=np.zeros((h, w), np.float32) if incidence_rad is None else incidence_rad,
        object_id=np.where(depth > 0, 0, -1).astype(np.int32),
        edge=np.zeros((h, w), bool) if edge is None else edge,
        shadow=np.zeros((h, w), bool),
    )


def tabletop_frame(camera: CameraIntrinsics) -> RenderedFrame:
    """A tilted floor (0.6 - 3 m, nothing beyond) with a box face at 0.6 m in front: valid and
    invalid areas, depth edges and a range of incidence angles."""
    rays = camera.pixel_rays().astype(np.float64)
    unit = rays / np.linalg.norm(rays, axis=2, keepdims=True)
    n = np.array([0.0, -0.8, -0.6])
    t = (np.array([0.0, 0.4, 1.0]) @ n) / (rays @ n)
    depth = np.where((t > 0) & (t < 3.0), t, 0.0)
    incidence = np.arccos(np.clip(np.abs(unit @ n), 0, 1))
    box = (np.abs(rays[..., 0] * 0.6 + 0.15) < 0.1) & (np.abs(rays[..., 1] * 0.6) < 0.12)
    depth[box] = 0.6
    incidence[box] = np.arccos(unit[box][:, 2])
    incidence[depth == 0] = 0
    gy = np.abs(np.diff(depth, axis=0)) > 0.05
    gx = np.abs(np.diff(depth, axis=1)) > 0.05
    edge = np.zeros(depth.shape, bool)
    edge[:-1] |= gy
    edge[1:] |= gy
    edge[:, :-1] |= gx
    edge[:, 1:] |= gx
    return make_frame(depth, incidence.astype(np.float32), edge & (depth > 0), camera)


def binomial_tol(p: float, n: int) -> float:
    """Five standard deviations of a fraction of n Bernoulli(p) draws."""
    return 5 * math.sqrt(p * (1 - p) / n)


# ----------------------------------------------------------------------------------- axial
@pytest.mark.parametrize(
    ("z", "theta_deg", "expected"),
    [
        # 0.0012 + 0.0019 (1.2 - 0.4)^2 = 0.002416 m; head-on, no angle term
        (1.2, 0.0, 0.002416),
        # theta = 45 deg: theta^2 / (pi/2 - theta)^2 = 1, so + 0.0001 / sqrt(1) = 0.0001;
        # 0.0012 + 0.0019 * 0.6^2 + 0.0001 = 0.001984 m
        (1.0, 45.0, 0.001984),
        # theta = 60 deg: (pi/3)^2 / (pi/6)^2 = 4; 0.0001 / sqrt(2) * 4 = 0.00028284;
        # 0.0012 + 0.0019 * 1.6^2 = 0.006064; total 0.00634684 m
        (2.0, 60.0, 0.00634684),
    ],
)
def test_axial_sigma_formula_and_samples(z: float, theta_deg: float, expected: float) -> None:
    cfg = AxialNoise()  # Nguyen 2012 Kinect constants
    n = 100_000
    zs = np.full(n, z, np.float32)
    theta = np.full(n, math.radians(theta_deg), np.float32)
    assert axial_sigma_m(zs[:1], theta[:1], cfg)[0] == pytest.approx(expected, rel=1e-5)
    noisy = apply_axial_noise(zs, theta, cfg, np.random.default_rng(1))
    # the sample std of 100k draws is within ~0.5 % of sigma; 5 % leaves room to spare
    assert np.std(noisy.astype(np.float64) - z) == pytest.approx(expected, rel=0.05)
    assert abs(np.mean(noisy.astype(np.float64) - z)) < 5 * expected / math.sqrt(n)


def test_axial_incidence_is_clamped_below_grazing() -> None:
    # at exactly 90 deg the formula divides by zero; clamped to 89 deg it stays finite:
    # (89/1)^2 = 7921 -> 0.0001 * 7921 = 0.7921 m at z = 1 (plus a + b c^2 terms)
    sigma = axial_sigma_m(np.ones(1, np.float32), np.full(1, np.pi / 2, np.float32), AxialNoise())
    expected = 0.0012 + 0.0019 * 0.36 + 0.0001 * 89.0**2
    assert np.isfinite(sigma[0]) and sigma[0] == pytest.approx(expected, rel=1e-3)


# ------------------------------------------------------------------------------- disparity
@pytest.mark.parametrize("z", [0.5, 1.0, 2.0, 3.0])
def test_disparity_depth_sigma_matches_first_order_formula(z: float) -> None:
    # D435 numbers: f = 446.8 px, B = 0.05 m, sigma 0.08 px. At 2 m: 4 * 0.08 / 22.34
    # = 0.01432 m. sigma_d / d <= 1.1 % up to 3 m, so the first-order formula holds to ~0.1 %.
    fx, baseline, sigma_px = 446.8, 0.05, 0.08
    expected = z * z * sigma_px / (fx * baseline)
    assert disparity_sigma_m(z, fx, baseline, sigma_px) == pytest.approx(expected)
    zs = np.full(100_000, z, np.float32)
    cfg = DisparityNoise(sigma_px=sigma_px)
    noisy = apply_disparity_noise(zs, fx, baseline, cfg, np.random.default_rng(2))
    assert np.std(noisy.astype(np.float64)) == pytest.approx(expected, rel=0.05)


def test_disparity_quantization_puts_depths_on_levels() -> None:
    # Kinect v1: f B = 525 * 0.075 = 39.375 px m, steps of 1/8 px: every output depth is
    # 39.375 / (k / 8) for an integer k, i.e. 8 * 39.375 / z is an integer
    fb, step = 525.0 * 0.075, 0.125
    z = np.random.default_rng(3).uniform(0.5, 4.0, 50_000).astype(np.float32)
    cfg = DisparityNoise(step_px=step)  # negative baseline: the sign only matters for shadows
    out = apply_disparity_noise(z, 525.0, -0.075, cfg, np.random.default_rng(0))
    k = fb / (out.astype(np.float64) * step)
    assert np.abs(k - np.round(k)).max() < 1e-3
    # the step in depth at 4 m is z^2 step / (f B) = 16 * 0.125 / 39.375 = 0.0508 m:
    # quantization moves no depth by more than half of it
    assert np.abs(out - z).max() <= 0.5 * 16 * step / fb + 1e-4
    assert len(np.unique(out)) < 8 * fb / 0.5  # at most one level per k up to k = 630


def test_disparity_noise_never_makes_negative_depth() -> None:
    # 1 px disparity noise at 20 m (d = 1.97 px) sometimes pushes d below 0: no return, not z < 0
    z = np.full(10_000, 20.0, np.float32)
    out = apply_disparity_noise(
        z, 525.0, 0.075, DisparityNoise(sigma_px=1.0), np.random.default_rng(0)
    )
    assert (out >= 0).all() and (out == 0).any() and np.isfinite(out).all()


# -------------------------------------------------------------------------------- dropouts
def test_incidence_dropout_follows_linear_ramp() -> None:
    # start 60, end 80: at 70 deg p = (70 - 60) / (80 - 60) = 0.5; below 60 none, above 80 all
    cfg = IncidenceDropout(start_deg=60, end_deg=80)
    n = 100_000
    theta = np.radians(np.repeat([50.0, 70.0, 85.0], n)).astype(np.float32)
    dropped = np.zeros(theta.size, bool)
    dropped[incidence_dropout_index(theta, cfg, np.random.default_rng(4))] = True
    assert not dropped[:n].any()
    assert dropped[2 * n :].all()
    assert dropped[n : 2 * n].mean() == pytest.approx(0.5, abs=binomial_tol(0.5, n))


def test_edge_band_equals_ndimage_dilation() -> None:
    # the shifted-OR dilation is checked against scipy's binary dilation with a square box
    edge = np.random.default_rng(5).random((60, 80)) < 0.01
    for w in (0, 1, 2, 5):
        expected = ndimage.binary_dilation(edge, structure=np.ones((2 * w + 1, 2 * w + 1)))
        assert np.array_equal(edge_band(edge, w), expected | edge)


def test_edge_dropout_only_in_band_with_right_fraction() -> None:
    # vertical edges every 10 columns, width 2: 5 of every 10 columns are in the band
    # (160k pixels of 320k); each band pixel drops with p = 0.3, nothing else drops
    h, w = 400, 800
    edge = np.zeros((h, w), bool)
    edge[:, 5::10] = True
    frame = make_frame(np.ones((h, w)), edge=edge)
    profile = NoiseProfile(
        name="t", source="test", edge_dropout=EdgeDropout(width_px=2, probability=0.3)
    )
    out = apply_noise(frame, profile, np.random.default_rng(6))
    band = edge_band(edge, 2)
    assert band.sum() == h * w // 2
    assert (out[~band] == 1.0).all()
    frac = (out[band] == 0).mean()
    assert frac == pytest.approx(0.3, abs=binomial_tol(0.3, int(band.sum())))


def test_missing_blob_count_is_poisson_with_the_rate() -> None:
    # 50 blobs / Mpx on 640x480 = 0.3072 Mpx -> 15.36 blobs per frame; the mean of 400 frames
    # has std sqrt(15.36 / 400) = 0.196
    cfg = MissingBlobs(rate_per_mpx=50, radius_px=4)
    rng = np.random.default_rng(7)
    counts = [sample_missing_blobs((480, 640), cfg, rng)[1].size for _ in range(400)]
    assert np.mean(counts) == pytest.approx(15.36, abs=5 * 0.196)
    radii = np.concatenate([sample_missing_blobs((480, 640), cfg, rng)[1] for _ in range(50)])
    assert radii.min() >= 2 and radii.max() <= 6  # uniform in [0.5, 1.5] x 4 px


def test_blob_pixels_are_discs() -> None:
    # a disc of radius 3 at a pixel centre holds the 29 lattice points with x^2 + y^2 <= 9
    idx = blob_pixels((20, 20), np.array([[10.0, 10.0]]), np.array([3.0]))
    assert idx.size == 29
    assert 10 * 20 + 10 in idx and 10 * 20 + 13 in idx and 13 * 20 + 13 not in idx
    # a disc over the corner keeps only the pixels inside the image: quarter of 29 plus axes
    assert blob_pixels((20, 20), np.array([[0.0, 0.0]]), np.array([3.0])).size == 11


def test_missing_blobs_drop_pixels_in_apply_noise() -> None:
    # 2000 blobs / Mpx of radius 5 on 200x200 (80 blobs): most of the image stays, some drops
    frame = make_frame(np.ones((200, 200)))
    profile = NoiseProfile(
        name="t", source="test", missing_blobs=MissingBlobs(rate_per_mpx=2000, radius_px=5)
    )
    out = apply_noise(frame, profile, np.random.default_rng(8))
    dropped = (out == 0).mean()
    # r ~ U(2.5, 7.5): E[r^2] = 25 + 25 / 12 = 27.08, so a blob covers ~85 px^2 and the
    # expected coverage is about 1 - exp(-80 * 85.1 / 40000) = 0.157 (a bit less: borders);
    # the Poisson count (sd ~9 of 80) moves it by ~0.02
    assert 0.09 < dropped < 0.23
    assert set(np.unique(out)) <= {0.0, 1.0}


# ----------------------------------------------------------------------------- flying pixels
def test_flying_pixels_mix_near_and_far_side() -> None:
    # a step from 1 m (left) to 2 m (right) at column 50; edge on both sides of the step;
    # with probability 1 every band pixel (columns 48..51 for width 1) takes U(1, 2)
    depth = np.ones((400, 100))
    depth[:, 50:] = 2.0
    edge = np.zeros(depth.shape, bool)
    edge[:, 49:51] = True
    frame = make_frame(depth, edge=edge)
    profile = NoiseProfile(
        name="t", source="test", flying_pixels=FlyingPixels(width_px=1, probability=1.0)
    )
    out = apply_noise(frame, profile, np.random.default_rng(9))
    band = edge_band(edge, 1)
    assert np.array_equal(out[~band], depth[~band])  # nothing moves away from the edge
    # columns 48 and 51 see only one side in their 3x3 window: lo == hi, unchanged
    assert (out[:, 48] == 1.0).all() and (out[:, 51] == 2.0).all()
    mixed = out[:, 49:51]
    assert (mixed >= 1.0).all() and (mixed <= 2.0).all()
    # uniform on [1, 2]: mean 1.5, std 0.289 / sqrt(800) = 0.0102 for the 800 mixed pixels
    assert mixed.mean() == pytest.approx(1.5, abs=0.05)
    # the image-level function does the same on its own, and nothing without edges
    direct = apply_flying_pixels(
        frame.depth_m, edge, profile.flying_pixels, np.random.default_rng(9)
    )
    assert np.array_equal(direct[~band], frame.depth_m[~band])
    assert (direct[:, 49:51] >= 1.0).all() and (direct[:, 49:51] <= 2.0).all()
    no_edge = np.zeros(edge.shape, bool)
    still = apply_flying_pixels(
        frame.depth_m, no_edge, profile.flying_pixels, np.random.default_rng(9)
    )
    assert np.array_equal(still, frame.depth_m)


# ------------------------------------------------------------------------------ distortion
def test_distortion_is_a_fixed_field_with_requested_std() -> None:
    # the field comes from field_seed only: two frames, two generators, same error
    cfg = DepthDistortion(relative_std=0.01, cell_px=32, field_seed=3)
    profile = NoiseProfile(name="t", source="test", distortion=cfg)
    frame = make_frame(np.full((120, 160), 2.0))
    a = apply_noise(frame, profile, np.random.default_rng(0))
    b = apply_noise(frame, profile, np.random.default_rng(12345))
    assert np.array_equal(a, b)
    rel = a.astype(np.float64) / 2.0 - 1.0
    # normalised over the image: mean 0, std exactly 1 %
    assert rel.std() == pytest.approx(0.01, rel=1e-3)
    assert abs(rel.mean()) < 1e-5
    # smooth: neighbouring pixels 1 px apart on a 32 px grid are almost equal
    assert np.corrcoef(rel[:, :-1].ravel(), rel[:, 1:].ravel())[0, 1] > 0.99
    other = distortion_field((120, 160), cfg.model_copy(update={"field_seed": 4}))
    assert not np.allclose(other, distortion_field((120, 160), cfg))


# ------------------------------------------------------------------- range and quantization
def test_range_limits_drop_returns_outside() -> None:
    depth = np.linspace(0.2, 5.0, 49).reshape(7, 7)  # steps of 0.1 m
    profile = NoiseProfile(name="t", source="test", range=RangeLimits(min_m=0.5, max_m=4.0))
    out = apply_noise(make_frame(depth), profile, np.random.default_rng(0))
    inside = (depth >= 0.5 - 1e-6) & (depth <= 4.0 + 1e-6)
    assert np.array_equal(out[inside], depth[inside].astype(np.float32))
    assert (out[~inside] == 0).all()


def test_output_quantization_rounds_to_unit() -> None:
    # 1 mm unit: every output is a whole number of millimetres, at most 0.5 mm away
    depth = np.random.default_rng(10).uniform(0.3, 3.0, (50, 50))
    profile = NoiseProfile(name="t", source="test", quantization=OutputQuantization(unit_m=0.001))
    out = apply_noise(make_frame(depth), profile, np.random.default_rng(0)).astype(np.float64)
    assert np.abs(out * 1000 - np.round(out * 1000)).max() < 1e-3
    assert np.abs(out - depth).max() <= 0.0005 + 1e-6


# ---------------------------------------------------------------------------- whole pipeline
FULL = NoiseProfile(
    name="all-terms",
    source="test",
    baseline_m=0.075,
    range=RangeLimits(min_m=0.5, max_m=4.0),
    axial=AxialNoise(),
    disparity=DisparityNoise(sigma_px=0.05, step_px=0.125),
    incidence_dropout=IncidenceDropout(start_deg=60, end_deg=85),
    edge_dropout=EdgeDropout(width_px=2, probability=0.3),
    flying_pixels=FlyingPixels(width_px=1, probability=0.3),
    missing_blobs=MissingBlobs(rate_per_mpx=20, radius_px=6),
    distortion=DepthDistortion(relative_std=0.003, cell_px=64),
    quantization=OutputQuantization(unit_m=0.001),
)


def test_same_seed_same_image_different_seed_different() -> None:
    frame = tabletop_frame(VGA.scaled(0.5))
    a = apply_noise(frame, FULL, np.random.default_rng(42))
    b = apply_noise(frame, FULL, np.random.default_rng(42))
    c = apply_noise(frame, FULL, np.random.default_rng(43))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
    assert a.dtype == np.float32 and a.shape == frame.depth_m.shape
    # noise never creates a return where the ideal render had none
    assert (a[frame.depth_m == 0] == 0).all()
    assert np.isfinite(a).all() and (a >= 0).all()


def test_ideal_profile_changes_nothing() -> None:
    frame = tabletop_frame(VGA.scaled(0.5))
    out = apply_noise(frame, get_preset("ideal").profile, np.random.default_rng(0))
    assert np.array_equal(out, frame.depth_m)


@pytest.mark.parametrize("name", preset_names())
def test_every_preset_runs_on_its_camera(name: str) -> None:
    preset = get_preset(name)
    frame = tabletop_frame(preset.camera)  # full resolution: disparity noise depends on fx
    out = apply_noise(frame, preset.profile, np.random.default_rng(0))
    assert out.dtype == np.float32 and np.isfinite(out).all()
    assert (out[frame.depth_m == 0] == 0).all()
    kept = out > 0
    r = preset.profile.range
    in_range = (frame.depth_m > 0) & (
        (frame.depth_m >= r.min_m) & (frame.depth_m <= r.max_m) if r is not None else True
    )
    # the short-range presets (D405 to 1 m) see only the near part of this 0.6-3 m scene
    assert in_range.mean() > 0.1
    assert kept.mean() > 0.5 * in_range.mean()
    # every preset's typical error on this 0.6-3 m scene is millimetres (measured medians
    # 2-4 mm; D435 at 3 m: 9 * 0.08 / (446.8 * 0.05) = 32 mm), not centimetres
    assert np.median(np.abs(out[kept] - frame.depth_m[kept])) < 0.01
