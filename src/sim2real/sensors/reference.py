"""The reference of a real depth frame: per pixel, the true surface the sensor saw.

``load_real_frame`` (``sim2real.sensors.real_frame``) reads a real frame (a depth image, or an
organised point cloud); ``build_reference`` pairs it with reference geometry: known parts at their (ICP-refined)
poses, rendered, and the planes found in the rest of the frame (``sim2real.sensors.planes``).
Calibration fits a noise profile to the measured depth against this reference; the gap
measurement compares a simulation with it.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from scipy import ndimage

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.errors import InputError
from sim2real.core.mesh_io import Mesh
from sim2real.sensors.part_fit import PartFit, refine_part_pose, render_part
from sim2real.sensors.planes import PlaneFit, find_planes
from sim2real.sensors.real_frame import check_frame_size, load_real_frame
from sim2real.sensors.reference_frame import NO_REGION, NOISE_WINDOW_PX, ReferenceFrame, Region

__all__ = [
    "PartFit",
    "PlaneFit",
    "build_reference",
    "fill_gaps_along_rows",
    "find_planes",
    "load_real_frame",
    "references_from_files",
    "refine_part_pose",
    "scene_edges",
]

OCCLUSION_MARGIN_M = 0.03
"""A measured depth more than 3 cm nearer than a known part is something in front of it: those
pixels are left out of the part's region."""


MAX_FILLED_GAP_PX = 64
"""Longer runs of no return are not filled: a dark surface, not a dropout or a shadow band
(fB / z stays below this for stereo and structured light beyond ~0.35 m), and filling them
row by row would draw false edges between rows."""


def fill_gaps_along_rows(depth_m: np.ndarray, max_gap_px: int = MAX_FILLED_GAP_PX) -> np.ndarray:
    """(H, W) metres, 0 = no return -> the same with every run of zeros along a row that has a
    valid depth on both sides, and is at most ``max_gap_px`` long, filled with the larger
    (farther) of the two. Other runs, and rows without any return, stay 0. Dropouts and the emitter's shadow band
    (which lies beside a near surface, toward the far one) then take the background's depth,
    so that the depth edge is where the foreground ends, not where the data does."""
    depth = np.asarray(depth_m, dtype=np.float32)
    h, w = depth.shape
    valid = depth > 0
    cols = np.broadcast_to(np.arange(w), (h, w))
    left = np.maximum.accumulate(np.where(valid, cols, -1), axis=1)
    right = np.minimum.accumulate(np.where(valid, cols, w)[:, ::-1], axis=1)[:, ::-1]
    rows = np.arange(h)[:, None]
    bounded = (left >= 0) & (right < w) & (right - left - 1 <= max_gap_px)
    farther = np.maximum(
        depth[rows, np.clip(left, 0, w - 1)], depth[rows, np.clip(right, 0, w - 1)]
    )
    return np.where(valid, depth, np.where(bounded, farther, 0)).astype(np.float32)


def scene_edges(depth_m: np.ndarray) -> np.ndarray:
    """(H, W) bool depth discontinuities of a measured frame: ``depth_edges`` of the frame with
    its gaps filled along rows (``fill_gaps_along_rows``); what stays unfilled (runs at the
    image border, empty rows) is no edge, nor is its border with the data."""
    from sim2real.sensors.render import depth_edges

    filled = fill_gaps_along_rows(depth_m)
    return depth_edges(np.where(filled > 0, filled, np.float32(np.nan)))


def _validated(depth_m: np.ndarray, camera: CameraIntrinsics, source: str) -> np.ndarray:
    depth = np.asarray(depth_m)
    if depth.ndim != 2:
        raise InputError(source, "depth_m", f"expected an (H, W) array, got shape {depth.shape}")
    check_frame_size(source, depth.shape, camera)
    depth = depth.astype(np.float32)
    bad = ~np.isfinite(depth) | (depth < 0)
    if bad.any():
        warnings.warn(
            f"{source}: {int(bad.sum())} non-finite or negative depth values read as no return",
            stacklevel=3,
        )
        depth = np.where(bad, 0, depth).astype(np.float32)
    if not (depth > 0).any():
        raise InputError(source, "depth_m", "no valid depth: every pixel is 0 (no return)")
    return depth


def _fit_parts(depth, camera, parts, refine, seed) -> list[PartFit]:
    fits = []
    for mesh, T in parts:
        if refine:
            fits.append(refine_part_pose(depth, camera, mesh, T, seed=seed))
            continue
        frame = render_part(mesh, np.asarray(T, dtype=np.float64), camera)
        report = {"accepted": False, "reason": "not refined (refine_parts=False)"}
        fits.append(
            PartFit(
                np.asarray(T, np.float64),
                report,
                frame.valid,
                frame.depth_m,
                frame.normal_cam,
                frame.incidence_rad,
            )
        )
    return fits


def build_reference(
    depth_m: np.ndarray,
    camera: CameraIntrinsics,
    *,
    source: str,
    planes: bool = True,
    parts: Sequence[tuple[Mesh, np.ndarray]] = (),
    refine_parts: bool = True,
    seed: int = 0,
) -> ReferenceFrame:
    """Reference geometry for a real frame ((H, W) float metres, 0 = no return; ``source``
    names it in errors and in the result).

    Parts (``(mesh, T_cam_part)`` pairs) come first: each pose is refined by ICP
    (``refine_part_pose``) unless ``refine_parts`` is False, and the part is rendered there.
    A part's pixels take priority (the nearest part wins where they overlap), except where the
    measured depth is more than OCCLUSION_MARGIN_M nearer (something in front of it). Then
    ``find_planes`` searches the remaining pixels (when ``planes``). Per region: the reference
    depth (plane: z = -d / (n . ray)), normals facing the camera, incidence, region_id. The
    ``edge`` map is ``scene_edges`` of the measured frame (``depth_edges`` with its gaps
    filled along rows by ``fill_gaps_along_rows``); ``interior`` holds the pixels whose
    NOISE_WINDOW_PX window lies in their own region. Raises InputError(source, 'planes') when
    there is no region at all. Regions: the parts in the order given, then the planes by
    decreasing support.
    """
    depth = _validated(depth_m, camera, source)
    shape = depth.shape
    region_id = np.full(shape, NO_REGION, dtype=np.int32)
    ref = np.zeros(shape, dtype=np.float32)
    normals = np.zeros((*shape, 3), dtype=np.float32)
    incidence = np.zeros(shape, dtype=np.float32)
    regions: list[Region] = []

    part_fits = _fit_parts(depth, camera, parts, refine_parts, seed)
    nearest = np.full(shape, np.inf, dtype=np.float32)
    for fit in part_fits:
        nearest = np.where(fit.region, np.minimum(nearest, fit.ref_depth_m), nearest)
    for (mesh, _), fit in zip(parts, part_fits, strict=True):
        visible = fit.region & (fit.ref_depth_m <= nearest)
        occluded = visible & (depth > 0) & (depth < fit.ref_depth_m - OCCLUSION_MARGIN_M)
        mask = visible & ~occluded
        region_id[mask] = len(regions)
        ref[mask] = fit.ref_depth_m[mask]
        normals[mask] = fit.normal_cam[mask]
        incidence[mask] = fit.incidence_rad[mask]
        info = {
            "mesh": mesh.path or mesh.name,
            "T_cam_part": fit.T_cam_part.tolist(),
            "occluded_pixels": int(occluded.sum()),
            **fit.report,
        }
        regions.append(Region("part", mesh.name, int(mask.sum()), info))
    claimed = np.isfinite(nearest)

    if planes:
        rays = camera.pixel_rays()
        for i, plane in enumerate(find_planes(np.where(claimed, 0, depth), camera, seed=seed)):
            plane_depth = plane.depth_m(camera)
            mask = plane.region & ~claimed & (plane_depth > 0)
            n = plane.normal_cam.astype(np.float32)
            region_id[mask] = len(regions)
            ref[mask] = plane_depth[mask]
            normals[mask] = n
            r = rays[mask]
            cos = np.abs(r @ n) / np.linalg.norm(r, axis=1)
            incidence[mask] = np.arccos(np.clip(cos, 0, 1))
            info = {
                "normal_cam": plane.normal_cam.tolist(),
                "offset_m": plane.offset_m,
                "inlier_rms_m": plane.inlier_rms_m,
                "inliers": plane.support_px,
            }
            regions.append(Region("plane", f"plane_{i}", int(mask.sum()), info))

    if not regions:
        raise InputError(
            source,
            "planes",
            ("no plane with enough support found in the frame" if planes else "no plane search")
            + " and no part given: nothing to calibrate against",
        )
    edge = scene_edges(depth)
    if edge.any():
        edge_distance = ndimage.distance_transform_edt(~edge).astype(np.float32)
    else:
        edge_distance = np.full(shape, np.hypot(*shape), dtype=np.float32)
    size = NOISE_WINDOW_PX
    low = ndimage.minimum_filter(region_id, size=size, mode="constant", cval=NO_REGION)
    high = ndimage.maximum_filter(region_id, size=size, mode="constant", cval=NO_REGION)
    interior = (region_id != NO_REGION) & (low == high)
    return ReferenceFrame(
        source=source,
        camera=camera,
        depth_m=depth,
        ref_depth_m=ref,
        normal_cam=normals,
        incidence_rad=incidence,
        region_id=region_id,
        edge=edge,
        edge_distance_px=edge_distance,
        interior=interior,
        regions=regions,
    )


def references_from_files(
    frames: Sequence[str | Path],
    camera_path: str | Path | None,
    *,
    parts: Sequence[tuple[Mesh, np.ndarray]] = (),
    planes: bool = True,
    encoding: str = "auto",
    depth_scale: float | None = None,
    seed: int = 0,
) -> list[ReferenceFrame]:
    """Load each real frame (a depth image, or an organised point cloud, which brings its own
    camera) and build its reference geometry. The parts' poses hold for every frame (a static
    camera) and are refined per frame."""
    from sim2real.core.camera_io import load_camera_sized_by

    if not frames:
        raise InputError(None, "--frames", "give at least one real depth frame")
    camera = load_camera_sized_by(camera_path, frames[0]) if camera_path is not None else None
    refs = []
    for path in frames:
        depth, frame_camera = load_real_frame(
            path, camera, encoding=encoding, depth_scale=depth_scale
        )
        refs.append(
            build_reference(
                depth, frame_camera, source=str(path), planes=planes, parts=parts, seed=seed
            )
        )
    return refs
