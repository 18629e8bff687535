import warnings

import numpy as np
import pytest

from sim2real.core.errors import InputError
from sim2real.core.mesh_io import UnitWarning, load_mesh, validate_mesh

CUBE_OBJ = "\n".join(
    [f"v {x} {y} {z}" for x in (0, 1) for y in (0, 1) for z in (0, 1)]
    + [
        "f 1 2 4",
        "f 1 4 3",
        "f 5 7 8",
        "f 5 8 6",
        "f 1 5 6",
        "f 1 6 2",
        "f 3 4 8",
        "f 3 8 7",
        "f 1 3 7",
        "f 1 7 5",
        "f 2 6 8",
        "f 2 8 4",
    ]
)


def test_reads_real_m3t_meshes_in_metres(real_data):
    tri = load_mesh(real_data / "depth-m3t" / "triangle.obj", "m")
    assert len(tri.faces) == 8 and len(tri.vertices) == 6
    assert tri.extent_m[2] == pytest.approx(0.012)  # 12 mm thick prism
    schauma = load_mesh(real_data / "depth-m3t" / "schauma.obj")
    assert len(schauma.faces) == 20950


def test_millimetre_mesh_is_detected_with_a_warning(tmp_path):
    lines = [line for line in CUBE_OBJ.splitlines()]
    text = "\n".join(
        " ".join(["v", *[str(float(c) * 50) for c in line.split()[1:]]])
        if line.startswith("v ")
        else line
        for line in lines
    )
    (tmp_path / "cube_mm.obj").write_text(text)
    with pytest.warns(UnitWarning, match="millimetres"):
        mesh = load_mesh(tmp_path / "cube_mm.obj")
    assert np.allclose(mesh.extent_m, 0.05)  # 50 mm cube read as 0.05 m
    explicit = load_mesh(tmp_path / "cube_mm.obj", "mm")
    assert np.allclose(explicit.extent_m, 0.05)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_mesh(tmp_path / "cube_mm.obj", "mm")  # explicit and plausible: no warning
    # a part drawn in inches (US CAD's STL): said, and read as such (no unit for it before)
    assert np.allclose(load_mesh(tmp_path / "cube_mm.obj", "inch").extent_m, 50 * 0.0254)


def test_bad_meshes_raise_input_errors(tmp_path):
    with pytest.raises(InputError, match="not found"):
        load_mesh(tmp_path / "missing.obj")
    (tmp_path / "empty.obj").write_text("# nothing\n")
    with pytest.raises(InputError, match=r"faces|vertices"):
        load_mesh(tmp_path / "empty.obj")
    (tmp_path / "nan.obj").write_text("v 0 0 0\nv 1 0 nan\nv 0 1 0\nf 1 2 3\n")
    with pytest.raises(InputError, match="non-finite"):
        load_mesh(tmp_path / "nan.obj")
    with pytest.raises(InputError, match="mesh_unit"):
        load_mesh(tmp_path / "nan.obj", "furlong")
    (tmp_path / "junk.ply").write_text("not a ply file\n")
    with pytest.raises(InputError, match="not a PLY file"):
        load_mesh(tmp_path / "junk.ply")


def test_a_mesh_whose_triangles_all_have_zero_area_is_refused(tmp_path):
    # three collinear corners: a renderer would see nothing and blame the pose
    vertices = np.array([[0.0, 0.0, 0.0], [0.01, 0.0, 0.0], [0.02, 0.0, 0.0]])
    with pytest.raises(InputError, match="zero area") as err:
        validate_mesh(vertices, np.array([[0, 1, 2]]), tmp_path / "flat.stl")
    assert err.value.field == "faces"
