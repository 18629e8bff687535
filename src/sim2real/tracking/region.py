"""The region (colour) modality, in the spirit of ICG (Stoiber, Sundermeyer & Triebel, "Iterative
Corresponding Geometry", CVPR 2022): sparse correspondence lines across the part's projected
outline, a probabilistic location of the outline along each line from foreground and
background colour histograms, and its Gauss-Newton equations for the pose.

Per line (an outline point of the nearest stored view, projected into the colour image, with
its outward normal): the pixels along the normal are grouped into ``segments`` segments of
``scale`` pixels; each segment's posterior of being the part comes from the histograms
(pixels independent within it). The outline position d along the line has the likelihood
prod_s [h_f(r_s - d) p_f(s) + h_b(r_s - d) p_b(s)], with a smoothed step h_f (foreground inside,
r < d) of slope ``slope`` segments; its mean and variance are the measurement of where the
outline is. Lines whose model point is hidden by a nearer surface in the depth image, or that
leave the image, are not used; along a line, what lies beyond the part's own reach (a thin
feature's far side, another part of the outline) carries no evidence.

Poses are ``T_depth_part`` (the tracker's frame); the colour camera sees the part at
``T_color_depth @ T_depth_part``. The update is the twist x = (omega, v) of ``T <- exp(x) T`` in
the depth camera frame, as for the depth modality.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pydantic import Field

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.strict import StrictModel
from sim2real.models.viewpoints import ViewpointModel
from sim2real.tracking.color_histograms import ColorHistograms
from sim2real.tracking.icp import _cross


class RegionConfig(StrictModel):
    """Settings of the region modality (ICG's defaults where it has one)."""

    scales_px: tuple[int, ...] = Field(
        (6, 4, 2, 1),
        description="segment length of each correspondence update, coarse to fine [px]",
    )
    segments: int = Field(10, ge=4, le=40, description="segments along each line")
    slope_segments: float = Field(0.5, gt=0, description="slope of the smoothed step [segments]")
    amplitude: float = Field(0.43, gt=0, lt=0.5, description="amplitude of the smoothed step")
    min_sigma_segments: float = Field(
        1.0, gt=0, description="lower bound of a line's standard deviation [segments]"
    )
    weight: float = Field(1.0, ge=0, description="weight of the modality in the joint step")
    learning_rate: float = Field(
        0.2,
        gt=0,
        le=1,
        description="share of a trusted frame's colours blended into the histograms",
    )
    histogram_bins: int = Field(16, description="histogram cells per RGB channel (a power of 2)")
    learn_px: tuple[int, int] = Field(
        (4, 24),
        description="colours are learned this far from the outline, both sides (and inside at "
        "most 60 % of the part's reach): clear of the outline, so a start a few pixels off "
        "does not teach the part's colours as background [px]",
    )
    occluder_m: float = Field(
        0.01, gt=0, description="a depth return this much in front of an outline point hides it [m]"
    )
    agree_px: float = Field(
        2.5, gt=0, description="an outline found within this of the model's agrees with it [px]"
    )
    min_separation: float = Field(
        0.3,
        ge=0,
        le=1,
        description="below this separation of the part's and the background's colours "
        "(1 - Bhattacharyya coefficient) colour has no opinion and depth decides alone",
    )


@dataclass
class Lines:
    """Correspondence lines of one update (N lines), colour image pixels."""

    points_part: np.ndarray
    """(N, 3) outline points, part frame [m]."""
    centre: np.ndarray
    """(N, 2) projected outline points [px]."""
    normal: np.ndarray
    """(N, 2) unit outward normals in the image."""
    reach_in: np.ndarray
    """(N,) how far the part extends inward from each outline point [px]."""
    reach_out: np.ndarray
    """(N,) how far the background extends outward [px]."""
    valid: np.ndarray
    """(N,) bool: inside the image and not hidden."""
    mean: np.ndarray | None = None
    """(N,) where the outline was found along the normal, from the centre [px]."""
    var: np.ndarray | None = None
    """(N,) its variance [px^2]."""
    probability: np.ndarray | None = None
    """(N, D) the outline position's distribution over ``offsets``."""
    offsets: np.ndarray | None = None
    """(D,) candidate outline positions [px]."""
    depth_m: np.ndarray | None = None
    """(N,) the outline points' depth, for the depth image's outline (``depth_outline``) [m]."""


@dataclass
class RegionEvidence:
    """What the colour image says about a pose."""

    agreement: float
    """Mean probability, over the usable lines, that the outline lies within ``agree_px`` of
    where the model puts it."""
    lines: int
    """Usable lines (in the image, not hidden)."""
    total: int
    """Lines of the view."""


def pixels_along(lines: Lines, offsets: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """(N, S) flat index of the pixel at centre + normal * offsets along each line, in an image
    of ``shape`` (nearest pixel, clipped to the image)."""
    x = lines.centre[:, None, 0] + lines.normal[:, None, 0] * offsets[None]
    y = lines.centre[:, None, 1] + lines.normal[:, None, 1] * offsets[None]
    h, w = shape[:2]
    u = np.minimum(np.maximum(np.rint(x).astype(np.int64), 0), w - 1)
    v = np.minimum(np.maximum(np.rint(y).astype(np.int64), 0), h - 1)
    return v * w + u


def _project(camera: CameraIntrinsics, p: np.ndarray) -> np.ndarray:
    z = np.maximum(p[:, 2], 1e-9)
    return np.stack([camera.fx * p[:, 0] / z + camera.cx, camera.fy * p[:, 1] / z + camera.cy], 1)


class RegionModality:
    """Colour evidence for the pose of one part seen by ``camera`` at ``T_color_depth`` from
    the depth camera (identity: colour registered to depth)."""

    def __init__(
        self,
        camera: CameraIntrinsics,
        T_color_depth: np.ndarray | None = None,
        config: RegionConfig | None = None,
    ):
        self.camera = camera
        self.T_color_depth = np.eye(4) if T_color_depth is None else np.asarray(T_color_depth)
        self.config = config or RegionConfig()
        self.histograms = ColorHistograms(self.config.histogram_bins)

    # -- lines --------------------------------------------------------------------------------
    def lines(
        self,
        views: ViewpointModel,
        T: np.ndarray,
        depth: np.ndarray | None = None,
        depth_camera: CameraIntrinsics | None = None,
    ) -> Lines:
        """The correspondence lines of the view nearest to pose ``T`` (T_depth_part); with a
        depth image, outline points behind a nearer surface are marked hidden."""
        Tc = self.T_color_depth @ T
        k = views.nearest(Tc)
        pts = views.contour_points[k].astype(np.float64)
        out = views.contour_outward[k].astype(np.float64)
        p = pts @ Tc[:3, :3].T + Tc[:3, 3]
        o = out @ Tc[:3, :3].T
        centre = _project(self.camera, p)
        step = _project(self.camera, p + 0.002 * o) - centre  # 2 mm outward, in the image
        length = np.linalg.norm(step, axis=1)
        normal = step / np.maximum(length, 1e-9)[:, None]
        px_per_m = self.camera.fx / np.maximum(p[:, 2], 1e-9)
        inside = views.contour_inside_m
        outside = views.contour_outside_m
        reach_in = np.full(len(p), np.inf) if inside is None else inside[k] * px_per_m
        reach_out = np.full(len(p), np.inf) if outside is None else outside[k] * px_per_m
        valid = (p[:, 2] > 1e-6) & (length > 1e-6)
        margin = self.config.segments * max(self.config.scales_px) / 2 + 1
        valid &= (centre[:, 0] >= margin) & (centre[:, 0] < self.camera.width - margin)
        valid &= (centre[:, 1] >= margin) & (centre[:, 1] < self.camera.height - margin)
        if depth is not None and depth_camera is not None:
            valid &= ~self._hidden(pts @ T[:3, :3].T + T[:3, 3], depth, depth_camera)
        return Lines(pts, centre, normal, reach_in, reach_out, valid)

    def _hidden(self, p_depth: np.ndarray, depth: np.ndarray, camera: CameraIntrinsics):
        """(N,) bool: a return nearer than the outline point by ``occluder_m`` within 2 px."""
        uv = np.rint(_project(camera, p_depth)).astype(np.int64)
        du = np.array([0, 2, -2, 0, 0])
        dv = np.array([0, 0, 0, 2, -2])
        u = np.minimum(np.maximum(uv[:, :1] + du, 0), camera.width - 1)
        v = np.minimum(np.maximum(uv[:, 1:] + dv, 0), camera.height - 1)
        z = depth.reshape(-1)[v * camera.width + u]
        return ((z > 0) & (z < p_depth[:, 2:3] - self.config.occluder_m)).any(axis=1)

    def _samples(self, color: np.ndarray, lines: Lines, offsets: np.ndarray) -> np.ndarray:
        """(N, S, 3) colours at centre + normal * offsets (nearest pixel, clipped)."""
        return color.reshape(-1, 3)[pixels_along(lines, offsets, color.shape)]

    # -- histograms ---------------------------------------------------------------------------
    def learn(self, color: np.ndarray, lines: Lines, rate: float | None = None) -> None:
        """Blend the colours inside and outside the outline along ``lines`` into the histograms
        (``rate`` None: replace them)."""
        lo, hi = self.config.learn_px
        off = np.arange(lo, hi + 1, dtype=np.float64)
        use = lines.valid[:, None]
        inner = self._samples(color, lines, -off)
        outer = self._samples(color, lines, off)
        fmask = use & (off[None] < 0.6 * lines.reach_in[:, None])
        bmask = use & (off[None] < 0.6 * lines.reach_out[:, None])
        self.histograms.update(inner[fmask], outer[bmask], rate)

    # -- correspondences ----------------------------------------------------------------------
    def _log_likelihoods(
        self, color: np.ndarray, lines: Lines, px: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """(N, S) log-likelihoods of the pixels at ``px`` along each line under the part's and
        the background's colour histograms."""
        return self.histograms.log_likelihoods(
            self.histograms.index(self._samples(color, lines, px))
        )

    def correspond(self, color: np.ndarray, lines: Lines, scale: int) -> Lines:
        """Locate the outline along each line at segment length ``scale`` px: sets ``mean``,
        ``var``, ``probability`` and ``offsets`` of ``lines`` (returned)."""
        cfg = self.config
        n_seg = cfg.segments
        half = n_seg * scale / 2
        px = np.arange(-half + 0.5, half, 1.0)
        lf, lb = self._log_likelihoods(color, lines, px)
        N = len(lines.centre)
        lf = lf.reshape(N, n_seg, scale).sum(axis=2)
        lb = lb.reshape(N, n_seg, scale).sum(axis=2)
        pf = 1.0 / (1.0 + np.exp(np.clip(lb - lf, -50, 50)))
        r = (np.arange(n_seg) - (n_seg - 1) / 2) * scale
        beyond = (r[None] - scale / 2 < -lines.reach_in[:, None]) | (
            r[None] + scale / 2 > lines.reach_out[:, None]
        )
        pf = np.where(beyond, 0.5, pf)  # no evidence beyond the part's own reach
        d = (np.arange(n_seg + 1) - n_seg / 2) * scale
        x = (r[None, :] - d[:, None]) / scale
        hf = 0.5 - cfg.amplitude * np.tanh(x / (2 * cfg.slope_segments))
        logp = np.log(hf[None] * pf[:, None, :] + (1 - hf[None]) * (1 - pf[:, None, :])).sum(2)
        logp -= logp.max(axis=1, keepdims=True)
        p = np.exp(logp)
        p /= p.sum(axis=1, keepdims=True)
        lines.mean = p @ d
        lines.var = np.maximum(p @ d**2 - lines.mean**2, (cfg.min_sigma_segments * scale) ** 2)
        lines.probability, lines.offsets = p, d
        return lines

    def equations(self, lines: Lines, T: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """(A (6, 6), b (6,), spread) of the Gauss-Newton step x = A^-1 b for
        ``T <- exp(x) T`` (T_depth_part), weighted by the modality's weight; ``spread``: the
        robust standard deviation (1.4826 MAD, at least 1) of the residuals in units of each
        line's own standard deviation."""
        p_d = lines.points_part @ T[:3, :3].T + T[:3, 3]
        R_cd = self.T_color_depth[:3, :3]
        p_c = p_d @ R_cd.T + self.T_color_depth[:3, 3]
        z = np.maximum(p_c[:, 2], 1e-9)
        uv = _project(self.camera, p_c)
        n = lines.normal
        dist = np.einsum("ij,ij->i", n, uv - lines.centre)
        # d dist / d p_c: the normal through the projection's Jacobian
        a_c = np.stack(
            [
                n[:, 0] * self.camera.fx / z,
                n[:, 1] * self.camera.fy / z,
                -(n[:, 0] * self.camera.fx * p_c[:, 0] + n[:, 1] * self.camera.fy * p_c[:, 1])
                / z**2,
            ],
            axis=1,
        )
        a_d = a_c @ R_cd
        J = np.concatenate([_cross(p_d, a_d), a_d], axis=1)
        w = np.where(lines.valid, self.config.weight / lines.var, 0.0)
        res = dist - lines.mean
        Jw = J * w[:, None]
        normalised = res[lines.valid] / np.sqrt(lines.var[lines.valid])
        spread = 1.4826 * float(np.median(np.abs(normalised))) if normalised.size else 1.0
        return Jw.T @ J, -Jw.T @ res, max(spread, 1.0)

    def evidence(self, color: np.ndarray, lines: Lines, scale: int | None = None) -> RegionEvidence:
        """How well the outline at ``lines``' centres agrees with the colour image, at the
        finest scale (``scale=1``: the lines already hold their scale-1 distributions)."""
        if scale != 1:
            lines = self.correspond(color, lines, 1)
        near = np.abs(lines.offsets) <= self.config.agree_px
        share = lines.probability[:, near].sum(axis=1)
        used = lines.valid
        agreement = float(share[used].mean()) if used.any() else 0.0
        return RegionEvidence(agreement, int(used.sum()), len(used))
