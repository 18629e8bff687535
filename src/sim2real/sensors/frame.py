"""What the renderer hands to the noise model: the ideal image and the per-pixel geometry."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim2real.core.camera import CameraIntrinsics

NO_OBJECT = -1


@dataclass
class RenderedFrame:
    """An ideal (noise-free) depth render and the per-pixel quantities noise models need.

    All arrays are (H, W) unless noted, in the camera frame (OpenCV axes).
    """

    camera: CameraIntrinsics
    depth_m: np.ndarray
    """float32 metres along the optical axis (z), 0 = no return; emitter shadow already removed."""
    normal_cam: np.ndarray
    """(H, W, 3) float32 unit surface normals facing the camera; 0 where there is no hit."""
    incidence_rad: np.ndarray
    """float32 angle between the viewing ray and the surface normal, 0 = head-on, pi/2 = grazing."""
    object_id: np.ndarray
    """int32 index of the scene object hit (meshes in scene order, then the plane); -1 = none."""
    edge: np.ndarray
    """bool, True on both sides of a depth discontinuity of the scene (and at the border of
    areas without geometry); computed before the emitter shadow, whose border is no edge."""
    shadow: np.ndarray
    """bool, True where the camera sees a surface the emitter does not light (set to depth 0)."""
    return_probability: np.ndarray | None = None
    """float32 chance of a return per pixel, from the tuned surfaces of the objects that carry
    one (``SurfaceReturns``); 1 elsewhere. None when no object carries one."""

    @property
    def valid(self) -> np.ndarray:
        return self.depth_m > 0
