"""BOP scene files of the real ViSP sequence in layouts BOP datasets ship: the dataset's
camera.json giving the depth unit, one camera per sequence, several objects per frame."""

import json

import numpy as np
import pytest
from PIL import Image
from visp_bop import real_depth_m, visp_bop_scene

from sim2real.core.errors import InputError
from sim2real.tracking.sequence import load_scene_gt, load_sequence


def _no_scale(entry, i):
    return {"cam_K": entry["cam_K"]}  # BOP leaves it to the dataset's camera.json


def test_the_datasets_camera_json_gives_the_unit_of_frames_without_their_own(real_data, tmp_path):
    # BOP: <dataset>/camera.json {"depth_scale": 0.1}, <dataset>/test/000001/depth/ in 0.1 mm
    scene = visp_bop_scene(
        real_data, tmp_path / "test" / "000001", depth_factor=10, camera_entry=_no_scale
    )
    K = json.loads((scene / "scene_camera.json").read_text())["0"]["cam_K"]
    camera = {"fx": K[0], "fy": K[4], "cx": K[2], "cy": K[5], "width": 640, "height": 480}
    (tmp_path / "camera.json").write_text(json.dumps({**camera, "depth_scale": 0.1}))
    seq = load_sequence(scene)
    assert seq.depth_scale == pytest.approx(1e-4)  # 0.1 mm per unit, not 1 mm (10x too far)
    assert np.allclose(seq.read(0), real_depth_m(real_data, 0), atol=1e-6)


def test_frames_taken_with_another_cam_k_are_refused_naming_the_first(real_data, tmp_path):
    def shifted(entry, i):  # frame 1 cropped 8 px to the side: cx moves with it
        K = list(entry["cam_K"])
        K[2] += 8 * i
        return {**entry, "cam_K": K}

    with pytest.raises(InputError, match="frame 1's cam_K differs from frame 0's by 8 px") as err:
        load_sequence(visp_bop_scene(real_data, tmp_path / "a", camera_entry=shifted))
    assert err.value.field == "1.cam_K" and err.value.source.endswith("scene_camera.json")

    def rounded(entry, i):  # the files' rounding is one camera still
        return {**entry, "cam_K": [round(v, 1) if i else v for v in entry["cam_K"]]}

    assert len(load_sequence(visp_bop_scene(real_data, tmp_path / "b", camera_entry=rounded))) == 2


def _with_a_neighbour(entries, i):  # another object (id 2) 20 cm to the side, listed first
    other = {**entries[0], "obj_id": 2}
    other["cam_t_m2c"] = [other["cam_t_m2c"][0] + 200, *other["cam_t_m2c"][1:]]
    return [other, *entries]


def test_several_objects_per_frame_need_an_obj_id(real_data, tmp_path):
    scene = visp_bop_scene(real_data, tmp_path / "s", gt_entries=_with_a_neighbour)
    with pytest.raises(InputError, match=r"2 objects per frame \(ids 1, 2\): pass --obj-id"):
        load_sequence(scene)
    truth = json.loads((real_data / "rgbd-visp-rbt" / "scene_gt.json").read_text())["1"][0]
    seq = load_sequence(scene, obj_id=1)
    assert np.allclose(seq.gt[1][:3, 3], np.asarray(truth["cam_t_m2c"]) / 1000)
    one = load_scene_gt(visp_bop_scene(real_data, tmp_path / "one") / "scene_gt.json")
    assert sorted(one) == [0, 1]  # one object in every frame: no id needed


def test_a_start_pose_and_frames_ten_times_apart_are_told(real_data, tmp_path):
    # 0.1 mm frames with no unit anywhere read as millimetres: 10x too far, every frame lost
    # and nothing said; the start pose shows it
    from sim2real.core.mesh_io import load_mesh
    from sim2real.tracking.run import start_depth_ratio
    from sim2real.tracking.tracker import Tracker

    folder = visp_bop_scene(real_data, tmp_path / "x10", 1, depth_factor=10)
    png = folder / "depth" / "000000.png"
    raw = np.array(Image.open(png)).astype(np.uint16)  # a finer unit's last digit
    raw[raw > 0] += np.random.default_rng(0).integers(0, 10, int((raw > 0).sum())).astype(np.uint16)
    Image.fromarray(raw).save(png)
    tenfold = load_sequence(folder)
    mesh = load_mesh(real_data / "rgbd-visp-rbt" / "models" / "cube.obj", unit="m")
    tracker = Tracker(mesh, tenfold.camera)
    T = tenfold.gt[tenfold.frame_ids[0]]
    assert start_depth_ratio(tracker, tenfold.read(0), T) == pytest.approx(10, rel=0.05)
    assert start_depth_ratio(tracker, real_depth_m(real_data), T) == pytest.approx(1, abs=0.05)
