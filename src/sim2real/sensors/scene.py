"""What to render: meshes at poses in the camera frame, and an optional ground plane.

A scene YAML lists the same (paths relative to the YAML file)::

    objects:
      - mesh: bracket.stl
        mesh_unit: mm            # optional: auto (default), m, cm, mm
        pose: "0 0 0.6 0 0 0 1"  # T_cam_part: inline numbers or a pose file
    plane: true                  # or {pose: ..., size_m: 2.0}; true = under the first part
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from sim2real.core.errors import InputError
from sim2real.core.mesh_io import Mesh, load_mesh
from sim2real.core.pose import make_pose, parse_pose
from sim2real.sensors.surface_returns import SurfaceReturns

PLANE_SIZE_PER_DIAMETER = 20.0  # a table large enough to fill the view behind a part


@dataclass(frozen=True)
class SceneObject:
    mesh: Mesh
    T_cam_obj: np.ndarray
    """(4, 4) float64: maps the mesh's coordinates into the camera frame."""
    returns: SurfaceReturns | None = None
    """Tuned return probability per surface region; its mesh replaces ``mesh`` when given."""

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


def load_scene_yaml(
    path: str | Path,
    read_part: Callable[[Path, str], tuple[Mesh, SurfaceReturns | None]] = read_mesh_file,
) -> Scene:
    """Read a scene YAML (see the module doc); paths are relative to the YAML's folder.
    ``read_part(path, unit)`` reads each object's mesh and its tuned returns (the CLI passes
    one that also reads prepared MODEL_DIRs)."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise InputError(path, None, f"cannot read scene file ({exc.strerror})") from exc
    except yaml.YAMLError as exc:
        raise InputError(path, None, f"not valid YAML ({exc})") from exc
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("objects"), list)
        or not data["objects"]
    ):
        raise InputError(path, "objects", "expected a non-empty list of {mesh, pose}")
    unknown = set(data) - {"objects", "plane"}
    if unknown:
        raise InputError(path, sorted(unknown)[0], "unknown field; expected objects, plane")
    meshes, poses, returns = [], [], []
    for i, item in enumerate(data["objects"]):
        where = f"objects[{i}]"
        if not isinstance(item, dict) or "mesh" not in item or "pose" not in item:
            raise InputError(path, where, "each object needs 'mesh' and 'pose'")
        extra = set(item) - {"mesh", "pose", "mesh_unit", "rpy_deg"}
        if extra:
            raise InputError(
                path,
                f"{where}.{sorted(extra)[0]}",
                "unknown field; expected mesh, pose, mesh_unit, rpy_deg",
            )
        mesh_path = (path.parent / str(item["mesh"])).resolve()
        mesh, tuned = read_part(mesh_path, item.get("mesh_unit", "auto"))
        meshes.append(mesh)
        returns.append(tuned)
        pose_value = item["pose"]
        if isinstance(pose_value, list):
            pose_value = " ".join(
                str(v) for row in pose_value for v in (row if isinstance(row, list) else [row])
            )
        elif (
            not any(c.isdigit() for c in str(pose_value)[:1])
            and (path.parent / str(pose_value)).is_file()
        ):
            pose_value = path.parent / str(pose_value)
        try:
            poses.append(parse_pose(str(pose_value), rpy_deg=bool(item.get("rpy_deg", False))))
        except InputError as exc:
            raise InputError(path, f"{where}.pose", exc.message) from exc
    plane_spec = data.get("plane", False)
    scene = make_scene(meshes, poses, plane=plane_spec is True, returns=returns)
    if isinstance(plane_spec, dict):
        try:
            T = parse_pose(str(plane_spec["pose"]))
            scene = Scene(
                scene.objects, GroundPlane(T, float(plane_spec.get("size_m", 2.0))), scene.names
            )
        except (KeyError, ValueError, InputError) as exc:
            raise InputError(
                path, "plane.pose", f"needs a pose (and optional size_m): {exc}"
            ) from exc
    return scene
