"""Frames taken through different intrinsics (``detect dataset`` jitters cam_K per frame, BOP
scenes differ): detect run and detect finetune read each frame through its own cam_K and its
own depth_scale, not frame 0's."""

import json

import numpy as np
import pytest
from bad_inputs import run_main
from detect.standin_frames import standin_sample
from detect.test_detector import tiny_detector
from PIL import Image

from sim2real.core.errors import InputError
from sim2real.detect.decode import prepare_frame
from sim2real.detect.detector import detect_frame, save_detector
from sim2real.detect.finetune import real_frame_set
from sim2real.detect.run import sequence_frames
from sim2real.tracking.sequence import load_sequence

SHIFT_PX = (6.0, -4.0)
"""Frame 1's principal point beside frame 0's: the same image seen through another camera."""


def two_camera_folder(folder, cams=None, scales_mm=(1.0, 0.5)):
    """A BOP folder of two frames of one image (a box before a sloping wall), frame 1 with
    its principal point moved by ``SHIFT_PX`` and its depth in another unit; (rgb, depth_m,
    [K of each frame], T_cam_part)."""
    s = standin_sample(3)
    wall = np.broadcast_to(np.linspace(0.55, 0.65, s.depth_m.shape[1]), s.depth_m.shape)
    depth = np.round(np.where(s.mask, s.depth_m, wall), 3).astype(np.float32)  # whole mm
    K1 = s.K.copy()
    K1[0, 2] += SHIFT_PX[0]
    K1[1, 2] += SHIFT_PX[1]
    cams = cams or [s.K, K1]
    h, w = depth.shape
    for sub in ("rgb", "depth"):
        (folder / sub).mkdir(parents=True)
    scene_camera, scene_gt = {}, {}
    for i, (K, scale_mm) in enumerate(zip(cams, scales_mm, strict=True)):
        Image.fromarray(s.rgb).save(folder / "rgb" / f"{i:06d}.png")
        units = np.rint(depth * 1000.0 / scale_mm).astype(np.uint16)
        Image.fromarray(units).save(folder / "depth" / f"{i:06d}.png")
        scene_camera[str(i)] = {"cam_K": np.ravel(K).tolist(), "depth_scale": scale_mm}
        T = s.T_cam_part
        scene_gt[str(i)] = [
            {"cam_R_m2c": T[:3, :3].ravel().tolist(), "cam_t_m2c": (1000 * T[:3, 3]).tolist(),
             "obj_id": 1}
        ]  # fmt: skip
    (folder / "scene_camera.json").write_text(json.dumps(scene_camera))
    (folder / "scene_gt.json").write_text(json.dumps(scene_gt))
    (folder / "camera.json").write_text(json.dumps({"width": w, "height": h}))
    return s.rgb, depth, cams, s.T_cam_part


def test_sequence_frames_give_each_frame_its_own_camera_and_depth_unit(tmp_path):
    rgb, depth, cams, T = two_camera_folder(tmp_path / "s")
    seq = load_sequence(tmp_path / "s", one_camera=False)
    frames = list(sequence_frames(seq, tmp_path / "s"))
    assert [f[0] for f in frames] == [0, 1]
    for (_, im, d, K, T_gt), K_frame in zip(frames, cams, strict=True):
        np.testing.assert_array_equal(K, K_frame)
        np.testing.assert_array_equal(im, rgb)
        np.testing.assert_allclose(d, depth, atol=1e-6)  # 1 mm and 0.5 mm units alike
        np.testing.assert_allclose(T_gt, T, atol=1e-9)
    # the tracker still refuses the folder: it projects every frame through one camera
    with pytest.raises(InputError, match=r"1\.cam_K.*split the sequence by camera"):
        load_sequence(tmp_path / "s")


def test_detect_run_back_projects_each_frame_through_its_own_cam_K(tmp_path):
    """The same image through two cameras: frame 1's position and pose are those of frame 1's
    cam_K (frame 0's K put it SHIFT_PX / f * z off, silently)."""
    rgb, depth, cams, _ = two_camera_folder(tmp_path / "s")
    det = tiny_detector()
    det.info.settings.min_confidence = 0.0  # always found: every frame has a position
    (tmp_path / "DET").mkdir()
    save_detector(det, tmp_path / "DET")
    out = tmp_path / "d.jsonl"
    result = run_main("detect", "run", tmp_path / "DET", "--frames", tmp_path / "s",
                      "--out", out, "--min-confidence", "0")  # fmt: skip
    assert result.code == 0, result.stderr
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["frame"] for r in lines] == [0, 1]
    for r, K in zip(lines, cams, strict=True):
        expected = detect_frame(det, rgb, depth, K)
        np.testing.assert_allclose(r["position_m"], expected.position_m, atol=1e-5)  # 10 um
        if expected.T_cam_part is not None:
            np.testing.assert_allclose(r["T_cam_part"], expected.T_cam_part, atol=1e-6)
    # the same pixel through a principal point moved by (du, dv): x and y move by -(du, dv) z / f
    p0, p1 = np.array(lines[0]["position_m"]), np.array(lines[1]["position_m"])
    f, z = cams[0][0, 0], p1[2]
    assert p1[2] == pytest.approx(p0[2], abs=1e-5)
    np.testing.assert_allclose(p1[:2] - p0[:2], -np.array(SHIFT_PX) * z / f, atol=2e-5)


def test_finetune_real_samples_take_each_frame_cam_K(tmp_path):
    """detect finetune's labelled real frames: the labels paired with each frame's own camera,
    the network-size intrinsics of each label from that camera."""
    rgb, depth, cams, T = two_camera_folder(tmp_path / "s")
    cfg = tiny_detector().info.network
    seq = load_sequence(tmp_path / "s", read_gt=False, one_camera=False)  # as detect finetune
    seq.gt = {0: T, 1: T}  # its --labels
    samples = real_frame_set(list(sequence_frames(seq, tmp_path / "s")), cfg)
    for label, K in zip(samples.labels, cams, strict=True):
        np.testing.assert_allclose(label.K, prepare_frame(rgb, depth, K, cfg).K, atol=1e-12)
    assert not np.allclose(samples.labels[0].K, samples.labels[1].K)


def test_a_frame_camera_that_cannot_be_is_refused_naming_its_cam_K(tmp_path):
    s = standin_sample(3)
    bad = s.K.copy()
    bad[0, 2] = 10 * s.rgb.shape[1]  # cx a whole image width outside: a typo
    two_camera_folder(tmp_path / "s", cams=[s.K, bad])
    with pytest.raises(InputError, match=r"scene_camera\.json: 1\.cam_K: cx"):
        load_sequence(tmp_path / "s", one_camera=False)


def test_a_frame_of_another_size_than_the_camera_is_refused(tmp_path):
    two_camera_folder(tmp_path / "s")
    Image.fromarray(np.zeros((24, 32, 3), np.uint8)).save(tmp_path / "s" / "rgb" / "000001.png")
    seq = load_sequence(tmp_path / "s", one_camera=False)
    with pytest.raises(InputError, match=r"000001\.png: size: colour frame is 32x24 px"):
        list(sequence_frames(seq, tmp_path / "s"))
