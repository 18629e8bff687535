"""Per-pixel shading of a ray cast: Lambert plus a Blinn-Phong specular lobe for point and
directional lights, ambient light, and cast shadows from one occlusion ray per light on a
subsampled pixel grid (nearest upsampling). Linear RGB; the camera's response is image_terms.

Arrays are planar, (3, N) rather than (N, 3): every product is then a pass over contiguous
rows (an (N, 3) einsum or row gather took 5-10x as long at 320x240, benchmarks/RESULTS.md)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SHADOW_OFFSET_M = 1e-3
"""Shadow rays start this far off the surface along its normal (no self-shadowing)."""
SUN_SHADOW_M = 1.0
"""A directional light's shadow ray is this long: occluders on the table cast shadows, the
room's walls (which would hide a sun outside them) do not."""


@dataclass(frozen=True)
class CameraLight:
    """A light in the camera frame."""

    kind: str  # "point" or "directional"
    vector: np.ndarray  # point: position [m]; directional: unit vector toward the light
    rgb: np.ndarray  # (3,) colour x intensity (at ``distance_m`` for a point light)
    distance_m: float = 0.0


def _dot(a, b) -> np.ndarray:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def light_directions(points: np.ndarray, light: CameraLight) -> tuple[np.ndarray, np.ndarray]:
    """(3, N) unit vectors from ``points`` (3, N) toward the light (a (3, 1) column for a
    directional light) and its irradiance factor: 1 for a directional light, (N,)
    (distance_m / |P - p|)^2 for a point light."""
    vector = np.asarray(light.vector, np.float32)[:, None]
    if light.kind == "directional":
        return vector, np.ones(1, np.float32)
    to = vector - points
    d2 = np.maximum(_dot(to, to), np.float32(1e-8))
    to *= 1 / np.sqrt(d2)
    return to, np.float32(light.distance_m**2) / d2


def shade(
    points: np.ndarray,
    normals: np.ndarray,
    albedo: np.ndarray,
    specular: np.ndarray,
    shininess: np.ndarray,
    lights: list[CameraLight],
    ambient: float,
    visible: np.ndarray | None = None,
) -> np.ndarray:
    """(3, N) float32 linear radiance of N surface points seen from the camera at the origin:
    ``albedo * ambient + sum_l vis_l * E_l * (albedo * max(0, n.L) + k_s * max(0, n.H)^s)``,
    the specular term only where n.L > 0. points, normals (unit, facing the camera): (3, N)
    camera frame; albedo (3, N) in [0, 1]; specular k_s, shininess s: (N,); visible: (L, N)
    bool per light (None: all lit)."""
    points = np.asarray(points, np.float32)
    normals = np.asarray(normals, np.float32)
    albedo = np.asarray(albedo, np.float32)
    specular = np.asarray(specular, np.float32)
    shininess = np.asarray(shininess, np.float32)
    out = albedo * np.float32(ambient)
    view = points * (np.float32(-1) / np.sqrt(_dot(points, points) + np.float32(1e-18)))
    for i, light in enumerate(lights):
        L, fall = light_directions(points, light)
        n_l = _dot(normals, L)
        lit = n_l > 0
        if visible is not None:
            lit &= visible[i]
        if not lit.any():
            continue
        H = view + L
        n_h = _dot(normals, H)
        n_h /= np.sqrt(_dot(H, H) + np.float32(1e-18))
        w = np.where(lit, fall, np.float32(0))
        spec = np.power(np.maximum(n_h, 0, out=n_h), shininess, out=n_h)
        spec *= specular
        spec *= w
        n_l *= w
        rgb = np.asarray(light.rgb, np.float32)
        for c in range(3):
            out[c] += (albedo[c] * n_l + spec) * rgb[c]
    return out


def shadow_visibility(
    test_occlusions,
    points: np.ndarray,
    normals: np.ndarray,
    lights: list[CameraLight],
) -> np.ndarray:
    """(L, N) bool: whether each point ((3, N), camera frame) sees each light, from one
    occlusion ray per point and light (``test_occlusions(rays (M, 6), tfar) -> (M,) bool``,
    the renderer's scene); rays start ``SHADOW_OFFSET_M`` off the surface. A point whose
    surface faces away from a light is unlit by it anyway: no ray, False."""
    n, k = points.shape[1], len(lights)
    visible = np.zeros((k, n), bool)
    if n == 0 or k == 0:
        return visible
    origins = (points + normals * np.float32(SHADOW_OFFSET_M)).astype(np.float32)
    batches, which = [], []
    for light in lights:
        vector = np.asarray(light.vector, np.float32)[:, None]
        if light.kind == "directional":
            d = np.broadcast_to(vector * np.float32(SUN_SHADOW_M), origins.shape)
        else:
            d = vector - origins
        facing = np.flatnonzero(_dot(normals, d) > 0)
        rays = np.empty((len(facing), 6), np.float32)
        for c in range(3):
            np.take(origins[c], facing, out=rays[:, c])
            np.take(d[c], facing, out=rays[:, 3 + c])
        batches.append(rays)
        which.append(facing)
    rays = np.concatenate(batches)
    if len(rays):
        hidden = test_occlusions(rays, 1.0)
        start = 0
        for i, facing in enumerate(which):
            visible[i, facing] = ~hidden[start : start + len(facing)]
            start += len(facing)
    return visible


def grid_visibility(
    test_occlusions,
    points: np.ndarray,
    normals: np.ndarray,
    valid: np.ndarray,
    lights: list[CameraLight],
    stride: int,
) -> np.ndarray:
    """(L, H, W) bool light visibility from shadow rays on every ``stride``-th pixel per axis
    (where ``valid``), upsampled by nearest neighbour. points, normals: (3, H, W) camera
    frame; valid: (H, W)."""
    h, w = valid.shape
    sub = valid[::stride, ::stride]
    where = np.flatnonzero(sub)

    def pick(a):
        return a[:, ::stride, ::stride].reshape(3, -1)[:, where]

    vis_sub = np.ones((len(lights), *sub.shape), bool)
    vis_sub.reshape(len(lights), -1)[:, where] = shadow_visibility(
        test_occlusions, pick(points), pick(normals), lights
    )
    if stride == 1:
        return vis_sub
    full = np.repeat(np.repeat(vis_sub, stride, axis=1), stride, axis=2)
    return full[:, :h, :w]
