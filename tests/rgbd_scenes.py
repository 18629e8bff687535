"""Test parts of the kinds real trackers fail on (thin and organic, dark) and RGB-D frames of
them: depth from the project's renderer, colour as flat paint on the part's silhouette in the
colour camera over a checkerboard, and the loss of thin features a stereo sensor shows."""

import itertools

import numpy as np
import trimesh
from scipy import ndimage

from sim2real.core.mesh_io import Mesh, validate_mesh
from sim2real.sensors.render import DepthRenderer
from sim2real.sensors.scene import Scene, SceneObject, make_scene


def _tube(points, radius):
    parts = []
    for a, b in itertools.pairwise(points):
        parts.append(trimesh.creation.cylinder(radius=radius, segment=[a, b], sections=10))
        parts.append(trimesh.creation.icosphere(1, radius=radius).apply_translation(b))
    return parts


def figurine() -> Mesh:
    """A dragon-like figurine, 16 cm long: a body and a head, four 7 mm legs, a 6 mm tail,
    3.6 mm horns and two 2 mm wing plates (thin features a depth sensor loses)."""
    parts = []
    body = trimesh.creation.capsule(height=0.06, radius=0.018, count=[16, 16])
    body.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [0, 1, 0]))
    parts.append(body.apply_translation([0, 0, 0.045]))
    parts.append(trimesh.creation.icosphere(3, radius=0.014).apply_translation([0.05, 0, 0.075]))
    parts += _tube(np.array([[0.035, 0, 0.05], [0.045, 0, 0.068]]), 0.007)
    for x in (-0.025, 0.025):
        for y in (-0.012, 0.012):
            legs = np.array([[x, y, 0.04], [x + 0.004, y * 1.3, 0.015], [x, y * 1.3, 0.0]])
            parts += _tube(legs, 0.0035)
    t = np.linspace(0, 1, 8)
    parts += _tube(
        np.stack([-0.045 - 0.05 * t, 0.02 * np.sin(3 * t), 0.045 + 0.03 * t**2], 1), 0.003
    )
    for y in (-0.006, 0.006):
        parts += _tube(np.array([[0.055, y, 0.085], [0.06, y * 2, 0.1]]), 0.0018)
    for s in (-1, 1):
        wing = trimesh.creation.box((0.03, 0.035, 0.002))
        wing.apply_transform(trimesh.transformations.rotation_matrix(s * 0.6, [1, 0, 0]))
        parts.append(wing.apply_translation([0.0, s * 0.03, 0.07]))
    m = trimesh.util.concatenate(parts)
    return validate_mesh(m.vertices, m.faces, "figurine", "figurine")


def part_mask(mesh: Mesh, T_cam_part: np.ndarray, camera) -> np.ndarray:
    """(H, W) bool: the pixels where ``camera`` sees the part (alone) at ``T_cam_part``."""
    return DepthRenderer(Scene([SceneObject(mesh, T_cam_part)]), camera).render(None).depth_m > 0


def paint(mask: np.ndarray, part_rgb=(200, 40, 30), seed: int = 0, cell_px: int = 14) -> np.ndarray:
    """(H, W, 3) uint8: the part in ``part_rgb`` over a grey-and-blue checkerboard, with
    Gaussian colour noise (std 6)."""
    h, w = mask.shape
    yy, xx = np.mgrid[0:h, 0:w]
    checker = ((xx // cell_px + yy // cell_px) % 2).astype(bool)
    img = np.where(checker[..., None], np.array([210, 210, 205]), np.array([40, 60, 110]))
    img = np.where(mask[..., None], np.array(part_rgb), img).astype(np.float64)
    img += np.random.default_rng(seed).normal(0, 6, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def depth_of(mesh, T, camera, profile=None, seed=0, plane=True) -> np.ndarray:
    return DepthRenderer(make_scene([mesh], [T], plane=plane), camera).render(profile, seed).depth_m


def without_thin_features(mesh, T, camera, depth: np.ndarray, window_px: int = 7) -> np.ndarray:
    """``depth`` as a stereo camera would give it: parts of the part thinner than its matching
    window (``window_px``) are lost, the surface behind them shows (here: a frame without the
    part, its table kept)."""
    mask = part_mask(mesh, T, camera)
    thin = mask & ~ndimage.binary_opening(mask, np.ones((window_px, window_px), bool))
    away = T.copy()
    away[:3, 3] += 100.0  # the part far out of view: what stands behind it
    plane = make_scene([mesh], [T], plane=True).plane
    behind = DepthRenderer(Scene([SceneObject(mesh, away)], plane, ["part"]), camera).render(None)
    out = depth.copy()
    out[thin] = behind.depth_m[thin]
    return out
