import numpy as np
import trimesh

from sim2real.models.clean import boundary_loops, clean_mesh, edge_use


def _box():
    b = trimesh.creation.box((0.1, 0.06, 0.03))
    return np.asarray(b.vertices), np.asarray(b.faces)


def _signed_volume(v, f):
    v0, v1, v2 = (v[f[:, i]] for i in range(3))
    return float(np.einsum("ij,ij->i", v0, np.cross(v1, v2)).sum() / 6)


def test_triangle_soup_is_merged_and_inverted_normals_are_flipped_and_reported():
    v, f = _box()
    soup_v = v[f].reshape(-1, 3)  # every face with its own 3 vertices: 36 for 8 corners
    soup_f = np.arange(36).reshape(-1, 3)[:, ::-1]  # and inside out
    c = clean_mesh(soup_v, soup_f, hole_max_perimeter=0.05)
    assert c.stats["merged_vertices"] == 28 and len(c.vertices) == 8
    assert c.stats["flipped_faces"] == 12 and c.stats["watertight"]
    assert _signed_volume(c.vertices, c.faces) == np.float64(0.1 * 0.06 * 0.03).round(12) or (
        abs(_signed_volume(c.vertices, c.faces) - 1.8e-4) < 1e-12
    )
    assert any("inside out" in r for r in c.repairs)


def test_mixed_winding_is_made_consistent_and_outward():
    v, f = _box()
    f = f.copy()
    f[::2] = f[::2, ::-1]  # every other face inverted
    c = clean_mesh(v, f, hole_max_perimeter=0.05)
    assert c.stats["flipped_faces"] == 6
    assert edge_use(c.faces, len(c.vertices))["misoriented_edges"] == 0
    assert abs(_signed_volume(c.vertices, c.faces) - 1.8e-4) < 1e-12
    assert any("mixed" in r for r in c.repairs)


def test_degenerate_and_duplicate_faces_are_dropped():
    v, f = _box()
    f2 = np.vstack([f, f[:3], f[:1, [1, 0, 2]], [[0, 0, 1]], [[0, 1, 1]]])
    c = clean_mesh(v, f2, hole_max_perimeter=0.05)
    assert c.stats["duplicate_faces"] == 4 and c.stats["degenerate_faces"] == 2
    assert len(c.faces) == 12 and c.stats["watertight"]


def test_small_hole_is_filled_large_hole_left_open_and_reported():
    sphere = trimesh.creation.icosphere(3, radius=0.05)
    v, f = np.asarray(sphere.vertices), np.asarray(sphere.faces)
    # a small hole: the faces around one vertex; a large one: the cap z > 0.035
    around = np.any(f == 0, axis=1)
    cap = v[f][:, :, 2].min(axis=1) > 0.035
    assert not (around & cap).any()
    f_small = f[~around]
    c = clean_mesh(v, f_small, hole_max_perimeter=0.12)
    assert c.stats["holes_filled"] == 1 and c.stats["watertight"]
    c2 = clean_mesh(v, f[~around & ~cap], hole_max_perimeter=0.12)
    assert c2.stats["holes_filled"] == 1 and c2.stats["holes_left_open"] == 1
    assert not c2.stats["watertight"]
    assert any("left 1 holes open" in r for r in c2.repairs)
    # the open cap loop: a circle of radius sqrt(0.05^2 - z^2), z about 0.035-0.04
    loops = boundary_loops(c2.faces, len(c2.vertices))
    assert len(loops) == 1
    r = np.hypot(*c2.vertices[loops[0], :2].T)
    assert 0.02 < r.mean() < 0.04


def test_faces_that_share_no_edge_are_kept_as_open_pieces():
    v = np.array(
        [[0, 0, 0], [0.05, 0, 0], [0, 0.05, 0], [0, 0, 0.1], [0.05, 0, 0.1], [0, 0.05, 0.1]]
    )
    c = clean_mesh(v, np.array([[0, 1, 2], [3, 4, 5]]), hole_max_perimeter=0.01)
    assert len(c.faces) == 2 and not c.stats["watertight"]
