"""What to render: meshes at poses in the camera frame, and an optional ground plane.

A scene YAML lists the same (paths relative to the YAML file)::

    objects:
      - mesh: bracket.stl
        mesh_unit: mm            # optional: auto (default), m, cm, mm, inch
        pose: "0 0 0.6 0 0 0 1"  # T_cam_part: inline numbers or a pose file
    plane: true                  # or {pose: ..., size_m: 2.0}; true = under the first part
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from pydantic import Field

from sim2real.core.errors import InputError
from sim2real.core.mesh_io import Mesh, MeshUnit, load_mesh
from sim2real.core.pose import make_pose, parse_pose
from sim2real.core.strict import StrictModel, validate
from sim2real.core.yaml_io import read_yaml_mapping
from sim2real.sensors.surface_returns import SurfaceReturns

PLANE_SIZE_PER_DIAMETER = 20.0  # a table large enough to fill the view behind a part


@dataclass(frozen=True)
class SceneObject:
    mesh: Mesh
    T_cam_obj: np.ndarray
    """(4, 4) float64: maps the mesh's coordinates into the camera frame."""
    returns: SurfaceReturns | None = None
    """Tuned return probability per surface region; its mesh replaces ``mesh`` when given."""
    encloses_camera: bool = False
    """A convex shell around the camera and its emitter (a room's walls seen from inside): the
    segment from any point inside it to the emitter stays inside, so it hides nothing from the
    emitter (the emitter-shadow pass need not look for it)."""

    def __post_init__(self) -> None:
        if self.returns is not None and self.returns.mesh is not self.mesh:
            object.__setattr__(self, "mesh", self.returns.mesh)


@dataclass(frozen=True)
class GroundPlane:
    """A square of side ``size_m`` in the z = 0 plane of the frame ``T_cam_plane``."""

    T_cam_plane: np.ndarray
    size_m: float = 2.0

    def triangles(self) -> tuple[np.ndarray, np.ndarray]:
        """(4, 3) vertices in the camera frame and (2, 3) faces."""
        h = self.size_m / 2
        corners = np.array([[-h, -h, 0], [h, -h, 0], [h, h, 0], [-h, h, 0]], dtype=np.float64)
        R, t = self.T_cam_plane[:3, :3], self.T_cam_plane[:3, 3]
        return corners @ R.T + t, np.array([[0, 1, 2], [0, 2, 3]], dtype=np.int32)

    @property
    def normal_cam(self) -> np.ndarray:
        return self.T_cam_plane[:3, 2]

    @property
    def point_cam(self) -> np.ndarray:
        return self.T_cam_plane[:3, 3]


@dataclass(frozen=True)
class Scene:
    objects: list[SceneObject]
    plane: GroundPlane | None = None
    names: list[str] = field(default_factory=list)


def plane_under(obj: SceneObject) -> GroundPlane:
    """A table under a part: the plane z = min z of the part, in the part's frame (z up)."""
    z_min = float(obj.mesh.vertices[:, 2].min())
    T_part_plane = make_pose(np.eye(3), [0.0, 0.0, z_min])
    size = max(2.0, PLANE_SIZE_PER_DIAMETER * obj.mesh.diameter_m)
    return GroundPlane(T_cam_plane=obj.T_cam_obj @ T_part_plane, size_m=size)


def make_scene(
    meshes: list[Mesh],
    poses: list[np.ndarray],
    plane: bool | GroundPlane = False,
    returns: list[SurfaceReturns | None] | None = None,
) -> Scene:
    """Pair meshes with poses (one each); ``plane=True`` adds a table under the first part;
    ``returns``: per mesh, its tuned surface returns (``sim2real model tune``) or None."""
    if len(meshes) != len(poses):
        raise InputError(
            None, "--pose", f"{len(meshes)} meshes but {len(poses)} poses: give one pose per mesh"
        )
    if not meshes:
        raise InputError(None, "MESH", "no mesh to render")
    returns = returns if returns is not None else [None] * len(meshes)
    objects = [
        SceneObject(m, np.asarray(T, dtype=np.float64), returns=r)
        for m, T, r in zip(meshes, poses, returns, strict=True)
    ]
    ground = plane_under(objects[0]) if plane is True else (plane or None)
    return Scene(objects=objects, plane=ground, names=[m.name for m in meshes])


def read_mesh_file(path: Path, unit: str) -> tuple[Mesh, SurfaceReturns | None]:
    """A mesh file (no tuned returns): the default part reader of ``load_scene_yaml``."""
    return load_mesh(path, unit), None


class SceneObjectSpec(StrictModel):
    """One object of a scene YAML."""

    mesh: str = Field(description="mesh file (or MODEL_DIR), relative to the scene file")
    pose: str | list[float] | list[list[float]] = Field(
        description="T_cam_part: inline numbers, a 4x4 list, or a pose file (relative)"
    )
    mesh_unit: MeshUnit = Field("auto", description="the mesh's unit")
    rpy_deg: bool = Field(False, description="6 numbers are x y z roll pitch yaw in degrees")


class ScenePlaneSpec(StrictModel):
    """A ground plane placed by hand."""

    pose: str | list[float] | list[list[float]] = Field(description="T_cam_plane (z: its normal)")
    size_m: float = Field(2.0, gt=0, description="side of the square plane [m]")


class SceneFile(StrictModel):
    """The whole scene YAML (see the module doc)."""

    objects: list[SceneObjectSpec] = Field(min_length=1, description="the meshes and poses")
    plane: bool | ScenePlaneSpec = Field(
        False, description="true: a table under the first object; or a plane placed by hand"
    )


def _pose_text(value: str | list, folder: Path) -> str | Path:
    if isinstance(value, list):
        return " ".join(str(v) for row in value for v in (row if isinstance(row, list) else [row]))
    if not value[:1].isdigit() and value[:1] not in "-." and (folder / value).is_file():
        return folder / value
    return value


def load_scene_yaml(
    path: str | Path,
    read_part: Callable[[Path, str], tuple[Mesh, SurfaceReturns | None]] = read_mesh_file,
) -> Scene:
    """Read a scene YAML (see the module doc); paths are relative to the YAML's folder.
    ``read_part(path, unit)`` reads each object's mesh and its tuned returns (the CLI passes
    one that also reads prepared MODEL_DIRs)."""
    path = Path(path)
    spec = validate(SceneFile, read_yaml_mapping(path, "scene file"), path)
    meshes, poses, returns = [], [], []
    for i, item in enumerate(spec.objects):
        mesh, tuned = read_part((path.parent / item.mesh).resolve(), item.mesh_unit)
        meshes.append(mesh)
        returns.append(tuned)
        try:
            poses.append(parse_pose(str(_pose_text(item.pose, path.parent)), rpy_deg=item.rpy_deg))
        except InputError as exc:
            raise InputError(path, f"objects.{i}.pose", exc.message) from None
    scene = make_scene(meshes, poses, plane=spec.plane is True, returns=returns)
    if isinstance(spec.plane, ScenePlaneSpec):
        try:
            T = parse_pose(str(_pose_text(spec.plane.pose, path.parent)))
        except InputError as exc:
            raise InputError(path, "plane.pose", exc.message) from None
        scene = Scene(scene.objects, GroundPlane(T, spec.plane.size_m), scene.names)
    return scene
