import numpy as np
import pytest

from sim2real.core.errors import InputError
from sim2real.models.cad_import import declared_unit, gmsh_session, import_cad
from sim2real.models.clean import clean_mesh
from sim2real.models.demo_cad import bracket_volume_mm3, write_bracket_step


def _volume_mm3(vertices, faces):
    c = clean_mesh(vertices, faces, hole_max_perimeter=0.0)
    v0, v1, v2 = (c.vertices[c.faces[:, i]] for i in range(3))
    return float(np.einsum("ij,ij->i", v0, np.cross(v1, v2)).sum() / 6) * 1e9, c


@pytest.fixture(scope="module")
def bracket_steps(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cad")
    return {
        "mm": write_bracket_step(folder / "bracket_mm.step", "mm"),
        "m": write_bracket_step(folder / "bracket_m.step", "m"),
        "iges": write_bracket_step(folder / "bracket.igs", "mm"),
    }


def test_step_bracket_matches_its_analytic_dimensions(bracket_steps):
    # 100 x 60 x 50 mm L-bracket, two 12 mm holes, 5 mm inner fillet: 82 059.96 mm^3
    cad = import_cad(bracket_steps["mm"], chordal_tolerance_mm=0.01)
    assert cad.declared_unit == "mm" and cad.metres_per_unit == pytest.approx(1e-3)
    extent = cad.vertices.max(axis=0) - cad.vertices.min(axis=0)
    assert np.allclose(extent, [0.1, 0.06, 0.05], atol=1e-6)
    volume, cleaned = _volume_mm3(cad.vertices, cad.faces)
    assert cleaned.stats["watertight"]
    # a chordal error of 0.01 mm on the 12 mm holes changes the volume by < 0.02 %
    assert volume == pytest.approx(bracket_volume_mm3(), rel=2e-4)


def test_chordal_tolerance_controls_the_tessellation(bracket_steps):
    coarse = import_cad(bracket_steps["mm"], chordal_tolerance_mm=0.1)
    fine = import_cad(bracket_steps["mm"], chordal_tolerance_mm=0.01)
    assert len(fine.faces) > 1.5 * len(coarse.faces)
    # the first hole's wall vertices lie on the exact 6 mm cylinder (inscribed polygon), and the
    # largest facet-to-cylinder gap, r (1 - cos(half the widest angular step)), is within tol
    for cad, tol in ((coarse, 0.1), (fine, 0.01)):
        v = cad.vertices * 1000
        r = np.hypot(v[:, 0] - 60, v[:, 1] - 15)
        wall = np.abs(r - 6) < 0.5
        assert wall.sum() > 8
        assert np.allclose(r[wall], 6.0, atol=1e-4)
        angles = np.unique(np.round(np.arctan2(v[wall, 1] - 15, v[wall, 0] - 60), 9))
        widest = np.max(np.diff(np.r_[angles, angles[0] + 2 * np.pi]))
        assert 6 * (1 - np.cos(widest / 2)) <= tol * 1.01


def test_step_in_metres_and_in_millimetres_give_the_same_part(bracket_steps):
    mm = import_cad(bracket_steps["mm"])
    m = import_cad(bracket_steps["m"])
    assert m.declared_unit == "m" and m.metres_per_unit == 1.0
    for cad in (mm, m):
        extent = cad.vertices.max(axis=0) - cad.vertices.min(axis=0)
        assert np.allclose(extent, [0.1, 0.06, 0.05], atol=1e-6)


def test_iges_bracket_reads_in_metres_with_its_unit(bracket_steps):
    cad = import_cad(bracket_steps["iges"])
    assert cad.declared_unit == "mm"
    extent = cad.vertices.max(axis=0) - cad.vertices.min(axis=0)
    assert np.allclose(extent, [0.1, 0.06, 0.05], atol=1e-5)
    assert any("faces" in n for n in cad.notes)  # IGES holds faces: the sewing is reported


def test_declared_units_of_hand_written_headers(tmp_path):
    inch = "#1=(CONVERSION_BASED_UNIT('INCH',#2) LENGTH_UNIT() NAMED_UNIT(#3));"
    assert declared_unit(tmp_path / "a.step", inch) == ("inch", 0.0254)
    cm = "#9 = ( LENGTH_UNIT() NAMED_UNIT(*) SI_UNIT(.CENTI.,\n .METRE.) );"
    assert declared_unit(tmp_path / "a.stp", cm) == ("cm", 0.01)
    assert declared_unit(tmp_path / "a.step", "no units here") == (None, None)


def test_step_without_a_solid_is_refused(tmp_path):
    with gmsh_session() as gmsh:
        gmsh.option.setString("Geometry.OCCTargetUnit", "MM")
        gmsh.model.occ.addRectangle(0, 0, 0, 50, 30)
        gmsh.model.occ.synchronize()
        gmsh.write(str(tmp_path / "sheet.step"))
    with pytest.raises(InputError, match="no solid"):
        import_cad(tmp_path / "sheet.step")


def test_empty_and_corrupt_cad_files_are_refused(tmp_path):
    (tmp_path / "empty.step").write_text("")
    with pytest.raises(InputError, match="empty"):
        import_cad(tmp_path / "empty.step")
    (tmp_path / "junk.step").write_text("this is not a STEP file\n" * 10)
    with pytest.raises(InputError, match="not a STEP"):
        import_cad(tmp_path / "junk.step")
    (tmp_path / "cut.step").write_text("ISO-10303-21;\nHEADER;\nDATA;\n#1 = CARTESIAN_POINT(")
    with pytest.raises(InputError):
        import_cad(tmp_path / "cut.step")


def test_a_cad_session_leaves_ctrl_c_as_it_found_it(python_sigint):
    """gmsh's own Ctrl-C handling would leave SIGINT at SIG_DFL: a later Ctrl-C killed the
    process (a training after a STEP import stopped without saving)."""
    import signal

    with gmsh_session() as gmsh:
        assert signal.getsignal(signal.SIGINT) is python_sigint
        gmsh.model.occ.addBox(0, 0, 0, 1, 1, 1)
    assert signal.getsignal(signal.SIGINT) is python_sigint


def test_an_iges_cylinder_sewn_into_a_solid_has_one_skin(tmp_path):
    """Sewing bounds the solid with copies of an IGES file's faces; meshing the originals too
    gave the cylinder a second skin (area 0.029 m^2 for 0.0165: a probe)."""
    for suffix in ("igs", "step"):
        with gmsh_session() as gmsh:
            gmsh.option.setString("Geometry.OCCTargetUnit", "MM")
            gmsh.model.occ.addCylinder(0, 0, 0, 0, 0, 80, 25)
            gmsh.model.occ.synchronize()
            gmsh.write(str(tmp_path / f"cyl.{suffix}"))
    areas = {}
    for suffix in ("igs", "step"):
        cad = import_cad(tmp_path / f"cyl.{suffix}")
        v0, v1, v2 = (cad.vertices[cad.faces[:, i]] for i in range(3))
        areas[suffix] = 0.5 * np.linalg.norm(np.cross(v1 - v0, v2 - v0), axis=1).sum()
    exact = 2 * np.pi * 0.025 * 0.08 + 2 * np.pi * 0.025**2
    assert areas["step"] == pytest.approx(exact, rel=5e-3)
    assert areas["igs"] == pytest.approx(areas["step"], rel=1e-3)
