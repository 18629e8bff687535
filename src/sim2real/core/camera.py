"""Pinhole camera intrinsics (OpenCV convention: pixel centres at integer coordinates)."""

from __future__ import annotations

import numpy as np
from pydantic import ConfigDict, Field, model_validator

from sim2real.core.strict import StrictModel

MAX_SIDE_PX = 20_000


class CameraIntrinsics(StrictModel):
    """Pinhole intrinsics of a depth camera. Pixel (u, v) back-projects along
    ((u - cx) / fx, (v - cy) / fy, 1) in the camera frame (x right, y down, z forward)."""

    model_config = ConfigDict(frozen=True)

    fx: float = Field(gt=0, allow_inf_nan=False, description="focal length along x [px]")
    fy: float = Field(gt=0, allow_inf_nan=False, description="focal length along y [px]")
    cx: float = Field(
        allow_inf_nan=False, description="principal point x [px], pixel centres at integers"
    )
    cy: float = Field(
        allow_inf_nan=False, description="principal point y [px], pixel centres at integers"
    )
    # 20,000 px a side is beyond every depth and colour camera made; a size past it is a typo
    # that would otherwise allocate its rays (100,000 square: 112 GiB) before any check
    width: int = Field(gt=0, le=MAX_SIDE_PX, description="image width [px]")
    height: int = Field(gt=0, le=MAX_SIDE_PX, description="image height [px]")
    depth_scale: float = Field(
        0.001,
        gt=0,
        allow_inf_nan=False,
        description="metres per unit of the sensor's integer depth images",
    )

    @model_validator(mode="after")
    def _principal_point_near_the_image(self) -> CameraIntrinsics:
        # the optical axis meets a sensor near its image's centre; a crop of a larger image
        # may hold it outside, but not a whole image width away: that is a typo (3210 for 321.0)
        for name, value, size in (("cx", self.cx, self.width), ("cy", self.cy, self.height)):
            if not -size <= value <= 2 * size:
                raise ValueError(
                    f"{name} {value:g} lies more than the image's {size} px outside it"
                )
        return self

    @property
    def K(self) -> np.ndarray:
        """(3, 3) float64 camera matrix."""
        return np.array([[self.fx, 0, self.cx], [0, self.fy, self.cy], [0, 0, 1.0]])

    @property
    def hfov_deg(self) -> float:
        return float(np.degrees(2 * np.arctan(self.width / (2 * self.fx))))

    def scaled(self, factor: float) -> CameraIntrinsics:
        """The same optics at ``factor`` times the resolution (pixel centres stay consistent)."""
        return CameraIntrinsics(
            fx=self.fx * factor,
            fy=self.fy * factor,
            cx=(self.cx + 0.5) * factor - 0.5,
            cy=(self.cy + 0.5) * factor - 0.5,
            width=round(self.width * factor),
            height=round(self.height * factor),
            depth_scale=self.depth_scale,
        )

    def pixel_rays(self) -> np.ndarray:
        """(H, W, 3) float32 ray directions through every pixel centre, with z = 1."""
        u = (np.arange(self.width, dtype=np.float32) - np.float32(self.cx)) / np.float32(self.fx)
        v = (np.arange(self.height, dtype=np.float32) - np.float32(self.cy)) / np.float32(self.fy)
        rays = np.empty((self.height, self.width, 3), dtype=np.float32)
        rays[..., 0] = u[None, :]
        rays[..., 1] = v[:, None]
        rays[..., 2] = 1.0
        return rays

    def backproject(self, depth_m: np.ndarray) -> np.ndarray:
        """(H, W) float metres, 0 = no return -> (N, 3) float64 points in the camera frame."""
        v, u = np.nonzero(depth_m > 0)
        z = depth_m[v, u].astype(np.float64)
        return np.stack([(u - self.cx) / self.fx * z, (v - self.cy) / self.fy * z, z], axis=1)

    @classmethod
    def from_hfov(
        cls, width: int, height: int, hfov_deg: float, depth_scale: float = 0.001
    ) -> CameraIntrinsics:
        """Square pixels, principal point at the image centre, focal length from the horizontal FOV."""
        f = (width / 2) / np.tan(np.radians(hfov_deg) / 2)
        return cls(
            fx=f,
            fy=f,
            cx=(width - 1) / 2,
            cy=(height - 1) / 2,
            width=width,
            height=height,
            depth_scale=depth_scale,
        )
