"""Pose proposals for a tracker that has no pose (first frame, after a loss): an outside finder,
typically a detector trained in simulation (``sim2real detect``), says where the part may be;
each proposal is aligned by the tracker's own ICP and must pass the bars of any re-found pose
(``trusted_recovery``), so a wrong proposal mostly costs time (not always: on randomized clutter
a few in 60 fresh starts of a thin part were kept at a wrong pose). Without a trusted proposal
the tracker's own global search runs, but only around the proposals (:func:`proposal_centres`):
the finder has looked at the whole frame; with no proposal at all, nothing is searched."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from scipy.spatial.transform import Rotation

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.mesh_io import Mesh
from sim2real.core.pose import poses_at
from sim2real.tracking.bars import recovery_rank, trusted_recovery
from sim2real.tracking.config import TrackerConfig
from sim2real.tracking.icp import Alignment

if TYPE_CHECKING:
    from sim2real.detect.detector import Detector

Proposer = Callable[[np.ndarray, np.ndarray | None], list[np.ndarray]]
"""(depth (H, W) metres, colour image (h, w, 3) uint8 or None) -> candidate ``T_cam_part``
(4, 4) in the depth camera's frame, best first."""


TILT_DEG = 30.0
"""The coarse orientations: the cube group's 24 rotations, each also tilted by this much about
each axis (either way): 168, every orientation within about 48 deg of one (the group alone
leaves up to 62 deg). On the real cube, detections 1-2 cm off never converged from the 24 and
converged from the 168 (two frames checked, 1-2 mm from the reference)."""


def cube_rotations() -> np.ndarray:
    """(24, 3, 3): the rotations of the cube's symmetry group."""
    return Rotation.create_group("O").as_matrix()


def coarse_rotations(tilt_deg: float = TILT_DEG) -> np.ndarray:
    """(168, 3, 3): each of :func:`cube_rotations` alone and tilted by ``tilt_deg`` about +-x,
    +-y, +-z: a cover of orientations for a proposal with a position and no orientation."""
    tilts = [np.zeros(3)] + [np.radians(tilt_deg) * s * e for e in np.eye(3) for s in (1, -1)]
    small = Rotation.from_rotvec(np.array(tilts)).as_matrix()
    return np.einsum("aij,bjk->abik", cube_rotations(), small).reshape(-1, 3, 3)


def best_proposal(
    align: Callable[[np.ndarray, np.ndarray], Alignment],
    depth: np.ndarray,
    proposals: Sequence[np.ndarray],
    config: TrackerConfig,
) -> Alignment | None:
    """Each proposal refined by ``align(depth, T)``, in order: the first that passes the
    re-found bars, else the best by the re-found ranking."""
    best = None
    for T in proposals:
        if T[2, 3] <= 0:
            continue  # behind the camera: nothing to align
        a = align(depth, T)
        if trusted_recovery(a, config):
            return a
        if best is None or recovery_rank(a, config) > recovery_rank(best, config):
            best = a
    return best


def proposal_centres(proposals: Sequence[np.ndarray], mesh: Mesh) -> np.ndarray:
    """(k, 3): where the proposals put the centre of the part's bounding box (camera frame), one
    per place (those within a tenth of the part's diameter of an earlier one dropped: a
    detector proposes many orientations at one position)."""
    centre = np.append(mesh.centre_m, 1.0)
    tolerance = 0.1 * mesh.diameter_m
    places: list[np.ndarray] = []
    for T in proposals:
        point = (np.asarray(T, float) @ centre)[:3]
        if all(np.linalg.norm(point - p) >= tolerance for p in places):
            places.append(point)
    return np.array(places).reshape(-1, 3)


def detector_proposer(
    detector: str | Path | Detector,
    mesh: Mesh,
    color_camera: CameraIntrinsics,
    T_depth_color: np.ndarray | None = None,
    depth_camera: CameraIntrinsics | None = None,
) -> Proposer:
    """Proposals from a detector trained with ``sim2real detect train`` for ``mesh`` (its
    ``DET/`` folder, or the detector already loaded; another part is a one-line error): its
    pose from the keypoints when it has one, then the coarse orientations
    (:func:`coarse_rotations`) at its position; nothing from a detection below the detector's
    ``min_confidence``. Colour of ``color_camera``; the
    depth of ``depth_camera`` (None: the colour camera) moved into it first (``depth_in_camera``:
    unchanged when already registered)."""
    from sim2real.core.depth_register import depth_in_camera
    from sim2real.core.pose import invert_pose
    from sim2real.detect.detector import detect_frame, load_detector

    source = "the detector given"
    if isinstance(detector, str | Path):  # a folder: read it once, here
        detector, source = load_detector(detector), detector
    detector.check_model(mesh, source)
    centre = detector.geometry.centre_part_m
    min_confidence = detector.info.settings.min_confidence
    T_dc = np.eye(4) if T_depth_color is None else np.asarray(T_depth_color, float)
    depth_camera = depth_camera or color_camera
    T_color_depth = invert_pose(T_dc)
    rotations = coarse_rotations()

    def propose(depth: np.ndarray, color: np.ndarray | None) -> list[np.ndarray]:
        if color is None:
            return []
        depth = depth_in_camera(depth, depth_camera, color_camera, T_color_depth)
        found = detect_frame(detector, color, depth, color_camera.K)
        if not found.found or found.position_m is None:  # the detector's own confidence bar
            return []
        if found.confidence < min_confidence:
            # the depth check preferred a lower peak: reported by `detect run`, too weak to
            # start a tracker on (a third of the wrong re-found thin triangles came from such)
            return []
        in_color = [] if found.T_cam_part is None else [found.T_cam_part]
        in_color += poses_at(found.position_m, centre, rotations)
        return [T_dc @ T for T in in_color]

    return propose
