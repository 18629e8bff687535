import numpy as np
import pytest
import trimesh
import yaml
from cli_helpers import assert_one_line_error, figures_drawn, run_cli

from sim2real.core.errors import InputError
from sim2real.core.mesh_io import load_mesh
from sim2real.core.pointcloud_io import write_point_cloud
from sim2real.models.demo_cad import bracket_volume_mm3, write_bracket_step
from sim2real.models.part import load_part, load_prepared_model
from sim2real.models.prepare import PrepareConfig, prepare_model
from sim2real.models.symmetry import parse_symmetry

FAST = ["--views", "60", "--no-report"]


@pytest.fixture(scope="module")
def step_model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("prep")
    step = write_bracket_step(folder / "bracket.step", "mm")
    out = folder / "bracket_model"
    log = folder / "figures.jsonl"
    proc = run_cli("model", "prepare", step, "--out", out, "--views", "200", figure_log=log)
    assert proc.returncode == 0, proc.stderr
    return out, proc.stdout, figures_drawn(log)


def test_prepare_step_writes_a_complete_model_dir(step_model):
    out, stdout, drawn = step_model
    assert {"mesh.ply", "model.yaml", "viewpoints.npz", "report"} <= {p.name for p in out.iterdir()}
    assert (out / "report" / "index.html").is_file()
    # the report shows the input and the prepared mesh from the same three directions
    panels = drawn["before_after.png"]["axes"]
    assert [ax["title"] for ax in panels] == [
        f"{which}, {view}"
        for which in ("input mesh", "prepared")
        for view in ("front-left-top", "right-top", "back-bottom")
    ]
    assert all(ax["images"] == 1 for ax in panels)
    model = load_prepared_model(out)
    c = model.config
    assert c.source.unit == "mm" and c.source.unit_from == "file" and c.source.kind == "cad"
    assert np.allclose(c.extent_m, [0.1, 0.06, 0.05], atol=1e-6)
    # diameter: the box diagonal sqrt(100^2 + 60^2 + 50^2) = 126.886 mm (corners are vertices)
    assert c.diameter_m == pytest.approx(np.sqrt(0.1**2 + 0.06**2 + 0.05**2), abs=1e-6)
    assert c.volume_m3 * 1e9 == pytest.approx(bracket_volume_mm3(), rel=2e-3)  # 0.05 mm chords
    assert c.cleaning.watertight and c.symmetry.text == "none" and c.symmetry.source == "detected"
    assert "symmetry (detected): none" in stdout
    # every command that takes a mesh takes the MODEL_DIR: same mesh, metres
    mesh = load_part(out).mesh
    assert np.array_equal(mesh.faces, model.mesh.faces) and mesh.extent_m.max() == pytest.approx(
        0.1
    )
    views = model.stored_views
    assert len(views) == 200 and views.points.shape == (200, 400, 3)
    # the symmetry is readable through the tracking module's parser
    assert parse_symmetry(str(out / "model.yaml")).kind == "none"
    info = run_cli("model", "info", out)
    assert info.returncode == 0 and "100.0 x 60.0 x 50.0 mm" in info.stdout
    with pytest.raises(InputError, match="metres"):
        load_part(out, "mm")  # a prepared model is in metres by construction
    with pytest.raises(InputError, match="not a prepared model"):
        load_part(out / "report")
    with pytest.raises(InputError, match="a folder, not a mesh file"):
        load_mesh(out)  # the file reader reads files only


def test_config_round_trip_and_user_symmetry(tmp_path):
    box = trimesh.creation.box((0.08, 0.08, 0.03))
    box.export(tmp_path / "box.stl")
    result = prepare_model(tmp_path / "box.stl", PrepareConfig(views=40, symmetry="discrete:z:4"))
    assert result.symmetry_source == "user" and len(result.symmetry.symmetry.discrete) == 3
    out = result.write(tmp_path / "m", report=False)
    text = (out / "model.yaml").read_text()
    back = load_prepared_model(out).config
    assert back == result.model_config()  # write -> read -> equal
    assert back.prepare["symmetry"] == "discrete:z:4"
    assert yaml.safe_load(text)["symmetries_discrete"]
    sym = parse_symmetry(str(out / "model.yaml"))
    assert sym.kind == "discrete" and len(sym.discrete) == 3
    # detected: a square prism has a 4-fold axis and 2-fold flips (8 rotations)
    auto = prepare_model(tmp_path / "box.stl", PrepareConfig(views=40))
    assert len(auto.symmetry.symmetry.discrete) == 7 and auto.symmetry.confidence > 0.99


def test_inverted_and_mixed_normals_are_repaired_and_reported(tmp_path):
    box = trimesh.creation.box((0.1, 0.06, 0.03))
    faces = np.asarray(box.faces).copy()
    faces[::3] = faces[::3, ::-1]
    trimesh.Trimesh(box.vertices, faces, process=False).export(tmp_path / "mixed.obj")
    proc = run_cli("model", "prepare", tmp_path / "mixed.obj", "--out", tmp_path / "m", *FAST)
    assert proc.returncode == 0, proc.stderr
    assert "repair: 4 of 12 faces had inverted winding" in proc.stdout
    model = load_prepared_model(tmp_path / "m")
    assert model.config.cleaning.flipped_faces == 4 and model.config.volume_m3 == pytest.approx(
        1.8e-4
    )


def test_internal_geometry_and_decimation_in_prepare(tmp_path):
    outer = trimesh.creation.icosphere(5, radius=0.05)  # 20480 faces
    inner = trimesh.creation.box((0.02, 0.02, 0.02))
    trimesh.util.concatenate([outer, inner]).export(tmp_path / "ball.ply")
    r = prepare_model(tmp_path / "ball.ply", PrepareConfig(views=40, target_faces=5000))
    c = r.cleaning
    assert c.internal_faces_removed == 12 and c.decimated_faces_from == 20492
    assert len(r.mesh.faces) <= 5000 and c.watertight
    assert c.silhouette_iou_min > 0.97 and c.decimation_max_deviation_mm < 1.0
    assert any("internal" in s for s in c.repairs) and any("decimated" in s for s in c.repairs)
    assert r.symmetry.symmetry.kind == "continuous"  # a sphere: best axis kept, noted
    assert any("sphere" in n for n in r.symmetry.notes)


def _no_output(out):
    return not out.exists() and not list(out.parent.glob(f".{out.name}.*"))


def test_bad_inputs_give_one_line_and_leave_no_model(tmp_path):
    out = tmp_path / "model"
    (tmp_path / "empty.stl").write_bytes(b"")
    assert_one_line_error(
        run_cli("model", "prepare", tmp_path / "empty.stl", "--out", out), "empty"
    )
    # a mistyped MODEL_DIR is named as missing, not as a folder without model.yaml
    assert_one_line_error(run_cli("model", "info", tmp_path / "modl"), "modl: no such folder")
    assert_one_line_error(run_cli("model", "info", tmp_path), "not a prepared model")
    (tmp_path / "junk.obj").write_text("v 0 0 0\nv 1 0 0\nhello world\n")
    assert_one_line_error(
        run_cli("model", "prepare", tmp_path / "junk.obj", "--out", out), "junk.obj"
    )
    (tmp_path / "junk.ply").write_text("not a ply file\n")
    assert_one_line_error(
        run_cli("model", "prepare", tmp_path / "junk.ply", "--out", out), "not a PLY file"
    )
    (tmp_path / "bad.step").write_text("ISO-10303-21;\nHEADER;\nENDSEC;\nDATA;\nENDSEC;\n")
    assert_one_line_error(run_cli("model", "prepare", tmp_path / "bad.step", "--out", out))
    pts = np.random.default_rng(0).normal(size=(50, 3)) * 0.05
    write_point_cloud(tmp_path / "few.pcd", pts)
    assert_one_line_error(
        run_cli("model", "prepare", tmp_path / "few.pcd", "--out", out), "only 50 points"
    )
    # 3 units across: 3 m and 3 mm are both plausible parts
    trimesh.creation.box((3.0, 2.0, 1.0)).export(tmp_path / "which.stl")
    assert_one_line_error(
        run_cli("model", "prepare", tmp_path / "which.stl", "--out", out), "ambiguous units"
    )
    proc = run_cli("model", "prepare", tmp_path / "which.stl", "--out", out, "--unit", "mm", *FAST)
    assert proc.returncode == 0 and "mm (user)" in proc.stdout
    assert load_part(out).mesh.extent_m.max() == pytest.approx(0.003)
    assert_one_line_error(
        run_cli("model", "prepare", tmp_path / "which.stl", "--out", out, "--unit", "mm"),
        "--overwrite",
    )
    assert_one_line_error(
        run_cli(
            "model",
            "prepare",
            tmp_path / "which.stl",
            "--out",
            tmp_path / "x",
            "--symmetry",
            "spiral",
        ),
        "--symmetry",
    )
    assert_one_line_error(
        run_cli(
            "model", "prepare", tmp_path / "which.stl", "--out", tmp_path / "x", "--views", "0"
        ),
        "--views",
    )
    for name in ("x",):
        assert _no_output(tmp_path / name)
    assert not list(tmp_path.glob(".model.*"))


def test_step_without_solid_via_cli_leaves_nothing(tmp_path):
    from sim2real.models.cad_import import gmsh_session

    with gmsh_session() as gmsh:
        gmsh.option.setString("Geometry.OCCTargetUnit", "MM")
        gmsh.model.occ.addDisk(0, 0, 0, 20, 20)
        gmsh.model.occ.synchronize()
        gmsh.write(str(tmp_path / "disk.step"))
    out = tmp_path / "disk_model"
    assert_one_line_error(
        run_cli("model", "prepare", tmp_path / "disk.step", "--out", out), "no solid"
    )
    assert _no_output(out)
