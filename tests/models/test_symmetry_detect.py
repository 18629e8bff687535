import numpy as np
import pytest
import trimesh
import yaml

from sim2real.core.data import data_root
from sim2real.models.symmetry import load_symmetry_file
from sim2real.models.symmetry_detect import detect_symmetry, symmetry_to_bop
from sim2real.sensors.demo_part import machined_bracket


def _is_symmetry(mesh, T, tol=1e-6):
    # a symmetry of a polyhedron permutes its vertices (independent of the sampled detection)
    from scipy.spatial import cKDTree

    p = mesh.vertices @ T[:3, :3].T + T[:3, 3]
    d, _ = cKDTree(mesh.vertices).query(p)
    return d.max() < tol


def test_box_has_three_two_fold_axes():
    box = trimesh.creation.box((0.1, 0.06, 0.03))
    r = detect_symmetry(box.vertices, box.faces)
    assert r.symmetry.kind == "discrete" and len(r.symmetry.discrete) == 3  # D2, without I
    assert r.confidence > 0.99
    for T in r.symmetry.discrete:
        assert np.isclose(np.trace(T[:3, :3]), -1)  # rotations by 180 deg
        assert _is_symmetry(box, T)


def test_cylinder_is_continuous_with_a_flip_and_a_hexagonal_prism_has_twelve():
    cyl = trimesh.creation.cylinder(0.03, 0.1, sections=128)
    r = detect_symmetry(cyl.vertices, cyl.faces)
    assert r.symmetry.kind == "continuous"
    assert abs(r.symmetry.axis @ [0, 0, 1]) == pytest.approx(1, abs=1e-6)
    assert len(r.symmetry.discrete) == 1  # the end-over-end flip
    hexagon = trimesh.creation.cylinder(0.03, 0.02, sections=6)
    h = detect_symmetry(hexagon.vertices, hexagon.faces)
    assert h.symmetry.kind == "discrete" and len(h.symmetry.discrete) == 11  # D6 less I
    assert all(_is_symmetry(hexagon, T) for T in h.symmetry.discrete)


def test_axes_a_fraction_of_a_degree_off_still_close_the_group():
    # the real M3T triangle: an equilateral prism whose flip axes, found from its face normals,
    # are 0.04 deg off; each product of them was once a new element (past 120)
    from sim2real.models.part import load_part

    root = data_root()
    if root is None or not (root / "real").is_dir():
        pytest.skip("real data not found")
    tri = load_part(root / "real" / "depth-m3t" / "triangle.obj").mesh
    r = detect_symmetry(tri.vertices, tri.faces)
    assert r.symmetry.kind == "discrete" and len(r.symmetry.discrete) == 5  # D3 less I
    assert not r.notes
    # each maps the vertices onto vertices within the detection's tolerance (0.5 % of 89 mm)
    assert all(_is_symmetry(tri, T, tol=4.4e-4) for T in r.symmetry.discrete)


def test_bracket_has_no_rotational_symmetry():
    b = machined_bracket()
    r = detect_symmetry(b.vertices, b.faces)
    assert r.symmetry.kind == "none"
    assert r.checked  # candidates were tested and rejected
    assert 0 < r.confidence <= 1


def test_bop_form_reads_back_through_the_tracking_loader(tmp_path):
    box = trimesh.creation.box((0.1, 0.06, 0.03))
    box.apply_translation((0.01, 0.02, 0.03))  # off the origin: translations matter (mm)
    r = detect_symmetry(box.vertices, box.faces)
    (tmp_path / "model.yaml").write_text(
        yaml.safe_dump({"name": "x", **symmetry_to_bop(r.symmetry)})
    )
    back = load_symmetry_file(tmp_path / "model.yaml")
    assert len(back.discrete) == 3
    for a, b in zip(r.symmetry.discrete, back.discrete, strict=True):
        assert np.allclose(a, b, atol=1e-8)


def test_symmetry_option_auto_detects_what_a_plain_mesh_does_not_declare():
    from sim2real.core.mesh_io import Mesh
    from sim2real.core.pose_records import PoseRecord
    from sim2real.models.symmetry_detect import resolve_symmetry
    from sim2real.tracking.evaluation import evaluate_track

    cube = trimesh.creation.box((0.08, 0.08, 0.08))
    assert resolve_symmetry(None, cube.vertices, cube.faces) is None  # the part's own
    assert resolve_symmetry("none", cube.vertices, cube.faces).kind == "none"
    auto = resolve_symmetry(" AUTO ", cube.vertices, cube.faces)
    assert len(auto.discrete_with_identity()) == 24
    # a pose turned by a quarter about z is the same cube: an error only without the symmetry
    T = np.eye(4)
    T[:3, 3] = (0.0, 0.0, 0.6)
    turned = T.copy()
    turned[:3, :3] = [[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    records = [PoseRecord(frame=0, status="tracking", score=1.0, T_cam_part=turned, ms=1.0)]

    mesh = Mesh(np.asarray(cube.vertices), np.asarray(cube.faces))
    plain = evaluate_track(records, {0: T}, mesh, None)
    aware = evaluate_track(records, {0: T}, mesh, auto)
    assert plain.median_add_mm > 30 and aware.median_add_mm < 1e-6
    assert "ADD (no symmetry; --symmetry auto finds a mesh's)" in plain.summary_lines()[1]
    assert "ADD (symmetry-aware)" in aware.summary_lines()[1]
