"""Sparse views of a part, precomputed once: for viewpoints on a sphere around the part, the
surface points a camera there sees (self-occlusion included), with their normals. The
tracker picks the view nearest to the predicted viewing direction instead of rendering."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim2real.core.mesh_io import Mesh


@dataclass
class ModelViews:
    """``directions[k]``: unit vector from the part's centre toward viewpoint k (part frame);
    ``points[k]``/``normals[k]``: (P, 3) visible surface samples and outward normals (part
    frame, metres), padded by repeating samples so every view has P points."""

    directions: np.ndarray
    points: np.ndarray
    normals: np.ndarray
    centre: np.ndarray
    diameter_m: float
    contour_points: np.ndarray | None = None
    """(V, C, 3) points on the part's outline as seen from each viewpoint (part frame)."""
    contour_outward: np.ndarray | None = None
    """(V, C, 3) unit vectors, perpendicular to the view, pointing out of the outline."""
    weights: np.ndarray | None = None
    """(V, P) chance that the sensor returns depth at each point (tuned surface returns);
    None = every point is expected to return."""

    def with_returns(self, returns) -> ModelViews:
        """These views with each point's return probability from ``SurfaceReturns``."""
        p = returns.probability_at_points(self.points.reshape(-1, 3).astype(np.float64))
        self.weights = p.reshape(self.points.shape[:2]).astype(np.float32)
        return self

    def nearest(self, T_cam_part: np.ndarray) -> int:
        """Index of the view closest to where the camera sees the part from."""
        R, t = T_cam_part[:3, :3], T_cam_part[:3, 3]
        camera_in_part = -R.T @ t
        d = camera_in_part - self.centre
        return int(np.argmax(self.directions @ (d / max(np.linalg.norm(d), 1e-9))))


def build_model_views(
    mesh: Mesh,
    n_views: int = 800,
    points_per_view: int = 400,
    grid: int = 96,
    seed: int = 0,
    contour_per_view: int = 64,
) -> ModelViews:
    """Cast a ``grid`` × ``grid`` orthographic bundle at the part from each viewpoint (first hits
    are what that viewpoint sees), keep ``points_per_view`` of the hits spread evenly; the same
    as the viewpoint model a prepared MODEL_DIR stores (``sim2real.models.viewpoints``)."""
    from sim2real.models.viewpoints import build_viewpoints

    return build_viewpoints(
        mesh, n_views, points_per_view, contour_per_view, grid, seed
    ).to_model_views()
