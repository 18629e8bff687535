"""Tiny ``ReferenceFrame``s and ``PixelTables`` built by hand (no rendering, no plane search):
every array is given or follows from the depth directly, so a statistic of them is known
exactly."""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from sim2real.core.camera import CameraIntrinsics
from sim2real.sensors.reference_frame import NO_REGION, NOISE_WINDOW_PX, ReferenceFrame, Region
from sim2real.sensors.statistics import PixelTables


def camera_for(shape: tuple[int, int], fx: float = 500.0) -> CameraIntrinsics:
    h, w = shape
    return CameraIntrinsics(fx=fx, fy=fx, cx=(w - 1) / 2, cy=(h - 1) / 2, width=w, height=h)


def reference(
    depth_m: np.ndarray,
    ref_depth_m: np.ndarray | None = None,
    region_id: np.ndarray | None = None,
    *,
    incidence_rad: np.ndarray | None = None,
    edge_distance_px: np.ndarray | None = None,
    withheld: np.ndarray | None = None,
    fx: float = 500.0,
) -> ReferenceFrame:
    """A frame of measured ``depth_m`` against ``ref_depth_m`` (default: the depth itself).
    ``region_id`` defaults to one region over every pixel; incidence 0 and every pixel 50 px
    from an edge unless given; ``interior`` is computed as ``reference.py`` does (the whole
    9x9 window in the pixel's own region, the image border counting as no region)."""
    depth = np.asarray(depth_m, dtype=np.float32)
    shape = depth.shape
    ref = depth.copy() if ref_depth_m is None else np.asarray(ref_depth_m, dtype=np.float32)
    region = np.zeros(shape, np.int32) if region_id is None else region_id.astype(np.int32)
    low = ndimage.minimum_filter(region, size=NOISE_WINDOW_PX, mode="constant", cval=NO_REGION)
    high = ndimage.maximum_filter(region, size=NOISE_WINDOW_PX, mode="constant", cval=NO_REGION)
    normals = np.zeros((*shape, 3), np.float32)
    normals[..., 2] = -1.0
    n_regions = int(region.max()) + 1 if (region >= 0).any() else 0
    return ReferenceFrame(
        source="hand-made",
        camera=camera_for(shape, fx),
        depth_m=depth,
        ref_depth_m=ref,
        normal_cam=normals,
        incidence_rad=(
            np.zeros(shape, np.float32)
            if incidence_rad is None
            else incidence_rad.astype(np.float32)
        ),
        region_id=region,
        edge=np.zeros(shape, bool),
        edge_distance_px=(
            np.full(shape, 50.0, np.float32)
            if edge_distance_px is None
            else edge_distance_px.astype(np.float32)
        ),
        interior=(region != NO_REGION) & (low == high),
        regions=[Region("plane", f"plane_{k}", int((region == k).sum())) for k in range(n_regions)],
        withheld=withheld,
    )


def tables(**columns: np.ndarray) -> PixelTables:
    """PixelTables with the given columns; the noise columns and the region-pixel columns
    each default to empty / zeros of their group's length."""
    n_noise = len(columns.get("noise_residual_m", []))
    n_ref = len(columns.get("ref_residual_m", []))
    n = len(columns.get("valid", []))
    defaults = {
        "noise_z_m": np.full(n_noise, 1.05),
        "noise_theta_rad": np.zeros(n_noise),
        "noise_residual_m": np.zeros(n_noise),
        "noise_region": np.zeros(n_noise, np.int64),
        "ref_z_m": np.full(n_ref, 1.05),
        "ref_residual_m": np.zeros(n_ref),
        "ref_region": np.zeros(n_ref, np.int64),
        "valid": np.ones(n, bool),
        "theta_rad": np.zeros(n),
        "edge_distance_px": np.full(n, 50.0),
        "excluded": np.zeros(n, bool),
        "region": np.zeros(n, np.int64),
    }
    return PixelTables(**{**defaults, **columns})
