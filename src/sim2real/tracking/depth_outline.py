"""The depth image's outline as a modality: the region modality's correspondence lines, with
each pixel's chance of being the part read from its depth instead of its colour.

Point-to-plane ICP pins only what the surface pins: a cube seen on two faces slides along
their shared edge, a plate along itself. Where the part stands clear of what is behind it, the
outline is a depth edge (returns beyond it are farther, or none), and locating that edge along
each line pins the rest, as colour does (on the real ViSP cube, depth only: the worst frame
8.9 % of the diameter off without it, 2.3 % with it). The tracker refines ICP's pose with it
only on views whose surface leaves a direction free (``depth_spread.surface_pins`` < 6), and
the edges move only the directions the frame's depth pins by less than ``FLAT_SHARE`` of its
best (``fused_align.free_directions``): real depth edges are eroded and fattened by a pixel or
more, and where the surface pins the pose they would only bias it.

Per pixel along a line (``_part_chances``): a return at the part's depth is likely the part
(nearer surfaces beside the line were dropped as occluders), a farther one likely not, and
nothing beyond the depth edge nearest to the model's outline is; a pixel with no return has no
opinion (sensors lose returns both just inside an outline, eroded, and just outside it, in the
emitter's shadow). A line without a depth edge (a part standing on a table: its foot's outline
is none) is not used.
"""

from __future__ import annotations

import numpy as np

from sim2real.core.camera import CameraIntrinsics
from sim2real.models.viewpoints import ViewpointModel
from sim2real.tracking.depth_spread import FLAT_SHARE, surface_pins
from sim2real.tracking.fused_align import FusedSettings, free_directions, fused_align
from sim2real.tracking.icp import depth_equations, edge_gap_m
from sim2real.tracking.region import Lines, RegionModality, pixels_along

P_PART = 0.9
"""Chance that a return at the outline's depth is the part's (a farther one: 1 - P_PART)."""

MIN_RETURN_CHANCE = 0.5
"""A view whose points return depth less often than this on average (tuned surface returns)
is not refined: its depth edges are the edges of its returns, not of the part."""

PART_GAP_SHARE = 0.5
"""A return farther than the outline point by this share of an edge's gap is not the part's:
a part a few millimetres in front of another (a plate on a bracket) has its own outline."""


class DepthOutlineModality(RegionModality):
    """Outline evidence from the depth image of the depth camera itself (poses T_depth_part)."""

    def lines(
        self,
        views: ViewpointModel,
        T: np.ndarray,
        depth: np.ndarray | None = None,
        depth_camera: CameraIntrinsics | None = None,
    ) -> Lines:
        lines = super().lines(views, T, depth, depth_camera)
        lines.depth_m = (lines.points_part @ T[:3, :3].T + T[:3, 3])[:, 2]
        return lines

    def _depths(self, depth: np.ndarray, lines: Lines, px: np.ndarray) -> np.ndarray:
        """(N, S) depth at centre + normal * px (nearest pixel, clipped) [m]."""
        return depth.reshape(-1)[pixels_along(lines, px, depth.shape)]

    def _part_chances(self, z: np.ndarray, lines: Lines, px: np.ndarray) -> np.ndarray:
        """(N, S) chance that each pixel along the lines (depths ``z`` at offsets ``px``) is the
        part's, around the depth edge nearest to each line's centre: inside it a return at the
        part's depth (or nearer) likely is, a farther one likely not; beyond it no return is,
        whatever its depth (a table rising towards the camera beyond a plate's rim). An edge:
        a return at the part's depth next to one farther by an edge's gap, or the last such
        return of a line whose outer half holds none. Lines without one are marked not valid:
        a table the part stands on recedes smoothly from its foot, and a band without returns
        (a shadow cast on what stands just behind) hides whether the depth jumps."""
        z0 = lines.depth_m[:, None]
        gap = edge_gap_m(z0)
        S = z.shape[1]
        near = (z > 0) & (z < z0 + gap)
        edge = np.zeros_like(near)
        edge[:, :-1] = near[:, :-1] & (z[:, 1:] - z[:, :-1] > gap)
        clear_outside = ~near[:, S // 2 :].any(axis=1)
        last_near = S - 1 - np.argmax(near[:, ::-1], axis=1)
        rows = np.flatnonzero(clear_outside & near.any(axis=1))
        edge[rows, last_near[rows]] = True
        lines.valid = lines.valid & edge.any(axis=1)
        at = np.argmin(np.where(edge, np.abs(px[None] + 0.5), np.inf), axis=1)
        beyond = np.arange(S)[None] > at[:, None]
        farther = z >= z0 + PART_GAP_SHARE * gap
        part = np.where(farther | beyond, 1 - P_PART, P_PART)
        return np.where(z > 0, part, 0.5)

    def _log_likelihoods(
        self, depth: np.ndarray, lines: Lines, px: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """As the colour histograms', from depth; also marks the lines without a depth edge
        (the base class's ``correspond`` calls this once per update, on every pixel)."""
        part = self._part_chances(self._depths(depth, lines, px), lines, px)
        return np.log(part), np.log1p(-part)

    def refine(
        self,
        depth: np.ndarray,
        views: ViewpointModel,
        T: np.ndarray,
        gate_m: float,
        depth_sigma_m: float,
        weights_of=None,
    ) -> np.ndarray | None:
        """ICP's pose ``T`` refined by depth and its edges together, the edges moving only the
        directions the frame's depth leaves nearly free; None where there are none: the view's
        surface pins every direction by itself (``surface_pins``, once per view), or this
        frame's depth does (one look at it)."""
        k = views.nearest(T)
        if surface_pins(views, k) >= 6:
            return None
        chances = None if weights_of is None else weights_of(k)
        if chances is not None and float(np.mean(chances)) < MIN_RETURN_CHANCE:
            return None  # a dark or shiny part's depth outline is where its returns end
        eq = depth_equations(
            depth, self.camera, views.points[k], views.normals[k], T, gate_m, chances
        )
        if eq is None or not free_directions(eq[0], views.diameter_m, FLAT_SHARE).any():
            return None  # this frame's depth pins every direction (or too little is seen)
        settings = FusedSettings((gate_m,), depth_sigma_m, outline_free_share=FLAT_SHARE)
        return fused_align(depth, self.camera, views, T, self, depth, settings, weights_of)[0]
