"""Per-pixel shading of a ray cast: Lambert plus a Blinn-Phong specular lobe for point and
directional lights, ambient light, and cast shadows from one occlusion ray per light on a
subsampled pixel grid (nearest upsampling). Linear RGB; the camera's response is image_terms."""

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


def light_directions(points: np.ndarray, light: CameraLight) -> tuple[np.ndarray, np.ndarray]:
    """(N, 3) unit vectors from ``points`` (N, 3) toward the light, and (N,) its irradiance
    factor: 1 for a directional light, (distance_m / |P - p|)^2 for a point light."""
    if light.kind == "directional":
        L = np.broadcast_to(np.asarray(light.vector, np.float32), points.shape)
        return L, np.ones(len(points), np.float32)
    to = np.asarray(light.vector, np.float32) - points
    d2 = np.maximum(np.einsum("ij,ij->i", to, to), np.float32(1e-8))
    L = to / np.sqrt(d2)[:, None]
    return L, (np.float32(light.distance_m**2) / d2).astype(np.float32)


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
    """(N, 3) float32 linear radiance of N surface points seen from the camera at the origin:
    ``albedo * ambient + sum_l vis_l * E_l * (albedo * max(0, n.L) + k_s * max(0, n.H)^s)``,
    the specular term only where n.L > 0. points, normals (unit, facing the camera): (N, 3)
    camera frame; albedo (N, 3) in [0, 1]; specular k_s, shininess s: (N,); visible: (N, L)
    bool per light (None: all lit)."""
    points = np.asarray(points, np.float32)
    out = albedo * np.float32(ambient)
    view = -points / np.sqrt(np.einsum("ij,ij->i", points, points) + 1e-18)[:, None]
    shininess = np.asarray(shininess, np.float32)
    for i, light in enumerate(lights):
        L, fall = light_directions(points, light)
        n_l = np.einsum("ij,ij->i", normals, L)
        lit = n_l > 0
        if visible is not None:
            lit &= visible[:, i]
        if not lit.any():
            continue
        H = L + view
        n_h = np.einsum("ij,ij->i", normals, H) / np.sqrt(np.einsum("ij,ij->i", H, H) + 1e-18)
        w = np.where(lit, fall, np.float32(0))
        spec = np.asarray(specular, np.float32) * np.power(np.maximum(n_h, 0), shininess)
        out += (albedo * (n_l * w)[:, None] + (spec * w)[:, None]) * np.asarray(
            light.rgb, np.float32
        )
    return out


def shadow_visibility(
    test_occlusions,
    points: np.ndarray,
    normals: np.ndarray,
    lights: list[CameraLight],
) -> np.ndarray:
    """(N, L) bool: whether each point (N, 3, camera frame) sees each light, from one
    occlusion ray per point and light (``test_occlusions(rays (M, 6), tfar) -> (M,) bool``,
    the renderer's scene); rays start ``SHADOW_OFFSET_M`` off the surface. A point whose
    surface faces away from a light is unlit by it anyway: no ray, False."""
    n, k = len(points), len(lights)
    visible = np.zeros((n, k), bool)
    if n == 0 or k == 0:
        return visible
    origins = (points + normals * np.float32(SHADOW_OFFSET_M)).astype(np.float32)
    batches, which = [], []
    for light in lights:
        if light.kind == "directional":
            d = np.broadcast_to(np.asarray(light.vector, np.float32) * np.float32(SUN_SHADOW_M),
                                origins.shape)  # fmt: skip
        else:
            d = np.asarray(light.vector, np.float32) - origins
        facing = np.flatnonzero(np.einsum("ij,ij->i", normals, d) > 0)
        batches.append(np.concatenate([origins[facing], d[facing]], axis=1))
        which.append(facing)
    rays = np.concatenate(batches)
    if len(rays):
        hidden = test_occlusions(rays, 1.0)
        start = 0
        for i, facing in enumerate(which):
            visible[facing, i] = ~hidden[start : start + len(facing)]
            start += len(facing)
    return visible


def grid_visibility(
    test_occlusions,
    directions: np.ndarray,
    depth_m: np.ndarray,
    normals: np.ndarray,
    valid: np.ndarray,
    lights: list[CameraLight],
    stride: int,
) -> np.ndarray:
    """(H, W, L) bool light visibility from shadow rays on every ``stride``-th pixel per axis
    (where ``valid``), upsampled by nearest neighbour. directions (z = 1), normals: (H, W, 3);
    depth_m: (H, W) metres along z."""
    h, w = valid.shape
    sub = valid[::stride, ::stride]
    points = directions[::stride, ::stride][sub] * depth_m[::stride, ::stride][sub][:, None]
    vis_sub = np.ones((*sub.shape, len(lights)), bool)
    vis_sub[sub] = shadow_visibility(
        test_occlusions, points, normals[::stride, ::stride][sub], lights
    )
    if stride == 1:
        return vis_sub
    full = np.repeat(np.repeat(vis_sub, stride, axis=0), stride, axis=1)
    return full[:h, :w]
