"""The detector's network: output shapes, its input, a few steps that lower the loss."""

import numpy as np
import pytest
import torch
from detect.standin_frames import MESH, StandinRenderer

from sim2real.detect.keypoints import bbox_corners
from sim2real.detect.network import (
    NetworkConfig,
    build_network,
    network_input,
    reference_depth,
)
from sim2real.detect.sim_data import render_frames
from sim2real.detect.targets import PartGeometry, detector_loss, sample_targets
from sim2real.detect.train import OptimConfig, fit_network

GEOMETRY = PartGeometry(MESH.centre_m, bbox_corners(MESH), np.eye(4)[None])


@pytest.mark.parametrize("inp", ["rgb", "rgbd"])
def test_output_shapes_at_stride_eight(inp):
    cfg = NetworkConfig(input=inp, width=8, height_px=240, width_px=320)
    net = build_network(cfg).eval()
    rgb = torch.zeros((2, 240, 320, 3), dtype=torch.uint8)
    x = network_input(rgb, torch.ones((2, 240, 320)), cfg)
    assert x.shape == (2, 3 if inp == "rgb" else 5, 240, 320)
    with torch.no_grad():
        out = net(x)
    assert out["heat"].shape == (2, 1, 30, 40) and out["offset"].shape == (2, 2, 30, 40)
    assert out["keypoints"].shape == (2, 16, 30, 40) and out["dz"].shape == (2, 1, 30, 40)


def test_the_input_is_normalised_channels_last_with_depth_and_its_mask():
    rgb = torch.zeros((2, 16, 32, 3), dtype=torch.uint8)
    rgb[..., 0] = 255
    depth = torch.zeros((2, 16, 32))
    depth[:, :, :8] = 1.3  # a quarter of the pixels with depth
    x = network_input(rgb, depth, NetworkConfig(input="rgbd"))
    assert x.shape == (2, 5, 16, 32) and x.is_contiguous(memory_format=torch.channels_last)
    assert torch.all(x[:, 0] == 2.0) and torch.all(x[:, 1:3] == -2.0)  # (v / 255 - 0.5) / 0.25
    assert torch.allclose(x[:, 3, :, :8], torch.tensor(1.0)) and torch.all(x[:, 3, :, 8:] == 0)
    assert torch.all(x[:, 4, :, :8] == 1) and torch.all(x[:, 4, :, 8:] == 0)  # the valid mask
    only_rgb = network_input(rgb, depth, NetworkConfig(input="rgb"))
    assert torch.equal(only_rgb, x[:, :3]) and only_rgb.is_contiguous(
        memory_format=torch.channels_last
    )


def test_reference_depth_is_the_local_mean_of_valid_pixels():
    depth = torch.zeros((1, 64, 64))
    depth[0, :, :32] = 0.5  # left half at 0.5 m, right half without depth
    z, valid = reference_depth(depth)  # 3 x 3 cells of 8 px: a 24 px window per cell
    assert z.shape == (1, 1, 8, 8)
    assert torch.allclose(z[0, 0, :, 0], torch.tensor(0.5))  # only valid pixels averaged
    assert float(valid[0, 0, 3, 7]) == 0.0 and float(valid[0, 0, 3, 1]) == pytest.approx(1.0)
    assert float(valid[0, 0, 3, 4]) == pytest.approx(0.0 + 8 / 24)  # window 24-48: 8 px valid


def test_targets_put_the_peak_on_the_projected_centre():
    frames = render_frames(StandinRenderer(), [3])
    lab = frames.labels[0]
    t = sample_targets(lab, GEOMETRY)
    c = lab.T_cam_part[:3, :3] @ GEOMETRY.centre_part_m + lab.T_cam_part[:3, 3]
    uv = (lab.K @ c)[:2] / c[2]
    i, j = np.unravel_index(np.argmax(t["heat"][0]), t["heat"][0].shape)
    assert (j, i) == (int(uv[0] // 8), int(uv[1] // 8))
    assert np.allclose(8 * (np.array([j, i]) + t["offset"][:, i, j]), uv, atol=1e-4)
    assert t["z"][0, i, j] == pytest.approx(c[2], abs=1e-6)


def test_a_few_steps_lower_the_loss_on_a_tiny_batch():
    torch.manual_seed(0)
    cfg = NetworkConfig(input="rgbd", width=8, height_px=48, width_px=64)
    net = build_network(cfg)
    frames = render_frames(StandinRenderer(), range(4))
    batch = frames.batch(np.arange(4), GEOMETRY)

    def loss():
        net.eval()
        with torch.no_grad():
            out = net(network_input(batch[0], batch[1], cfg))
            return float(detector_loss(out, batch[2], *reference_depth(batch[1]))["total"])

    before = loss()
    steps = fit_network(
        net, lambda rng: batch, GEOMETRY, OptimConfig(max_steps=60, lr=3e-3, max_minutes=5), cfg
    )
    assert steps == 60
    assert loss() < 0.5 * before


def test_crops_shift_the_intrinsics_and_keep_the_centre_on_the_same_pixel():
    frames = render_frames(StandinRenderer(), range(6))
    rng = np.random.default_rng(0)
    rgb, depth, tgt = frames.batch(np.arange(6), GEOMETRY, rng, crop_px=(32, 32))
    assert rgb.shape == (6, 32, 32, 3) and depth.shape == (6, 32, 32)
    assert tgt["heat"].shape == (6, 1, 4, 4)
    full = frames.batch(np.arange(6), GEOMETRY)
    for n in range(6):
        if tgt["present"][n] == 0:
            continue
        i, j = np.unravel_index(int(np.argmax(tgt["heat"][n, 0])), (4, 4))
        off = tgt["offset"][n, :, i, j].numpy()
        uv_crop = 8 * (np.array([j, i]) + off)
        fi, fj = np.unravel_index(int(np.argmax(full[2]["heat"][n, 0])), (6, 8))
        uv_full = 8 * (np.array([fj, fi]) + full[2]["offset"][n, :, fi, fj].numpy())
        shift = uv_full - uv_crop  # the crop's corner: whole pixels (no zoom)
        assert np.allclose(shift, np.round(shift), atol=1e-4)
        # the same pixels: the crop's colour at the centre is the frame's there
        assert torch.equal(
            rgb[n, int(uv_crop[1]), int(uv_crop[0])], full[0][n, int(uv_full[1]), int(uv_full[0])]
        )


def test_zoomed_crops_scale_the_intrinsics_with_the_image():
    # the labels of a zoomed crop put the centre where the resized image shows it: compare the
    # crop's colour at the labelled centre with the frame's colour at the true centre
    frames = render_frames(StandinRenderer(), range(8))
    rng = np.random.default_rng(1)
    rgb, _, tgt = frames.batch(np.arange(8), GEOMETRY, rng, crop_px=(32, 32), zoom=(1.5, 2.0))
    checked = 0
    for n, lab in enumerate(frames.labels):
        if tgt["present"][n] == 0:
            continue
        i, j = np.unravel_index(int(np.argmax(tgt["heat"][n, 0])), (4, 4))
        u, v = 8 * (np.array([j, i]) + tgt["offset"][n, :, i, j].numpy())
        c = lab.T_cam_part[:3, :3] @ GEOMETRY.centre_part_m + lab.T_cam_part[:3, 3]
        U, V = (lab.K @ c)[:2] / c[2]
        want = frames.rgb[n, round(V), round(U)].astype(int)
        got = rgb[n, min(31, round(v)), min(31, round(u))].numpy().astype(int)
        assert np.abs(want - got).max() <= 60  # bilinear: same face colour, blended at edges
        checked += 1
    assert checked >= 3


def test_colour_dropout_greys_whole_frames_and_leaves_the_stored_ones():
    frames = render_frames(StandinRenderer(), range(8))
    stored = frames.rgb.copy()
    rgb, depth, _ = frames.batch(np.arange(8), GEOMETRY, np.random.default_rng(2),
                                 colour_dropout=0.5)  # fmt: skip
    grey = [bool(torch.all(rgb[n] == 128)) for n in range(8)]
    assert 0 < sum(grey) < 8  # some frames, whole
    assert all(torch.equal(rgb[n], torch.from_numpy(stored[n])) for n in range(8) if not grey[n])
    assert np.array_equal(frames.rgb, stored)
    assert torch.equal(depth, torch.from_numpy(frames.depth_m.astype(np.float32)))  # depth kept
    assert torch.equal(frames.batch(np.arange(8), GEOMETRY, np.random.default_rng(2))[0],
                       torch.from_numpy(stored))  # fmt: skip
