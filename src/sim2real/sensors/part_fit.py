"""A known part in a real depth frame: its pose refined by robust ICP against the measured
points, and the true surface it presents to the camera at that pose (rendered)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.errors import InputError
from sim2real.core.mesh_io import Mesh
from sim2real.sensors.frame import RenderedFrame

SILHOUETTE_DILATION_PX = 20
"""Real points within 20 px of the rendered part are the ICP target..."""
DEPTH_MARGIN_M = 0.03
"""... when their depth is within 3 cm of the rendered part's depth range."""
ICP_STAGES_M = (0.010, 0.005, 0.003)
"""Coarse-to-fine maximum correspondence distances."""
ICP_ITERATIONS = 30
MIN_CORRESPONDENCES = 200
MIN_FITNESS = 0.3
"""At the final stage, at least 30 % of the part's visible surface points must find a
measured point within ICP_STAGES_M[-1]: a pose that does not explain the data is not refined."""
MAX_SOURCE_POINTS = 20_000
NORMAL_RADIUS_PX = 6
"""Target normals from the neighbours within 6 pixel footprints (at the median depth)..."""
NORMAL_RADIUS_MIN_M = 0.005
"""... and at least 5 mm."""


@dataclass
class PartFit:
    """A part's pose in a real frame and the surface it shows there. Arrays (H, W)."""

    T_cam_part: np.ndarray
    """(4, 4) float64: the refined pose when accepted, else the given one."""
    report: dict
    """accepted (bool) and reason; of the last ICP stage run (stage_m): fitness,
    inlier_rmse_m, correspondences, and the correction ICP proposed (correction_m: how far the
    visible part's centroid moves, correction_deg: the rotation angle), applied only when
    accepted; source_points, target_points, T_cam_part_given. See ``refine_part_pose``."""
    region: np.ndarray
    """bool: pixels where the rendered part is visible (at ``T_cam_part``)."""
    ref_depth_m: np.ndarray
    """float32 metres of the rendered part, 0 elsewhere."""
    normal_cam: np.ndarray
    """(H, W, 3) float32 unit normals facing the camera, 0 elsewhere."""
    incidence_rad: np.ndarray
    """float32 angle between the viewing ray and the normal, 0 elsewhere."""


def render_part(mesh: Mesh, T_cam_part: np.ndarray, camera: CameraIntrinsics) -> RenderedFrame:
    """The ideal render of one part; InputError(None, '--pose') when no pixel sees it."""
    from sim2real.sensors.render import DepthRenderer
    from sim2real.sensors.scene import make_scene

    frame = DepthRenderer(make_scene([mesh], [T_cam_part]), camera).render_ideal()
    if not frame.valid.any():
        raise InputError(
            None,
            "--pose",
            f"the part {mesh.name!r} is outside the image: no pixel of the "
            f"{camera.width}x{camera.height} camera sees it at this pose",
        )
    return frame


def _correction(T_delta: np.ndarray, centre: np.ndarray) -> tuple[float, float]:
    """(metres the part's visible centre moves, rotation angle in degrees) of ``T_delta``."""
    moved = T_delta[:3, :3] @ centre + T_delta[:3, 3] - centre
    cos = np.clip((np.trace(T_delta[:3, :3]) - 1) / 2, -1.0, 1.0)
    return float(np.linalg.norm(moved)), float(np.degrees(np.arccos(cos)))


def _clouds(depth_m: np.ndarray, camera: CameraIntrinsics, frame: RenderedFrame, seed: int):
    import open3d as o3d

    part = frame.valid
    rays = camera.pixel_rays()
    src_pts = (rays[part] * frame.depth_m[part, None]).astype(np.float64)
    src_nrm = frame.normal_cam[part].astype(np.float64)
    if len(src_pts) > MAX_SOURCE_POINTS:
        keep = np.random.default_rng(seed).choice(len(src_pts), MAX_SOURCE_POINTS, replace=False)
        src_pts, src_nrm = src_pts[keep], src_nrm[keep]
    z_part = frame.depth_m[part]
    near = ndimage.binary_dilation(
        part, structure=np.ones((3, 3), dtype=bool), iterations=SILHOUETTE_DILATION_PX
    )
    near &= (depth_m > z_part.min() - DEPTH_MARGIN_M) & (depth_m < z_part.max() + DEPTH_MARGIN_M)
    tgt_pts = (rays[near] * depth_m[near, None]).astype(np.float64)
    source = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(src_pts))
    source.normals = o3d.utility.Vector3dVector(src_nrm)
    target = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(tgt_pts))
    if len(tgt_pts) >= 3:
        radius = max(NORMAL_RADIUS_MIN_M, NORMAL_RADIUS_PX * float(np.median(z_part)) / camera.fx)
        target.estimate_normals(o3d.geometry.KDTreeSearchParamHybrid(radius=radius, max_nn=30))
        target.orient_normals_towards_camera_location(np.zeros(3))
    return source, target, src_pts.mean(axis=0)


def refine_part_pose(
    depth_m: np.ndarray,
    camera: CameraIntrinsics,
    mesh: Mesh,
    T_cam_part: np.ndarray,
    *,
    max_correction_m: float = 0.02,
    max_correction_deg: float = 10.0,
    seed: int = 0,
) -> PartFit:
    """Refine ``T_cam_part`` (4×4, part -> camera) against the real depth (H, W, metres,
    0 = no return) by robust point-to-plane ICP.

    Source: the part's visible surface rendered at the given pose (points and normals).
    Target: the measured points within SILHOUETTE_DILATION_PX of the rendered silhouette and
    within DEPTH_MARGIN_M of its depth range, with normals estimated by Open3D. ICP
    (``TransformationEstimationPointToPlane(TukeyLoss(k = distance))``) runs coarse to fine
    over ICP_STAGES_M. The correction is reported as the displacement of the visible part's
    centroid [m] and the rotation angle [deg].

    The refinement is rejected (the given pose is kept, ``report['accepted']`` False with a
    ``reason``) when the correction goes beyond ``max_correction_m`` / ``max_correction_deg``
    (ICP stops at the first stage that does), or the final stage has fewer than
    MIN_CORRESPONDENCES correspondences or a fitness below MIN_FITNESS: a dark part that
    returns little depth must not drift. ``seed`` draws the source points when the part
    covers more than MAX_SOURCE_POINTS pixels.
    Raises InputError(None, '--pose') when the part has no pixel in the image.
    """
    import open3d as o3d

    reg = o3d.pipelines.registration
    T_given = np.asarray(T_cam_part, dtype=np.float64)
    depth = np.asarray(depth_m, dtype=np.float32)
    frame = render_part(mesh, T_given, camera)
    source, target, centre = _clouds(depth, camera, frame, seed)
    report: dict = {
        "accepted": False,
        "reason": "",
        "fitness": 0.0,
        "inlier_rmse_m": 0.0,
        "correspondences": 0,
        "correction_m": 0.0,
        "correction_deg": 0.0,
        "stage_m": 0.0,
        "source_points": len(source.points),
        "target_points": len(target.points),
        "T_cam_part_given": T_given.tolist(),
    }
    T_delta = np.eye(4)
    if len(target.points) >= MIN_CORRESPONDENCES:
        criteria = reg.ICPConvergenceCriteria(max_iteration=ICP_ITERATIONS)
        for distance in ICP_STAGES_M:
            estimation = reg.TransformationEstimationPointToPlane(reg.TukeyLoss(k=distance))
            result = reg.registration_icp(source, target, distance, T_delta, estimation, criteria)
            T_delta = np.asarray(result.transformation)
            report["fitness"] = float(result.fitness)
            report["inlier_rmse_m"] = float(result.inlier_rmse)
            report["correspondences"] = len(result.correspondence_set)
            report["correction_m"], report["correction_deg"] = _correction(T_delta, centre)
            report["stage_m"] = distance
            if (
                report["correction_m"] > max_correction_m
                or report["correction_deg"] > max_correction_deg
            ):
                break  # rejected whatever the finer stages do: do not let it run away

    if report["correction_m"] > max_correction_m or report["correction_deg"] > max_correction_deg:
        report["reason"] = (
            f"correction {report['correction_m'] * 1e3:.1f} mm / {report['correction_deg']:.2f} deg "
            f"exceeds {max_correction_m * 1e3:.0f} mm / {max_correction_deg:.0f} deg"
        )
    elif report["correspondences"] < MIN_CORRESPONDENCES:
        report["reason"] = (
            f"{report['correspondences']} measured points match the part "
            f"(< {MIN_CORRESPONDENCES}): too little depth on it, or the pose is far off"
        )
    elif report["fitness"] < MIN_FITNESS:
        report["reason"] = (
            f"fitness {report['fitness']:.2f} < {MIN_FITNESS}: the pose does not explain the data"
        )
    else:
        report["accepted"] = True
        report["reason"] = "refined"

    T_final = T_delta @ T_given if report["accepted"] else T_given
    if report["accepted"]:
        frame = render_part(mesh, T_final, camera)
    return PartFit(
        T_cam_part=T_final,
        report=report,
        region=frame.valid,
        ref_depth_m=frame.depth_m,
        normal_cam=frame.normal_cam,
        incidence_rad=frame.incidence_rad,
    )
