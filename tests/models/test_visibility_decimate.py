import numpy as np
import trimesh

from sim2real.models.decimate import decimate
from sim2real.models.visibility import face_visibility
from sim2real.sensors.demo_part import machined_bracket


def test_box_inside_a_box_is_removed_and_the_bracket_keeps_every_face():
    outer = trimesh.creation.box((0.1, 0.1, 0.1))
    inner = trimesh.creation.box((0.03, 0.03, 0.03))
    m = trimesh.util.concatenate([outer, inner])
    vis = face_visibility(m.vertices, m.faces, n_views=60, grid=96, n_dirs=64)
    assert vis.visible[:12].all() and not vis.visible[12:].any()
    b = machined_bracket()  # holes and a concave corner: every face is seen from somewhere
    assert face_visibility(b.vertices, b.faces, n_views=60, grid=128, n_dirs=128).visible.all()


def test_decimation_keeps_the_silhouette_of_a_dense_sphere():
    s = trimesh.creation.icosphere(5, radius=0.05)  # 20480 faces
    d = decimate(np.asarray(s.vertices), np.asarray(s.faces), 2000)
    assert 1900 <= len(d.faces) <= 2000 and d.faces_before == 20480
    # a 2000-face sphere's facets sit at most ~0.4 mm inside a 50 mm radius
    assert d.max_deviation < 0.001
    assert d.silhouette_iou_min > 0.97
    # quadric-optimal vertices sit within a facet's sagitta (~0.4 mm) of the sphere, either side
    r = np.linalg.norm(d.vertices, axis=1)
    assert np.allclose(r, 0.05, atol=5e-4)
