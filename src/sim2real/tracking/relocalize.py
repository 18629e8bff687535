"""Finding a part anywhere in a frame: FPFH features and RANSAC (Open3D), the model's
surface against the frame's points, optionally only around where it was last seen."""

from __future__ import annotations

import numpy as np

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.mesh_io import Mesh

MAX_SCENE_POINTS = 20_000


class GlobalSearch:
    def __init__(self, mesh: Mesh, voxel_m: float | None = None, seed: int = 0):
        import open3d as o3d

        self.o3d = o3d
        o3d.utility.set_verbosity_level(o3d.utility.VerbosityLevel.Error)  # RANSAC warns per try
        self.diameter = float(np.linalg.norm(mesh.vertices.max(axis=0) - mesh.vertices.min(axis=0)))
        self.voxel = voxel_m or max(0.003, 0.03 * self.diameter)
        legacy = o3d.geometry.TriangleMesh(
            o3d.utility.Vector3dVector(mesh.vertices), o3d.utility.Vector3iVector(mesh.faces)
        )
        legacy.compute_triangle_normals()
        cloud = (
            legacy.sample_points_uniformly(20_000, use_triangle_normal=True, seed=seed)
            if _takes_seed(legacy)
            else legacy.sample_points_uniformly(20_000, use_triangle_normal=True)
        )
        self.model = cloud.voxel_down_sample(self.voxel)
        self.model_features = self._features(self.model)
        self.seed = seed
        o3d.utility.random.seed(seed)  # once: each later search draws new samples

    def _features(self, cloud):
        o3d = self.o3d
        return o3d.pipelines.registration.compute_fpfh_feature(
            cloud, o3d.geometry.KDTreeSearchParamHybrid(radius=5 * self.voxel, max_nn=100)
        )

    def candidates(
        self, depth: np.ndarray, camera: CameraIntrinsics, centre: np.ndarray | None, tries: int = 2
    ) -> list[np.ndarray]:
        """Poses T_cam_part proposed by RANSAC on feature matches (best first), from the frame's
        points (within 1.5 diameters of ``centre`` when given)."""
        points = camera.backproject(depth)
        if centre is not None:
            points = points[np.linalg.norm(points - centre, axis=1) < 1.5 * self.diameter]
        return self.candidates_in(points, tries)

    def candidates_in(self, points: np.ndarray, tries: int = 2) -> list[np.ndarray]:
        """Poses T_cam_part proposed by RANSAC, searching only ``points`` ((N, 3), camera frame)."""
        o3d = self.o3d
        if len(points) < 50:
            return []
        scene = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(points)).voxel_down_sample(
            self.voxel
        )
        if len(scene.points) > MAX_SCENE_POINTS:
            scene = scene.random_down_sample(MAX_SCENE_POINTS / len(scene.points))
        if len(scene.points) < 30:
            return []
        scene.estimate_normals(
            o3d.geometry.KDTreeSearchParamHybrid(radius=2.5 * self.voxel, max_nn=30)
        )
        scene.orient_normals_towards_camera_location(np.zeros(3))
        features = self._features(scene)
        reg = o3d.pipelines.registration
        out = []
        for _ in range(tries):
            result = reg.registration_ransac_based_on_feature_matching(
                self.model, scene, self.model_features, features, True, 1.5 * self.voxel,
                reg.TransformationEstimationPointToPoint(False), 3,
                [reg.CorrespondenceCheckerBasedOnEdgeLength(0.9), reg.CorrespondenceCheckerBasedOnDistance(1.5 * self.voxel)],
                reg.RANSACConvergenceCriteria(20_000, 0.999),
            )  # fmt: skip
            if result.fitness > 0:
                out.append(np.asarray(result.transformation))
        return out


def _takes_seed(mesh) -> bool:
    try:
        mesh.sample_points_uniformly(10, seed=0)
        return True
    except TypeError:
        return False
