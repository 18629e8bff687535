"""``track run`` on BOP files that list several objects: --obj-id picks the part in the folder's
scene_gt.json, a scene_gt --init and a models_info --symmetry; each refusal one line, exit 2."""

import json

from bad_inputs import run_main
from visp_bop import visp_bop_scene


def _with_a_neighbour(entries, i):  # object 2 listed first, 20 cm beside the cube
    return [{**entries[0], "obj_id": 2, "cam_t_m2c": [200.0, 0.0, 600.0]}, *entries]


def _track_run(real_data, tmp_path, seq, *extra):
    mesh = real_data / "rgbd-visp-rbt" / "models" / "cube.obj"
    out = tmp_path / "poses.jsonl"
    result = run_main("track", "run", mesh, "--mesh-unit", "m", "--frames", seq,
                      "--out", out, "--no-color", *extra)  # fmt: skip
    assert not out.exists() and len(result.stderr.splitlines()) == 1, result.stderr
    return result


def test_track_run_asks_which_object_and_obj_id_reaches_every_bop_file(real_data, tmp_path):
    seq = visp_bop_scene(real_data, tmp_path / "s", n=1, gt_entries=_with_a_neighbour)
    init = seq / "scene_gt.json"
    result = _track_run(real_data, tmp_path, seq, "--init", init)
    assert result.code == 2 and "2 objects per frame (ids 1, 2): pass --obj-id" in result.stderr
    info = tmp_path / "models_info.json"  # BOP: no symmetries_* keys for an asymmetric object
    info.write_text(json.dumps({"1": {"diameter": 147.2}, "2": {"diameter": 80.0}}))
    result = _track_run(real_data, tmp_path, seq, "--init", init, "--symmetry", info, "--obj-id", 3)
    assert result.code == 2 and f"{info}: 3: no object 3 in the file" in result.stderr
    (seq / "scene_gt.json").rename(tmp_path / "scene_gt.json")  # the --init file alone
    result = _track_run(real_data, tmp_path, seq, "--init", tmp_path / "scene_gt.json")
    assert result.code == 2 and "2 objects (ids 1, 2): pass --obj-id" in result.stderr
    result = _track_run(real_data, tmp_path, seq, "--init", tmp_path / "scene_gt.json",
                        "--obj-id", 3)  # fmt: skip
    assert result.code == 2 and "no object 3 (ids 1, 2)" in result.stderr


def test_track_run_refuses_an_init_in_millimetres(real_data, tmp_path):
    seq = visp_bop_scene(real_data, tmp_path / "s", n=1)
    entry = json.loads((seq / "scene_gt.json").read_text())["0"][0]
    mm = " ".join(map(str, [*entry["cam_t_m2c"], 0, 0, 0, 1]))  # 0.5 m written as 506
    result = _track_run(real_data, tmp_path, seq, "--init", mm)
    assert result.code == 2 and "--init: the translation is" in result.stderr
    assert "looks like millimetres" in result.stderr
