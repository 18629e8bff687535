"""Per-pixel shading of a ray cast: Lambert plus a Blinn-Phong specular lobe for point and
directional lights, ambient light, and cast shadows from one occlusion ray per light on a
subsampled pixel grid, found coarse to fine (nearest upsampling). Linear RGB; the camera's
response is image_terms.

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
    needed: np.ndarray | None = None,
) -> np.ndarray:
    """(L, N) bool: whether each point ((3, N), camera frame) sees each light, from one
    occlusion ray per point and light (``test_occlusions(rays (M, 6), tfar) -> (M,) bool``,
    the renderer's scene); rays start ``SHADOW_OFFSET_M`` off the surface. A point whose
    surface faces away from a light is unlit by it anyway: no ray, False. ``needed``: (L, N)
    bool, the (light, point) pairs to find (the others come back False; None: all)."""
    n, k = points.shape[1], len(lights)
    visible = np.zeros((k, n), bool)
    if n == 0 or k == 0:
        return visible
    origins = (points + normals * np.float32(SHADOW_OFFSET_M)).astype(np.float32)
    batches, which = [], []
    for i, light in enumerate(lights):
        vector = np.asarray(light.vector, np.float32)[:, None]
        if light.kind == "directional":
            d = np.broadcast_to(vector * np.float32(SUN_SHADOW_M), origins.shape)
        else:
            d = vector - origins
        facing = _dot(normals, d) > 0
        if needed is not None:
            facing &= needed[i]
        facing = np.flatnonzero(facing)
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
    """(L, H, W) bool light visibility on every ``stride``-th pixel per axis (where ``valid``),
    upsampled by nearest neighbour. Found coarse to fine: shadow rays first on every second
    sample of that grid, then only on the samples between coarse ones that disagree (a
    shadow's border, a surface turning from the light); a sample amid agreeing ones takes
    their value. A shadow narrower than two samples can fall between coarse samples and be
    missed; it cost half the rays of the whole grid on randomized frames. points, normals:
    (3, H, W) camera frame; valid: (H, W)."""
    h, w = valid.shape
    sub = valid[::stride, ::stride]
    hs, ws = sub.shape
    pts = points[:, ::stride, ::stride]
    nrm = normals[:, ::stride, ::stride]
    n_lights = len(lights)
    coarse_valid = sub[::2, ::2]
    coarse = np.ones((n_lights, *coarse_valid.shape), bool)  # no surface: lit (never shaded)
    where = np.flatnonzero(coarse_valid)
    coarse.reshape(n_lights, -1)[:, where] = shadow_visibility(
        test_occlusions,
        pts[:, ::2, ::2].reshape(3, -1)[:, where],
        nrm[:, ::2, ::2].reshape(3, -1)[:, where],
        lights,
    )
    # each sample's coarse neighbours: rows i // 2 and (i + 1) // 2, the same for columns
    r0, c0 = np.arange(hs) // 2, np.arange(ws) // 2
    r1 = np.minimum((np.arange(hs) + 1) // 2, coarse.shape[1] - 1)
    c1 = np.minimum((np.arange(ws) + 1) // 2, coarse.shape[2] - 1)
    corners = [coarse[:, r][:, :, c] for r in (r0, r1) for c in (c0, c1)]
    all_lit = corners[0] & corners[1] & corners[2] & corners[3]
    any_lit = corners[0] | corners[1] | corners[2] | corners[3]
    needed = (all_lit != any_lit) & sub
    needed[:, ::2, ::2] = False  # the coarse samples themselves are known
    vis = all_lit.reshape(n_lights, -1)  # at the coarse samples: their own value
    cells = np.flatnonzero(needed.any(axis=0))
    if cells.size:
        need = needed.reshape(n_lights, -1)[:, cells]
        found = shadow_visibility(test_occlusions, pts.reshape(3, -1)[:, cells],
                                  nrm.reshape(3, -1)[:, cells], lights, need)  # fmt: skip
        vis[:, cells] = np.where(need, found, vis[:, cells])
    vis = vis.reshape(n_lights, hs, ws)
    if stride == 1:
        return vis
    full = np.repeat(np.repeat(vis, stride, axis=1), stride, axis=2)
    return full[:, :h, :w]
