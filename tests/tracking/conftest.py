"""Shared tracking fixtures."""

import pytest
import trimesh

from sim2real.core.mesh_io import validate_mesh


@pytest.fixture(scope="module")
def part():
    """An L-shaped part, 8 x 4 x 5 cm (no symmetry)."""
    base = trimesh.creation.box((0.08, 0.04, 0.01))
    base.apply_translation((0, 0, 0.005))
    wall = trimesh.creation.box((0.01, 0.04, 0.05))
    wall.apply_translation((-0.035, 0, 0.025))
    tm = trimesh.util.concatenate([base, wall])
    return validate_mesh(tm.vertices, tm.faces, "test", "ell")
