"""BOP-like depth sequences: write -> read round trips, BOP units by hand, and bad input."""

import json
import warnings

import numpy as np
import pytest
from PIL import Image

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.camera_io import save_camera
from sim2real.core.depth_io import write_depth
from sim2real.core.errors import InputError
from sim2real.core.pose import make_pose, rpy_deg_to_matrix
from sim2real.tracking.sequence import load_scene_gt, load_sequence
from sim2real.tracking.sequence_write import write_bop_sequence

CAMERA = CameraIntrinsics(fx=300.0, fy=301.0, cx=159.5, cy=119.5, width=320, height=240)


def random_frames(n, seed=0):
    rng = np.random.default_rng(seed)
    frames = rng.uniform(0.3, 2.0, (n, 240, 320)).astype(np.float32)
    frames[:, :10] = 0  # no return
    return frames


def poses(n):
    return [make_pose(rpy_deg_to_matrix(10 * i, -20, 35), [0.01 * i, -0.02, 0.6]) for i in range(n)]


def test_write_then_read_gives_back_depth_to_the_unit_and_poses_exactly(tmp_path):
    frames, T = random_frames(3), poses(3)
    write_bop_sequence(tmp_path, CAMERA, frames, T, depth_scale_mm=0.1)
    seq = load_sequence(tmp_path)
    assert len(seq) == 3 and seq.frame_ids == [0, 1, 2]
    assert seq.camera.fx == CAMERA.fx and seq.camera.width == 320 and seq.camera.height == 240
    assert seq.depth_scale == pytest.approx(1e-4)  # 0.1 mm per unit
    for i in range(3):
        # 0.1 mm units: half a unit of rounding, plus float32 resolution at 2 m
        assert np.abs(seq.read(i) - frames[i]).max() <= 0.05e-3 + 2.5e-7
        assert np.allclose(seq.gt[i], T[i], atol=1e-12)


def test_files_follow_bop_conventions(tmp_path):
    depth = np.full((240, 320), 0.5, np.float32)
    T = make_pose(np.eye(3), [0.01, 0.02, 0.5])
    write_bop_sequence(tmp_path, CAMERA, [depth], [T], depth_scale_mm=0.1, obj_id=7)
    raw = np.array(Image.open(tmp_path / "depth" / "000000.png"))
    assert raw.dtype == np.uint16 and raw[0, 0] == 5000  # 500 mm / 0.1 mm per unit
    scene_camera = json.loads((tmp_path / "scene_camera.json").read_text())
    assert scene_camera["0"]["cam_K"] == [300.0, 0.0, 159.5, 0.0, 301.0, 119.5, 0.0, 0.0, 1.0]
    assert scene_camera["0"]["depth_scale"] == 0.1
    gt = json.loads((tmp_path / "scene_gt.json").read_text())["0"][0]
    assert gt["cam_t_m2c"] == pytest.approx([10.0, 20.0, 500.0])  # millimetres
    assert gt["obj_id"] == 7
    camera = json.loads((tmp_path / "camera.json").read_text())
    assert camera["width"] == 320 and camera["depth_scale"] == 0.1
    assert not (tmp_path / "depth" / "000000.json").exists()  # no sidecar in a BOP folder


def test_hand_made_bop_folder_reads_in_metres(tmp_path):
    # BOP: depth_mm = value * depth_scale; cam_t_m2c in mm
    (tmp_path / "depth").mkdir()
    Image.fromarray(np.full((4, 6), 2500, np.uint16)).save(tmp_path / "depth" / "000003.png")
    K = [500.0, 0, 2.5, 0, 500.0, 1.5, 0, 0, 1]
    (tmp_path / "scene_camera.json").write_text(json.dumps({"3": {"cam_K": K, "depth_scale": 0.2}}))
    (tmp_path / "camera.json").write_text(
        json.dumps({"width": 6, "height": 4, "fx": 500.0, "fy": 500.0, "cx": 2.5, "cy": 1.5})
    )
    R = rpy_deg_to_matrix(0, 0, 90).ravel().tolist()
    gt = {
        "3": [
            {"cam_R_m2c": R, "cam_t_m2c": [1, 2, 300], "obj_id": 4},
            {"cam_R_m2c": R, "cam_t_m2c": [0, 0, 900], "obj_id": 5},
        ]
    }
    (tmp_path / "scene_gt.json").write_text(json.dumps(gt))
    seq = load_sequence(tmp_path, obj_id=4)
    assert seq.frame_ids == [3]
    assert np.allclose(seq.read(0), 0.5)  # 2500 * 0.2 mm
    assert np.allclose(seq.gt[3][:3, 3], [0.001, 0.002, 0.3])
    assert np.allclose(load_sequence(tmp_path, obj_id=5).gt[3][:3, 3], [0, 0, 0.9])


def test_explicit_camera_takes_precedence_but_the_bop_depth_unit_stays(tmp_path):
    write_bop_sequence(tmp_path, CAMERA, random_frames(2), None)
    other = CAMERA.model_copy(update={"fx": 250.0, "depth_scale": 0.001})
    save_camera(other, tmp_path / "mine.json")
    seq = load_sequence(tmp_path, tmp_path / "mine.json")
    assert seq.camera.fx == 250.0
    assert seq.depth_scale == pytest.approx(1e-4)  # the images' own unit (scene_camera.json)
    assert seq.gt is None


def test_folder_with_only_bop_camera_json_reads_it_as_millimetres_without_warning(tmp_path):
    frames = random_frames(1)
    write_bop_sequence(tmp_path, CAMERA, frames, None)
    (tmp_path / "scene_camera.json").unlink()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        seq = load_sequence(tmp_path)
    assert seq.depth_scale == pytest.approx(1e-4)
    assert np.abs(seq.read(0) - frames[0]).max() < 0.06e-3


def test_list_of_files_uses_sidecars_or_the_camera_unit(tmp_path):
    frames = random_frames(2)
    paths = [tmp_path / f"frame_{i}.png" for i in (5, 6)]
    for p, f in zip(paths, frames, strict=True):
        write_depth(p, f, depth_scale=0.0005)  # sidecar says 0.5 mm per unit
    save_camera(CAMERA, tmp_path / "cam.json")
    seq = load_sequence(paths, tmp_path / "cam.json")
    assert seq.frame_ids == [5, 6]
    assert np.abs(seq.read(1) - frames[1]).max() <= 0.25e-3 + 1e-6
    # no sidecar: the camera's depth_scale (1 mm)
    Image.fromarray(np.full((240, 320), 700, np.uint16)).save(tmp_path / "raw_9.png")
    seq = load_sequence([tmp_path / "raw_9.png"], tmp_path / "cam.json")
    assert np.allclose(seq.read(0), 0.7)
    with pytest.raises(InputError, match="camera"):
        load_sequence(tmp_path / "raw_9.png")


def test_missing_frame_ids_are_warned_and_the_sequence_goes_on(tmp_path):
    write_bop_sequence(tmp_path, CAMERA, random_frames(6), None)
    for i in (1, 3, 4):
        (tmp_path / "depth" / f"{i:06d}.png").unlink()
    with pytest.warns(UserWarning, match=r"missing frame ids 1, 3-4"):
        seq = load_sequence(tmp_path)
    assert seq.frame_ids == [0, 2, 5]
    assert seq.read(2).shape == (240, 320)


def test_frame_of_another_size_raises_naming_the_size(tmp_path):
    write_bop_sequence(tmp_path, CAMERA, random_frames(2), None)
    Image.fromarray(np.full((120, 160), 5000, np.uint16)).save(tmp_path / "depth" / "000001.png")
    seq = load_sequence(tmp_path)
    seq.read(0)
    with pytest.raises(InputError) as err:
        seq.read(1)
    assert err.value.field == "size" and "000001.png" in str(err.value)
    assert "160x120" in str(err.value) and "320x240" in str(err.value)


def test_npy_frames_take_the_camera_s_unit_unless_they_are_float_metres(tmp_path):
    # float millimetres (the ZED SDK's UNIT.MILLIMETER) were read as metres, 1000x too far
    save_camera(CAMERA, tmp_path / "cam.json")  # depth_scale 0.001: millimetres
    metres = random_frames(3)
    metres[0] = 0.0  # a first frame without any return says nothing of the unit
    for i, frame in enumerate(metres):
        np.save(tmp_path / f"{i:06d}.npy", (frame * 1000.0).astype(np.float32))
    seq = load_sequence(sorted(tmp_path.glob("*.npy")), tmp_path / "cam.json")
    assert np.allclose(seq.read(1), metres[1], rtol=1e-6)
    for i, frame in enumerate(metres):  # uint16 millimetres, as a PNG holds them
        np.save(tmp_path / f"{i:06d}.npy", np.round(frame * 1000.0).astype(np.uint16))
    seq = load_sequence(sorted(tmp_path.glob("*.npy")), tmp_path / "cam.json")
    assert np.abs(seq.read(2) - metres[2]).max() <= 0.0005 + 1e-6
    for i, frame in enumerate(metres):  # float metres: the camera's unit is for integers
        np.save(tmp_path / f"{i:06d}.npy", frame.astype(np.float32))
    seq = load_sequence(sorted(tmp_path.glob("*.npy")), tmp_path / "cam.json")
    assert np.allclose(seq.read(1), metres[1]) and seq.float_metres
    assert np.allclose(seq.read(2), metres[2])


def test_a_camera_yaml_beside_the_frames_is_read_when_bop_gives_none(tmp_path):
    write_bop_sequence(tmp_path, CAMERA, random_frames(2), None)
    for name in ("scene_camera.json", "camera.json"):
        (tmp_path / name).unlink(missing_ok=True)
    with pytest.raises(InputError, match=r"camera\.yaml"):
        load_sequence(tmp_path)
    (tmp_path / "camera.yaml").write_text(
        "image_width: 320\nimage_height: 240\nK: [300, 0, 159.5, 0, 301, 119.5, 0, 0, 1]\n"
    )
    camera = load_sequence(tmp_path).camera
    assert (camera.fx, camera.fy, camera.cx, camera.width) == (300, 301, 159.5, 320)
    # a Redwood / Open3D folder's camera_intrinsic.json (was: "no camera file")
    (tmp_path / "camera.yaml").unlink()
    (tmp_path / "camera_intrinsic.json").write_text(json.dumps(
        {"width": 320, "height": 240, "intrinsic_matrix": [302, 0, 0, 0, 303, 0, 159.5, 119.5, 1]}
    ))  # fmt: skip
    camera = load_sequence(tmp_path).camera
    assert (camera.fx, camera.fy, camera.cy, camera.height) == (302, 303, 119.5, 240)


def test_a_folder_of_unnumbered_images_says_so(tmp_path):
    for name in ("a.png", "b.png"):
        Image.fromarray(np.full((24, 32), 900, np.uint16)).save(tmp_path / name)
    with pytest.raises(InputError, match=r"2 depth images .* none with a frame number"):
        load_sequence(tmp_path, CAMERA)


def test_no_frames_and_bad_ground_truth_raise(tmp_path):
    (tmp_path / "depth").mkdir()
    with pytest.raises(InputError, match="no depth frames"):
        load_sequence(tmp_path)
    bad = tmp_path / "scene_gt.json"
    bad.write_text(json.dumps({"0": [{"cam_R_m2c": [1, 0, 0, 0, 1, 0, 0, 0, 1]}]}))
    with pytest.raises(InputError) as err:
        load_scene_gt(bad)
    assert err.value.field == "0.cam_t_m2c"
    bad.write_text(
        json.dumps({"0": [{"cam_R_m2c": [2, 0, 0, 0, 1, 0, 0, 0, 1], "cam_t_m2c": [0, 0, 1]}]})
    )
    with pytest.raises(InputError, match="orthonormal"):
        load_scene_gt(bad)


def test_a_source_that_does_not_exist_is_named_as_missing_not_as_a_bad_image(tmp_path):
    with pytest.raises(InputError, match="no such file or folder") as err:
        load_sequence(tmp_path / "sequ", CAMERA)  # a mistyped folder
    assert err.value.source == str(tmp_path / "sequ")
    not_an_image = tmp_path / "frames"
    (not_an_image / "a").mkdir(parents=True)
    (not_an_image / "b.png").write_bytes(b"")
    with pytest.raises(InputError, match="depth image not found"):
        load_sequence([not_an_image / "a", not_an_image / "b.png"], CAMERA)


def test_writer_refuses_bad_frames_and_pose_counts(tmp_path):
    with pytest.raises(InputError) as err:
        write_bop_sequence(tmp_path / "a", CAMERA, [np.zeros((10, 10))], None)
    assert err.value.field == "size"
    with pytest.raises(InputError, match="beyond"):
        write_bop_sequence(tmp_path / "b", CAMERA, [np.full((240, 320), 7.0)], None)
    with pytest.raises(InputError, match="poses"):
        write_bop_sequence(tmp_path / "c", CAMERA, random_frames(2), poses(1))


def test_a_list_of_frames_with_a_bop_scene_camera_takes_the_frames_size(tmp_path):
    """`--camera scene_camera.json` with depth files: BOP gives no image size there, and no
    option could (a probe); the frames give it, as they do for a BOP folder."""
    write_bop_sequence(tmp_path, CAMERA, random_frames(2), None)
    (tmp_path / "camera.json").unlink(missing_ok=True)
    frames = sorted((tmp_path / "depth").glob("*.png"))
    camera = load_sequence(frames, tmp_path / "scene_camera.json").camera
    assert (camera.width, camera.height) == (CAMERA.width, CAMERA.height)
    assert camera.fx == CAMERA.fx
