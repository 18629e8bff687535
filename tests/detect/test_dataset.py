"""The BOP dataset writer: files read back equal the samples (poses round-trip), an
interrupted run resumes to the same bytes (in one process and over worker processes), worker
processes and Ray shards write what one process writes (and frames kept in memory for
training equal one process's), a folder of another config is refused, bad input through the
CLI is one line and writes nothing."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh
from cli_helpers import assert_one_line_error, run_cli
from PIL import Image

from sim2real.core.errors import InputError
from sim2real.detect.bop_writer import frame_done, read_labels
from sim2real.detect.dataset import generate_dataset
from sim2real.detect.render_rgbd import SampleRenderer, load_part_model
from sim2real.detect.scene_config import SceneConfig

SMALL = SceneConfig(width_px=64, height_px=48, textures={"count": 12, "size_px": 8})


@pytest.fixture(scope="module")
def part_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("part") / "block.stl"
    trimesh.creation.box(extents=(0.05, 0.03, 0.02)).export(path)
    return path


def _files(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_files_read_back_equal_the_samples(part_file, tmp_path):
    out = tmp_path / "ds"
    result = generate_dataset(part_file, out, 3, seed=4, config=SMALL)
    assert result.rendered == 3 and result.frames == 3
    renderer = SampleRenderer(load_part_model(part_file), SMALL, seed=4)
    labels = read_labels(out)
    assert sorted(labels) == [0, 1, 2]
    for i in range(3):
        s = renderer.sample(i)
        rgb = np.asarray(Image.open(out / "rgb" / f"{i:06d}.png"))
        np.testing.assert_array_equal(rgb, s.rgb)
        units = np.asarray(Image.open(out / "depth" / f"{i:06d}.png"))
        T, K, scale_mm = labels[i]
        assert units.dtype == np.uint16 and scale_mm == 0.1
        np.testing.assert_allclose(units * scale_mm / 1000, s.depth_m, atol=0.5e-4)
        visib = np.asarray(Image.open(out / "mask_visib" / f"{i:06d}_000000.png")) > 0
        full = np.asarray(Image.open(out / "mask" / f"{i:06d}_000000.png")) > 0
        np.testing.assert_array_equal(visib, s.mask)
        np.testing.assert_array_equal(full, s.mask_full)
        np.testing.assert_allclose(T, s.T_cam_part, atol=1e-12)  # mm in the file, m here
        np.testing.assert_allclose(K, s.K, atol=1e-12)
    assert (out / "config.yaml").is_file()


def test_an_interrupted_run_resumes_to_the_same_bytes(part_file, tmp_path):
    whole = tmp_path / "whole"
    generate_dataset(part_file, whole, 5, seed=2, config=SMALL)
    cut = tmp_path / "cut"

    def stop_after_two(done, total):
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(InputError, match="interrupted after 2 of 5 frames"):
        generate_dataset(
            part_file, cut, 5, seed=2, config=SMALL, processes=1, progress=stop_after_two
        )
    assert sorted(p.name for p in (cut / "rgb").iterdir()) == ["000000.png", "000001.png"]
    assert not list(cut.rglob(".*"))  # no temporary file left behind
    again = generate_dataset(part_file, cut, 5, seed=2, config=SMALL)
    assert again.rendered == 3
    assert _files(cut) == _files(whole)


def test_worker_processes_write_what_one_process_writes(part_file, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    generate_dataset(part_file, one, 6, seed=3, config=SMALL, processes=1)
    seen = []
    result = generate_dataset(
        part_file, two, 6, seed=3, config=SMALL, processes=2,
        progress=lambda done, total: seen.append((done, total)),
    )  # fmt: skip
    assert result.rendered == 6
    assert seen[-1] == (6, 6) and len(seen) >= 2  # a task at a time, not once at the end
    assert _files(two) == _files(one)


def test_an_interrupted_run_of_processes_leaves_whole_frames(part_file, tmp_path):
    whole = tmp_path / "whole"
    generate_dataset(part_file, whole, 24, seed=5, config=SMALL, processes=1)
    cut = tmp_path / "cut"

    def interrupt(done, total):
        raise KeyboardInterrupt

    with pytest.raises(InputError, match=r"interrupted after (\d+) of 24 frames") as err:
        generate_dataset(part_file, cut, 24, seed=5, config=SMALL, processes=2, progress=interrupt)
    written = sorted(p.name for p in (cut / "rgb").iterdir())
    assert f"after {len(written)} of 24" in str(err.value) and 0 < len(written) < 24
    assert not list(cut.rglob(".*"))  # no temporary file: each worker ended its frame
    assert all(frame_done(cut, int(name[:6])) for name in written)
    again = generate_dataset(part_file, cut, 24, seed=5, config=SMALL, processes=2)
    assert again.rendered == 24 - len(written)
    assert _files(cut) == _files(whole)


def test_a_folder_of_another_config_is_refused(part_file, tmp_path):
    out = tmp_path / "ds"
    generate_dataset(part_file, out, 1, seed=0, config=SMALL)
    before = _files(out)
    with pytest.raises(InputError, match="seed"):
        generate_dataset(part_file, out, 1, seed=1, config=SMALL)
    other = SMALL.model_copy(update={"width_px": 80, "height_px": 60})
    with pytest.raises(InputError, match="another config"):
        generate_dataset(part_file, out, 1, seed=0, config=other)
    assert _files(out) == before
    (out / "config.yaml").write_text("seed: 0\nseed: 1\n")  # a damaged config: named
    with pytest.raises(InputError, match="given twice") as err:
        generate_dataset(part_file, out, 1, seed=0, config=SMALL)
    assert str(out / "config.yaml") in str(err.value)


def test_a_rerun_with_fewer_frames_is_refused_and_more_extend_it(part_file, tmp_path):
    out = tmp_path / "ds"
    generate_dataset(part_file, out, 3, seed=0, config=SMALL)
    before = _files(out)
    with pytest.raises(InputError, match="holds 3 frames: --frames 2 would leave images"):
        generate_dataset(part_file, out, 2, seed=0, config=SMALL)  # labels for 2 of 3 images
    assert _files(out) == before
    result = generate_dataset(part_file, out, 4, seed=0, config=SMALL)
    assert (result.frames, result.rendered) == (4, 1) and len(read_labels(out)) == 4


def test_bad_input_is_one_line_and_writes_nothing(part_file, tmp_path):
    points = tmp_path / "points.ply"  # vertices, no faces
    trimesh.PointCloud(np.random.default_rng(0).random((20, 3)) * 0.05).export(points)
    cases = [
        ([points, "--frames", 2], ("points.ply", "faces")),
        ([part_file, "--frames", -3], ("--frames", ">= 1")),
        ([part_file, "--frames", 0], ("--frames",)),
    ]
    for args, needles in cases:
        out = tmp_path / "out"
        proc = run_cli("detect", "dataset", args[0], "--out", out, *args[1:], "--quiet")
        assert_one_line_error(proc, *needles)
        assert not out.exists()
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    proc = run_cli("detect", "dataset", part_file, "--out", blocker / "ds", "--frames", 1)
    assert_one_line_error(proc, "a-file", "--out")
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("lights:\n  count: [0, 3]\n")
    out = tmp_path / "out"
    proc = run_cli("detect", "dataset", part_file, "--out", out, "--frames", 1, "--config", cfg)
    assert_one_line_error(proc, "cfg.yaml", "lights")
    assert not out.exists()
    assert proc.stdout == ""  # the progress bar, piped, leaves no empty line above the error


def test_cli_writes_the_dataset(part_file, tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("width_px: 64\nheight_px: 48\ntextures:\n  count: 12\n  size_px: 8\n")
    out = tmp_path / "ds"
    proc = run_cli("detect", "dataset", part_file, "--out", out, "--frames", 2, "--config", cfg)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("wrote 2 frames")  # piped: no progress bar, no empty line
    assert proc.stderr.startswith("frames 2/2 "), proc.stderr  # but its last state, in the log
    assert len(read_labels(out)) == 2 and len(list((out / "depth").iterdir())) == 2


@pytest.mark.slow
def test_ray_shards_write_what_a_local_run_writes(part_file, tmp_path):
    pytest.importorskip("ray")
    local, sharded = tmp_path / "local", tmp_path / "sharded"
    generate_dataset(part_file, local, 4, seed=9, config=SMALL, processes=1)
    result = generate_dataset(part_file, sharded, 4, seed=9, config=SMALL, workers=2)
    assert result.rendered == 4
    assert _files(sharded) == _files(local)


def test_frames_in_memory_from_worker_processes_equal_one_process(part_file):
    from sim2real.detect.frame_workers import worker_renderer
    from sim2real.detect.sim_data import render_frames

    key = (str(part_file), SMALL.model_dump_json(), 6)
    renderer = worker_renderer(*key)
    seen = []
    two = render_frames(renderer, range(10), lambda d, n: seen.append(d), key=key, processes=2)
    one = render_frames(renderer, range(10))
    np.testing.assert_array_equal(two.rgb, one.rgb)
    np.testing.assert_array_equal(two.depth_m, one.depth_m)
    for a, b in zip(two.labels, one.labels, strict=True):
        np.testing.assert_array_equal(a.T_cam_part, b.T_cam_part)
        assert a.visible_px == b.visible_px
    assert seen[-1] == 10 and len(seen) >= 2


def _dies_at_frame_3(renderer, index: int) -> int:
    if index == 3:
        import os

        os._exit(9)  # as the kernel's out-of-memory killer ends a process
    return index


def test_a_worker_killed_mid_frame_raises_instead_of_waiting_forever(part_file):
    from sim2real.detect.frame_workers import WorkerLostError, render_in_processes

    key = (str(part_file), SMALL.model_dump_json(), 6)
    with pytest.raises(WorkerLostError, match="ended mid-chunk"):
        render_in_processes(key, list(range(12)), 2, _dies_at_frame_3, {})
