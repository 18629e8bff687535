"""A real depth frame paired with the true surface it saw: what calibration and the gap
measurement compare the sensor (or a simulation of it) against."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace

import numpy as np

from sim2real.core.camera import CameraIntrinsics

NO_REGION = -1
NOISE_WINDOW_PX = 9
"""Side of the window of the local-median noise statistic (9×9, centred)."""


@dataclass
class Region:
    """One piece of reference geometry in a frame: a plane found in it, or a known part."""

    kind: str
    """'plane' or 'part'."""
    name: str
    pixels: int
    """Pixels of the frame assigned to it (valid or not)."""
    info: dict = field(default_factory=dict)
    """Plane: normal_cam, offset_m, inlier_rms_m. Part: mesh, T_cam_part (refined) and the
    refinement report (fitness, rmse, correction)."""


@dataclass
class ReferenceFrame:
    """A real frame and its reference geometry. All arrays (H, W), camera frame, OpenCV axes."""

    source: str
    camera: CameraIntrinsics
    depth_m: np.ndarray
    """float32 metres as measured, 0 = no return."""
    ref_depth_m: np.ndarray
    """float32 metres of the true surface where a region covers the pixel, 0 elsewhere."""
    normal_cam: np.ndarray
    """(H, W, 3) float32 unit normals of the true surface facing the camera, 0 outside regions."""
    incidence_rad: np.ndarray
    """float32 angle between the viewing ray and the true surface normal, 0 outside regions."""
    region_id: np.ndarray
    """int32 index into ``regions``, or NO_REGION."""
    edge: np.ndarray
    """bool, depth discontinuities of the scene (from the real frame, gaps filled)."""
    edge_distance_px: np.ndarray
    """float32 distance to the nearest ``edge`` pixel [px]."""
    interior: np.ndarray
    """bool, pixels whose whole NOISE_WINDOW_PX window lies in their own region: the only
    pixels the per-pixel noise statistics use."""
    regions: list[Region] = field(default_factory=list)
    withheld: np.ndarray | None = None
    """bool, pixels of regions held out of a calibration (spatial hold-out): the estimators
    that read the whole frame (depth levels, range) leave them out. None = none."""

    @property
    def in_region(self) -> np.ndarray:
        return self.region_id != NO_REGION

    @property
    def fit_valid(self) -> np.ndarray:
        """bool, returns that a calibration may read (not withheld)."""
        valid = self.depth_m > 0
        return valid if self.withheld is None else valid & ~self.withheld

    @property
    def digest(self) -> str:
        """16 hex digits of the sha1 of the measured depth (float32 metres) and its shape."""
        depth = np.ascontiguousarray(self.depth_m, dtype=np.float32)
        h = hashlib.sha1(str(depth.shape).encode())
        h.update(depth.tobytes())
        return h.hexdigest()[:16]


def subset_regions(ref: ReferenceFrame, keep: list[int]) -> ReferenceFrame:
    """``ref`` with only the regions ``keep`` (renumbered in that order); the pixels of the
    others are ``withheld`` (no region, and left out of whole-frame estimates)."""
    lookup = np.full(len(ref.regions) + 1, NO_REGION, dtype=np.int32)
    for new, old in enumerate(keep):
        lookup[old] = new
    region_id = np.where(ref.in_region, lookup[ref.region_id], NO_REGION).astype(np.int32)
    dropped = ref.in_region & (region_id == NO_REGION)
    inside = region_id != NO_REGION
    withheld = dropped if ref.withheld is None else dropped | ref.withheld
    return replace(
        ref,
        ref_depth_m=np.where(inside, ref.ref_depth_m, 0).astype(np.float32),
        normal_cam=np.where(inside[..., None], ref.normal_cam, 0).astype(np.float32),
        incidence_rad=np.where(inside, ref.incidence_rad, 0).astype(np.float32),
        region_id=region_id,
        interior=ref.interior & inside,
        regions=[ref.regions[k] for k in keep],
        withheld=withheld,
    )
