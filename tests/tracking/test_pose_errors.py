"""Pose errors against hand-computed values and brute force; symmetry parsing."""

import math

import numpy as np
import pytest
import trimesh

from sim2real.core.mesh_io import validate_mesh
from sim2real.core.pose import make_pose, rpy_deg_to_matrix
from sim2real.models.symmetry import axis_rotation, parse_symmetry
from sim2real.tracking.pose_errors import (
    add_m,
    adds_m,
    diameter_m,
    model_points,
    rotation_error_deg,
    symmetric_add_m,
    translation_error_m,
)

T_GT = make_pose(rpy_deg_to_matrix(20, -35, 110), [0.05, -0.02, 0.6])


def mesh_of(tm, name="part"):
    return validate_mesh(tm.vertices, tm.faces, "test", name)


@pytest.fixture(scope="module")
def cylinder():
    return mesh_of(trimesh.creation.cylinder(radius=0.03, height=0.1, sections=64))


def spin_z(T, deg, point=(0, 0, 0)):
    """T composed with a rotation about the part's z axis through ``point``."""
    R = axis_rotation(np.array([0, 0, 1.0]), math.radians(deg))
    p = np.asarray(point, float)
    return T @ make_pose(R, p - R @ p)


def test_add_of_a_translation_error_equals_it():
    points = np.random.default_rng(0).normal(size=(500, 3)) * 0.05
    T_est = T_GT.copy()
    T_est[:3, 3] += [0.003, 0.004, 0.0]  # 5 mm
    assert add_m(T_est, T_GT, points) == pytest.approx(0.005, abs=1e-12)
    assert adds_m(T_est, T_GT, points) <= 0.005 + 1e-12
    assert translation_error_m(T_est, T_GT) == pytest.approx(0.005, abs=1e-12)
    assert rotation_error_deg(T_est, T_GT) == pytest.approx(0.0, abs=1e-6)


def test_cylinder_turned_about_its_axis_is_right_for_adds_and_symmetric_add(cylinder):
    points = model_points(cylinder, 2000)
    T_est = spin_z(T_GT, 37.3)  # between two 5-degree samples: the refinement must find it
    add = add_m(T_est, T_GT, points)
    # points at radius r move by 2 r sin(37.3/2 deg); the samples average r of about 2.3 cm
    assert 0.012 < add < 0.02
    assert adds_m(T_est, T_GT, points) < 0.15 * add  # only the sampling gaps remain
    sym = parse_symmetry("axis:z")
    assert symmetric_add_m(T_est, T_GT, points, sym) < 1e-6
    assert rotation_error_deg(T_est, T_GT) == pytest.approx(37.3, abs=1e-6)
    assert rotation_error_deg(T_est, T_GT, sym) == pytest.approx(0.0, abs=1e-4)
    assert translation_error_m(T_est, T_GT, sym) == pytest.approx(0.0, abs=1e-12)


def test_continuous_errors_match_brute_force_for_an_offset_axis():
    sym = parse_symmetry("axis:0.3,0.1,1@0.01,-0.02,0.005")
    rng = np.random.default_rng(3)
    for _ in range(5):
        T_est = make_pose(rpy_deg_to_matrix(*rng.uniform(-180, 180, 3)), rng.normal(size=3) * 0.05)
        S = sym.transforms(n_continuous=20000)
        G = T_GT @ S
        rel = np.einsum("ji,njk->nik", T_est[:3, :3], G[:, :3, :3])
        brute_rot = np.degrees(np.arccos(np.clip((np.trace(rel, axis1=1, axis2=2) - 1) / 2, -1, 1)))
        brute_t = np.linalg.norm(G[:, :3, 3] - T_est[:3, 3], axis=1)
        assert rotation_error_deg(T_est, T_GT, sym) == pytest.approx(brute_rot.min(), abs=0.02)
        assert translation_error_m(T_est, T_GT, sym) == pytest.approx(brute_t.min(), abs=1e-6)


def test_discrete_four_fold_symmetry_of_a_square_block():
    block = mesh_of(trimesh.creation.box((0.1, 0.1, 0.04)))
    points = model_points(block, 1000)
    sym = parse_symmetry("discrete:z:4")
    assert sym.transforms().shape == (4, 4, 4)
    turned = spin_z(T_GT, 90)
    assert add_m(turned, T_GT, points) > 0.03
    assert symmetric_add_m(turned, T_GT, points, sym) == pytest.approx(0.0, abs=1e-12)
    assert rotation_error_deg(turned, T_GT) == pytest.approx(90.0, abs=1e-6)
    assert rotation_error_deg(turned, T_GT, sym) == pytest.approx(0.0, abs=1e-4)
    # 100 deg: 10 deg from the nearest symmetric pose
    assert rotation_error_deg(spin_z(T_GT, 100), T_GT, sym) == pytest.approx(10.0, abs=1e-6)


def test_diameter_and_model_points():
    cube = mesh_of(trimesh.creation.box((0.1, 0.1, 0.1)))
    assert diameter_m(cube.vertices) == pytest.approx(math.sqrt(3) * 0.1)
    pts = model_points(cube, 500, seed=1)
    assert pts.shape == (500, 3)
    assert np.allclose(np.abs(pts).max(axis=1), 0.05)  # every point lies on a face
    assert np.array_equal(pts, model_points(cube, 500, seed=1))
