"""Planes in a real depth frame: the reference surfaces calibration compares the sensor against.

``find_planes`` segments several planes per frame, one after the other: RANSAC (seeded,
repeatable) finds a plane's model on a subsample of the pixels not yet assigned, with a
threshold relative to their depth; the pixels are then assigned with a gate that grows with
depth (noise grows about as z² for Kinect and stereo sensors, so one threshold cannot serve a
floor from 0.5 to 4 m), the plane is refitted on them, and only spatially coherent pieces are
kept, so a plane does not claim scattered pixels of other surfaces that happen to cross it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from sim2real.core.camera import CameraIntrinsics

SUBSAMPLE = 2
"""RANSAC runs on every 2nd pixel of every 2nd row..."""
RANSAC_RELATIVE_THRESHOLD = 0.012
"""RANSAC inlier distance: 1.2 % of the median depth of the pixels searched..."""
RANSAC_MIN_THRESHOLD_M = 0.004
"""... and at least 4 mm."""
RANSAC_ITERATIONS = 500
RANSAC_MAX_POINTS = 20_000
"""... on at most 20 000 of them (drawn with the seed)."""
RANSAC_SCORE_POINTS = 2000
RANSAC_FINALISTS = 10
"""Every candidate is scored on 2,000 of those points, the 10 best on all of them."""
MIN_SUPPORT_PX = 2000
"""A plane needs at least this many inlier pixels, whatever ``min_support`` says."""
GATE_SIGMAS = 3.0
"""A pixel is a plane's inlier when its depth residual is within 3 robust sigmas..."""
GATE_FLOOR_M = 0.002
GATE_FLOOR_RELATIVE = 0.003
"""... never a gate below max(2 mm, 0.3 % of the depth): quantized depth has a MAD of 0..."""
GATE_MAX_RELATIVE = 0.04
"""... and never above 4 % of the depth (3 sigma of a Kinect v1 at 4 m is 2 %)."""
MAX_RELATIVE_RMS = 0.02
"""A plane whose inliers deviate by more than 2 % of their depth (RMS) is not kept: a surface
seen at grazing incidence, or a curved one that fills the whole gate. (A gently curved
surface that stays within the gate, e.g. a person's torso, is not caught.)"""
GATE_ITERATIONS = 3
"""Refit, re-estimate sigma, re-gate: a gate that starts at 1 sigma reaches 3 in three rounds."""
BIN_MIN_PX = 1500
MAX_BINS = 8
"""The residual's sigma is estimated in up to 8 depth bins (quantiles) of >= 1500 pixels."""
SIGMA_GROWTH_SLACK = 1.5
"""A bin's sigma is at most 1.5 x (z / z_nearer)^2 times that of any nearer bin."""
MIN_COMPONENT_PX = 500
"""A connected piece of a plane is kept when it holds >= max(500, a quarter of the least
support of a plane) of its inliers (a plane may be seen in several pieces, a table between
objects, but not as scattered pixels of other surfaces that cross it)..."""
PIECE_MAX_ANGLE_DEG = 10.0
"""... and when its own plane is within 10 deg of the plane's."""
REGION_CLOSING_PX = 1
"""The region closes gaps of about 2 px between inliers (a 3×3 closing)..."""
REGION_HOLE_PX = 50
"""... and fills enclosed holes smaller than 50 px (dropouts), not larger (objects on it)."""
MAX_FAILED_SEARCHES = 2
"""A RANSAC plane without enough coherent support is set aside; after two such, stop."""


@dataclass
class PlaneFit:
    """A plane seen in a depth frame, in the camera frame (OpenCV axes).

    The plane is ``{x : normal_cam . x + offset_m = 0}`` with ``normal_cam`` a unit vector
    facing the camera, so that ``offset_m`` > 0 is the distance from the camera centre to the
    plane. Pixel (u, v) with ray r = ((u - cx)/fx, (v - cy)/fy, 1) sees the plane at depth
    z = -offset_m / (normal_cam . r).
    """

    normal_cam: np.ndarray
    """(3,) float64 unit normal, facing the camera."""
    offset_m: float
    """Distance from the camera centre to the plane [m] (> 0)."""
    inliers: np.ndarray
    """(H, W) bool: valid pixels assigned to this plane (each pixel to one plane at most)."""
    region: np.ndarray
    """(H, W) bool: the inliers with small gaps closed and holes < 50 px filled, so it holds the
    plane's own dropouts and outliers but not large objects lying on it; disjoint from the
    other planes' regions."""
    inlier_rms_m: float
    """RMS of the inliers' depth residual (measured depth - plane depth along the pixel's
    ray, in z) [m]."""

    @property
    def support_px(self) -> int:
        return int(self.inliers.sum())

    def depth_m(self, camera: CameraIntrinsics) -> np.ndarray:
        """(H, W) float32 depth z of the plane along every pixel's ray [m]; 0 where the ray
        does not meet the plane in front of the camera."""
        facing = camera.pixel_rays() @ self.normal_cam.astype(np.float32)
        depth = np.zeros(facing.shape, dtype=np.float32)
        hit = facing < -1e-6
        depth[hit] = -np.float32(self.offset_m) / facing[hit]
        return depth


def _facing_camera(plane: np.ndarray) -> np.ndarray:
    """The plane (n, d) with n unit and d >= 0, i.e. n facing the camera centre."""
    plane = plane / np.linalg.norm(plane[:3])
    return -plane if plane[3] < 0 else plane


def _ransac(points: np.ndarray, threshold_m: float, seed: int) -> np.ndarray:
    """(4,) plane (n, d) facing the camera: RANSAC on (N, 3) points (at most RANSAC_MAX_POINTS,
    drawn with the seed), RANSAC_ITERATIONS triplets, the plane with most points within
    ``threshold_m``, refitted to them by least squares. numpy, not Open3D's segment_plane:
    that one is not repeatable with several threads even with its seed set (Open3D issue
    #7270), and a calibration must give the same planes on every run."""
    rng = np.random.default_rng(seed)
    if len(points) > RANSAC_MAX_POINTS:
        points = points[rng.choice(len(points), RANSAC_MAX_POINTS, replace=False)]
    points = points.astype(np.float64)
    triplets = rng.integers(0, len(points), size=(RANSAC_ITERATIONS, 3))
    a, b, c = (points[triplets[:, k]] for k in range(3))
    normals = np.cross(b - a, c - a)
    norm = np.linalg.norm(normals, axis=1)
    good = norm > 1e-12
    normals = normals[good] / norm[good, None]
    offsets = -np.einsum("ij,ij->i", normals, a[good])
    # score every candidate on a subset first, then the best few on every point (the
    # preemptive scheme: the same winner as scoring all on all, at a tenth of the work)
    pts32 = points.astype(np.float32)
    subset = pts32[rng.choice(len(pts32), min(len(pts32), RANSAC_SCORE_POINTS), replace=False)]
    dist = np.abs(subset @ normals.T.astype(np.float32) + offsets.astype(np.float32))
    rough = (dist < threshold_m).sum(axis=0)
    if rough.size == 0:
        return _weighted_plane(points, np.ones(len(points)))
    top = np.argsort(-rough, kind="stable")[:RANSAC_FINALISTS]
    dist = np.abs(pts32 @ normals[top].T.astype(np.float32) + offsets[top].astype(np.float32))
    k = top[int(np.argmax((dist < threshold_m).sum(axis=0)))]
    best = (normals[k], offsets[k])
    inliers = np.abs(points @ best[0] + best[1]) < threshold_m
    return _weighted_plane(points[inliers], np.ones(int(inliers.sum())))


def _weighted_plane(points: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(4,) plane (n, d) facing the camera, by weighted total least squares on (N, 3) points."""
    w = weights / weights.sum()
    centroid = w @ points
    centred = points - centroid
    scatter = (centred * w[:, None]).T @ centred
    normal = np.linalg.eigh(scatter)[1][:, 0]
    return _facing_camera(np.append(normal, -normal @ centroid))


def _depth_residual(plane: np.ndarray, rays: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Measured depth minus the plane's depth along each ray [m]; inf where the ray misses."""
    facing = rays @ plane[:3]
    with np.errstate(divide="ignore", invalid="ignore"):
        residual = z + plane[3] / facing
    return np.where(facing < -1e-6, residual, np.inf)


def _gate(z: np.ndarray, residual: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """Per-pixel gate [m]: GATE_SIGMAS x a robust sigma of the candidates' residual,
    interpolated between bins of the plane's depth, with a floor. Binned by the plane's depth
    ``z - residual``, not the measured one: on a wall facing the camera the measured depth is
    the noise itself, so each bin would be a slice of it and its spread would collapse."""
    z = np.where(np.isfinite(residual), z - residual, z)  # a ray that misses: its own depth
    zc, rc = z[candidates], residual[candidates]
    floor = np.maximum(GATE_FLOOR_M, GATE_FLOOR_RELATIVE * z)
    if zc.size < BIN_MIN_PX:
        return floor * 2
    bins = int(np.clip(zc.size // BIN_MIN_PX, 1, MAX_BINS))
    order = np.argsort(zc)
    centres, sigmas = [], []
    for part in np.array_split(order, bins):
        r = rc[part]
        sigmas.append(1.4826 * np.median(np.abs(r - np.median(r))))
        centres.append(np.median(zc[part]))
    # noise grows about as z^2, not faster: a bin far beyond the others gets no more than that
    # (with slack), so pixels of another surface in one bin cannot widen the gate there
    centres, sigmas = np.asarray(centres), np.asarray(sigmas)
    for i in range(1, bins):
        growth = SIGMA_GROWTH_SLACK * (centres[i] / centres[:i]) ** 2
        sigmas[i] = min(sigmas[i], float(np.min(sigmas[:i] * growth)))
    sigma = np.interp(z, centres, sigmas)
    return np.clip(GATE_SIGMAS * sigma, floor, GATE_MAX_RELATIVE * z)


def _coherent(
    sel: np.ndarray,
    pixels: tuple[np.ndarray, np.ndarray],
    points: np.ndarray,
    normal: np.ndarray,
    shape: tuple[int, int],
    min_px: int,
) -> np.ndarray:
    """``sel`` (over the pixels ``(v, u)`` with ``points`` (N, 3)) restricted to its connected
    pieces (8-connected, across 1-px gaps) that hold at least ``min_px`` of its pixels and
    whose own best-fitting plane is within PIECE_MAX_ANGLE_DEG of ``normal``: the band where
    another surface crosses the plane is a piece of that other surface."""
    vv, uu = pixels
    image = np.zeros(shape, dtype=bool)
    image[vv[sel], uu[sel]] = True
    labels, count = ndimage.label(ndimage.binary_dilation(image), structure=np.ones((3, 3)))
    if count == 0:
        return sel
    lab = np.where(sel, labels[vv, uu], 0)
    n = np.bincount(lab, minlength=count + 1).astype(np.float64)
    keep = n >= min_px
    keep[0] = False
    if keep.any():  # each piece's scatter matrix, all pieces at once
        safe = np.maximum(n, 1)
        mean = np.stack([np.bincount(lab, points[:, k], count + 1) for k in range(3)], 1)
        mean /= safe[:, None]
        scatter = np.empty((count + 1, 3, 3))
        for a in range(3):
            for b in range(a, 3):
                m = np.bincount(lab, points[:, a] * points[:, b], count + 1) / safe
                scatter[:, a, b] = scatter[:, b, a] = m - mean[:, a] * mean[:, b]
        own = np.linalg.eigh(scatter[keep])[1][:, :, 0]
        angle = np.degrees(np.arccos(np.clip(np.abs(own @ normal), 0, 1)))
        keep[np.flatnonzero(keep)[angle > PIECE_MAX_ANGLE_DEG]] = False
    return sel & keep[lab]


def _region(inliers: np.ndarray) -> np.ndarray:
    """The inliers with gaps of ~2 px closed and enclosed holes < REGION_HOLE_PX filled."""
    r = REGION_CLOSING_PX
    padded = np.pad(inliers, r, mode="edge")
    closed = ndimage.binary_closing(padded, structure=np.ones((2 * r + 1,) * 2, dtype=bool))
    closed = closed[r:-r, r:-r] | inliers
    holes = ndimage.binary_fill_holes(closed) & ~closed
    labels, count = ndimage.label(holes)
    if count:
        small = np.bincount(labels.ravel(), minlength=count + 1) < REGION_HOLE_PX
        small[0] = False
        closed |= small[labels]
    return closed


def find_planes(
    depth_m: np.ndarray,
    camera: CameraIntrinsics,
    *,
    max_planes: int = 6,
    min_support: float = 0.03,
    seed: int = 0,
) -> list[PlaneFit]:
    """Planes of a depth frame, largest support first.

    ``depth_m``: (H, W) float metres, 0 = no return (pixels set to 0 are not searched).
    A plane is kept while its support (inlier pixels) is at least ``min_support`` of the valid
    pixels and at least MIN_SUPPORT_PX; the search stops after MAX_FAILED_SEARCHES planes
    without that support (or with a relative inlier RMS above MAX_RELATIVE_RMS). Each pixel
    is an inlier of at most one plane, and the planes' regions are disjoint (an earlier plane
    keeps a contested pixel).
    Deterministic for a given ``seed``.
    """
    depth = np.asarray(depth_m, dtype=np.float32)
    valid = depth > 0
    n_valid = int(valid.sum())
    min_px = max(int(np.ceil(min_support * n_valid)), MIN_SUPPORT_PX)
    min_piece = max(MIN_COMPONENT_PX, min_px // 4)
    rays_img = camera.pixel_rays()
    available = valid.copy()
    fits: list[PlaneFit] = []
    failures = 0
    while len(fits) < max_planes and failures < MAX_FAILED_SEARCHES:
        if int(available.sum()) < min_px:
            break
        sub = available[::SUBSAMPLE, ::SUBSAMPLE]
        sub_pts = (
            rays_img[::SUBSAMPLE, ::SUBSAMPLE][sub] * depth[::SUBSAMPLE, ::SUBSAMPLE][sub, None]
        )
        if len(sub_pts) < 3:
            break
        threshold = max(
            RANSAC_MIN_THRESHOLD_M, RANSAC_RELATIVE_THRESHOLD * float(np.median(sub_pts[:, 2]))
        )
        plane = _ransac(sub_pts, threshold, seed + len(fits) + failures)

        vv, uu = np.nonzero(available)
        z = depth[vv, uu].astype(np.float64)
        rays = rays_img[vv, uu].astype(np.float64)
        points = rays * z[:, None]
        residual = _depth_residual(plane, rays, z)
        # RANSAC's threshold is a distance to the plane; in depth it is threshold / cos(incidence)
        cos_inc = np.abs(rays @ plane[:3]) / np.linalg.norm(rays, axis=1)
        candidates = np.abs(residual) * np.maximum(cos_inc, 1e-3) < threshold
        gate = np.maximum(GATE_FLOOR_M, GATE_FLOOR_RELATIVE * z)
        for _ in range(GATE_ITERATIONS):
            candidates = _coherent(candidates, (vv, uu), points, plane[:3], depth.shape, min_piece)
            if candidates.sum() < 3:
                break
            gate = _gate(z, residual, candidates)
            plane = _weighted_plane(points[candidates], 1.0 / gate[candidates] ** 2)
            residual = _depth_residual(plane, rays, z)
            candidates = np.abs(residual) < gate
        sel = _coherent(candidates, (vv, uu), points, plane[:3], depth.shape, min_piece)
        support = int(sel.sum())
        if support >= 3:  # the final least-squares fit, on the final inliers
            plane = _weighted_plane(points[sel], 1.0 / gate[sel] ** 2)
            residual = _depth_residual(plane, rays, z)
        relative_rms = float(np.sqrt(np.mean((residual[sel] / z[sel]) ** 2))) if support else 0.0
        inliers = np.zeros(depth.shape, dtype=bool)
        inliers[vv[sel], uu[sel]] = True
        if support < min_px or relative_rms > MAX_RELATIVE_RMS:
            available[vv[candidates], uu[candidates]] = False  # set them aside, look again
            failures += 1
            continue
        r_in = residual[sel]
        fits.append(
            PlaneFit(
                normal_cam=plane[:3],
                offset_m=float(plane[3]),
                inliers=inliers,
                region=inliers,
                inlier_rms_m=float(np.sqrt(np.mean(r_in**2))),
            )
        )
        available &= ~inliers
    every = np.zeros(depth.shape, dtype=bool)
    for fit in fits:
        every |= fit.inliers
    taken = np.zeros(depth.shape, dtype=bool)
    for fit in fits:  # in the order found: an earlier plane keeps a contested pixel
        fit.region = _region(fit.inliers) & ~(every & ~fit.inliers) & ~taken
        taken |= fit.region
    return sorted(fits, key=lambda f: -f.support_px)
