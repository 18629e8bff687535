"""Tune a part's model with real frames: where on its surface does the real sensor return depth,
and where do the returns depart from the model? (``sim2real model tune``)

For each frame, the part is ray cast at its known pose (refined first by robust ICP when the frame
supports it); every pixel of the part's image, away from its outline (mixed pixels)
and not hidden by an occluder in front, is one observation of the triangle point it shows: a
return on the part (within ``model_gate_m`` of the model) or none. Observations are shared
among the triangle's vertices by barycentric weights, spread over neighbouring vertices (a
region, not a pixel), and turned into a probability with a prior: the part's overall return
rate, worth ``prior_strength`` observations, so unseen regions keep the average and carry no
confidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.errors import InputError
from sim2real.core.mesh_io import Mesh, validate_mesh
from sim2real.sensors.part_fit import refine_part_pose
from sim2real.sensors.surface_returns import SurfaceReturns


@dataclass
class TuneResult:
    returns: SurfaceReturns
    poses: list[np.ndarray]
    """The poses used (refined where the frame allowed it), T_cam_part."""
    frames: list[dict] = field(default_factory=list)
    """Per frame: part_px (pixels of the part's image), observed_px (not outline, not hidden),
    returned_px, return_rate, median_residual_mm, refined (bool), refine_shift_mm."""

    @property
    def return_rate(self) -> float:
        observed = sum(f["observed_px"] for f in self.frames)
        return sum(f["returned_px"] for f in self.frames) / max(observed, 1)


def subdivided(mesh: Mesh, max_edge_m: float) -> Mesh:
    """The mesh with no edge longer than ``max_edge_m``: per-vertex attributes need vertices
    where the surface changes, and CAD meshes have long thin triangles."""
    import trimesh

    edges = mesh.vertices[mesh.faces[:, [1, 2, 0]]] - mesh.vertices[mesh.faces]
    if np.linalg.norm(edges, axis=2).max() <= max_edge_m:
        return mesh
    v, f = trimesh.remesh.subdivide_to_size(mesh.vertices, mesh.faces, max_edge_m, max_iter=12)
    return validate_mesh(v, f, mesh.path or mesh.name, mesh.name)


def _vertex_normals(mesh: Mesh) -> np.ndarray:
    tri = mesh.vertices[mesh.faces]
    face_n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])  # area-weighted
    n = np.zeros_like(mesh.vertices)
    for k in range(3):
        np.add.at(n, mesh.faces[:, k], face_n)
    return n / np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-12)


def region_kernel(mesh: Mesh, radius_m: float):
    """(V, V) sparse weights that pool each vertex with the vertices of its surface region:
    Gaussian in distance (sigma = radius / 2, cut at the radius), times the agreement of the
    normals, so a face does not borrow from the face across a sharp edge."""
    from scipy.sparse import coo_matrix
    from scipy.spatial import cKDTree

    tree = cKDTree(mesh.vertices)
    pairs = tree.query_pairs(radius_m, output_type="ndarray")
    normals = _vertex_normals(mesh)
    i, j = pairs[:, 0], pairs[:, 1]
    dist = np.linalg.norm(mesh.vertices[i] - mesh.vertices[j], axis=1)
    w = np.exp(-0.5 * (2 * dist / radius_m) ** 2) * np.clip(
        np.einsum("ij,ij->i", normals[i], normals[j]), 0, 1
    )
    n = len(mesh.vertices)
    rows = np.concatenate([i, j, np.arange(n)])
    cols = np.concatenate([j, i, np.arange(n)])
    return coo_matrix((np.concatenate([w, w, np.ones(n)]), (rows, cols)), shape=(n, n)).tocsr()


def _cast(mesh: Mesh, T: np.ndarray, camera: CameraIntrinsics):
    """Per pixel: model depth (0 = miss), triangle id, barycentric uv of the part at ``T``."""
    import open3d as o3d

    from sim2real.core.raycast import raycasting_scene

    scene = raycasting_scene(mesh.transformed(T), mesh.faces)
    rays = np.zeros((camera.height, camera.width, 6), np.float32)
    rays[..., 3:] = camera.pixel_rays()  # direction z = 1: t_hit is the depth
    out = scene.cast_rays(o3d.core.Tensor(rays))
    t = out["t_hit"].numpy()
    hit = np.isfinite(t)
    return (
        np.where(hit, t, 0).astype(np.float32),
        out["primitive_ids"].numpy(),
        out["primitive_uvs"].numpy(),
    )


def _refine(mesh: Mesh, depth: np.ndarray, camera: CameraIntrinsics, T: np.ndarray, seed: int):
    """The part's pose refined against the frame by the robust ICP that calibration uses for
    known parts (``sensors.part_fit``); a frame with too little depth on the part, or a
    correction beyond 2 cm / 10 deg, leaves the pose as given."""
    fit = refine_part_pose(depth, camera, mesh, T, seed=seed)
    return fit.T_cam_part, bool(fit.report["accepted"])


def tune_surface_returns(
    mesh: Mesh,
    depths: list[np.ndarray],
    camera: CameraIntrinsics,
    poses: list[np.ndarray],
    *,
    refine: bool = True,
    region_m: float | None = None,
    model_gate_m: float | None = None,
    occluder_m: float = 0.015,
    outline_px: int = 2,
    prior_strength: float = 4.0,
) -> TuneResult:
    """Measure per-vertex return probability and depth bias of ``mesh`` from real ``depths``
    ((H, W) metres, 0 = no return) at ``poses`` (T_cam_part, one per frame).

    ``region_m`` (default 1/15 of the diameter, at least 2 mm): the size of the surface regions
    whose observations are pooled (the mesh is subdivided to a third of it);
    ``model_gate_m`` (default: the larger of 10 % of the diameter and 3 % of the depth, the
    noise and bias of consumer depth sensors): returns farther behind the model are not the
    part (see-through); ``occluder_m``: a return this much in front hides the part."""
    from scipy import ndimage

    if len(depths) != len(poses):
        raise InputError(None, "--poses", f"{len(depths)} frames but {len(poses)} poses")
    if not depths:
        raise InputError(None, "--frames", "no frame to tune with")
    d = float(np.linalg.norm(np.ptp(mesh.vertices, axis=0)))
    region = region_m or max(0.002, d / 15)
    fine = subdivided(mesh, region / 3)
    n = len(fine.vertices)
    seen, returned, residual = np.zeros(n), np.zeros(n), np.zeros(n)
    used_poses, frames = [], []
    for i, (depth, T) in enumerate(zip(depths, poses, strict=True)):
        T = np.asarray(T, np.float64)
        if T[2, 3] <= 0:
            raise InputError(None, "--poses", "a pose puts the part behind the camera (z <= 0)")
        shift_mm, refined = 0.0, False
        if refine:
            T_new, refined = _refine(mesh, depth, camera, T, seed=i)
            shift_mm = 1e3 * float(np.linalg.norm(T_new[:3, 3] - T[:3, 3]))
            T = T_new
        z_model, tri, uv = _cast(fine, T, camera)
        part = z_model > 0
        inner = ndimage.binary_erosion(part, iterations=outline_px)
        z = depth.astype(np.float64)
        hidden = (z > 0) & (z < z_model - occluder_m)
        observed = inner & ~hidden
        dz = np.where(observed, z - z_model, 0.0)
        gate = model_gate_m or np.maximum(0.1 * d, 0.03 * z_model)
        on_part = observed & (z > 0) & (np.abs(dz) < gate)
        v, u = np.nonzero(observed)
        faces = fine.faces[tri[v, u]]
        w = np.stack([1 - uv[v, u, 0] - uv[v, u, 1], uv[v, u, 0], uv[v, u, 1]], axis=1)
        hit = on_part[v, u].astype(np.float64)[:, None]
        np.add.at(seen, faces, w)
        np.add.at(returned, faces, w * hit)
        np.add.at(residual, faces, w * hit * dz[v, u][:, None])
        used_poses.append(T)
        frames.append(
            {
                "part_px": int(part.sum()),
                "observed_px": int(observed.sum()),
                "returned_px": int(on_part.sum()),
                "return_rate": float(on_part.sum() / max(observed.sum(), 1)),
                "median_residual_mm": float(1e3 * np.median(dz[on_part]))
                if on_part.any()
                else None,
                "refined": refined,
                "refine_shift_mm": shift_mm,
            }
        )
    K = region_kernel(fine, region)
    seen_s, returned_s, residual_s = K @ seen, K @ returned, K @ residual
    rate = returned.sum() / seen.sum() if seen.sum() > 0 else 1.0
    probability = (returned_s + prior_strength * rate) / (seen_s + prior_strength)
    bias = np.where(returned_s > 1e-9, residual_s / np.maximum(returned_s, 1e-9), 0.0)
    confidence = seen_s / (seen_s + prior_strength)
    returns = SurfaceReturns(fine, np.clip(probability, 0, 1), confidence, bias, seen_s)
    return TuneResult(returns, used_poses, frames)


def valid_pixel_agreement(real_m: np.ndarray, sim_m: np.ndarray, region: np.ndarray) -> dict:
    """How well a simulated frame's valid pixels match a real frame's inside ``region`` (bool):
    intersection over union of the valid sets, and the simulated / real valid counts."""
    r, s = (real_m > 0) & region, (sim_m > 0) & region
    union = int((r | s).sum())
    return {
        "region_px": int(region.sum()),
        "real_valid_px": int(r.sum()),
        "sim_valid_px": int(s.sum()),
        "iou": float((r & s).sum() / union) if union else 1.0,
        "agreement": float((r == s)[region].mean()) if region.any() else 1.0,
    }
