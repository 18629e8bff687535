"""A real depth frame paired with the true surface it saw: what calibration and the gap
measurement compare the sensor (or a simulation of it) against."""

from __future__ import annotations

from dataclasses import dataclass, field

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

    @property
    def in_region(self) -> np.ndarray:
        return self.region_id != NO_REGION
