"""Rigid poses (SE(3)) as 4×4 float64 matrices, and parsing them from files and text.

Frames are explicit in names: ``T_cam_part`` maps part coordinates into the camera frame
(OpenCV axes: x right, y down, z forward).

Accepted forms (``parse_pose``):
- 16 numbers: a 4×4 matrix, row-major; 12 numbers: its top 3×4 rows;
- 7 numbers: ``x y z qx qy qz qw`` (metres, unit quaternion, scalar last);
- 6 numbers with ``rpy_deg=True``: ``x y z roll pitch yaw`` in degrees,
  R = Rz(yaw) · Ry(pitch) · Rx(roll) (the ROS / URDF convention);
- a file: JSON (a 4×4 nested list, a flat list, or an object with one of those under
  ``T``, ``matrix``, ``pose`` or ``cam_R_m2c``/``cam_t_m2c`` in BOP millimetres; a list of
  such BOP entries, or a whole BOP ``scene_gt.json``: its first frame), OpenCV
  YAML (the first ``!!opencv-matrix`` of size 4×4), or text with numbers separated by
  whitespace or commas (M3T's pose files, with their name line and ``4, 4`` header).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from sim2real.core.errors import InputError

ORTHONORMAL_TOL = (
    1e-3  # files often keep 6 digits; larger deviations mean a scaled or sheared matrix
)

MAX_TRANSLATION_M = 20.0
"""The farthest a pose's translation may reach: no depth camera sees a part, nor stands from a
robot's base, this far; a pose written in millimetres (0.5 m as 500) does."""

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def check_rigid(
    T: np.ndarray, source: str | Path | None = None, field: str | None = "pose"
) -> np.ndarray:
    """Validate a 4×4 rigid transform and return it as float64 with an exactly orthonormal
    rotation (the nearest one, by SVD). Raises ``InputError`` for a bad shape, non-finite
    values, a non-orthonormal or reflecting rotation, or a last row other than 0 0 0 1."""
    T = np.asarray(T, dtype=np.float64)
    if T.shape != (4, 4):
        raise InputError(source, field, f"expected a 4x4 matrix, got shape {T.shape}")
    if not np.all(np.isfinite(T)):
        raise InputError(source, field, "matrix has non-finite values")
    if not np.allclose(T[3], [0, 0, 0, 1], atol=1e-9):
        raise InputError(source, field, f"last row must be 0 0 0 1, got {T[3].tolist()}")
    R = T[:3, :3]
    err = np.abs(R.T @ R - np.eye(3)).max()
    if err > ORTHONORMAL_TOL:
        raise InputError(
            source,
            field,
            f"rotation is not orthonormal (|R^T R - I| = {err:.3g}): not a rigid pose",
        )
    if np.linalg.det(R) < 0:
        raise InputError(
            source, field, "rotation has determinant -1 (a reflection): not a rigid pose"
        )
    U, _, Vt = np.linalg.svd(R)
    out = T.copy()
    out[:3, :3] = U @ Vt
    return out


def quat_to_matrix(qx: float, qy: float, qz: float, qw: float) -> np.ndarray:
    """(3, 3) rotation of a unit quaternion (scalar last)."""
    return quats_to_matrices(np.array([[qw, qx, qy, qz]]))[0]


def quats_to_matrices(quat: np.ndarray) -> np.ndarray:
    """(N, 4) unit quaternions, scalar first (MuJoCo's ``w x y z``) -> (N, 3, 3) rotations."""
    w, x, y, z = np.asarray(quat).T
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], 1),
            np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], 1),
            np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], 1),
        ],
        axis=1,
    )


def matrix_to_quat(R: np.ndarray) -> np.ndarray:
    """(4,) unit quaternion ``qx qy qz qw`` of a rotation matrix, with qw >= 0."""
    from scipy.spatial.transform import Rotation

    q = Rotation.from_matrix(np.asarray(R, dtype=np.float64)).as_quat()
    return -q if q[3] < 0 else q


def rpy_deg_to_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """(3, 3) rotation R = Rz(yaw) Ry(pitch) Rx(roll), angles in degrees."""
    r, p, y = np.radians([roll, pitch, yaw])
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


def make_pose(R: np.ndarray, t: np.ndarray) -> np.ndarray:
    """(4, 4) from a (3, 3) rotation and a (3,) translation in metres."""
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = np.asarray(t, dtype=np.float64).reshape(3)
    return T


def poses_at(position_m: np.ndarray, centre_part_m: np.ndarray, rotations: np.ndarray) -> list:
    """One ``T_cam_part`` per rotation that puts the part's point ``centre_part_m`` (part frame)
    at ``position_m`` (camera frame)."""
    position, centre = np.asarray(position_m, float), np.asarray(centre_part_m, float)
    return [make_pose(R, position - R @ centre) for R in rotations]


def invert_pose(T: np.ndarray) -> np.ndarray:
    """Inverse of a rigid transform, without a general matrix inverse."""
    R, t = T[:3, :3], T[:3, 3]
    return make_pose(R.T, -R.T @ t)


def pose_from_values(
    values: list[float] | np.ndarray,
    *,
    rpy_deg: bool = False,
    source: str | Path | None = None,
    field: str | None = "pose",
) -> np.ndarray:
    """Build a rigid pose from 16, 12, 7 or (with ``rpy_deg``) 6 numbers; see the module doc."""
    v = np.asarray(values, dtype=np.float64).ravel()
    if not np.all(np.isfinite(v)):
        raise InputError(source, field, "pose has non-finite values")
    if v.size == 16:
        return check_rigid(v.reshape(4, 4), source, field)
    if v.size == 12:
        return check_rigid(np.vstack([v.reshape(3, 4), [0, 0, 0, 1]]), source, field)
    if v.size == 7:
        q = v[3:]
        norm = np.linalg.norm(q)
        if abs(norm - 1.0) > 1e-2:
            raise InputError(
                source, field, f"quaternion qx qy qz qw must have unit norm, got {norm:.4g}"
            )
        return make_pose(quat_to_matrix(*(q / norm)), v[:3])
    if v.size == 6:
        if not rpy_deg:
            raise InputError(
                source,
                field,
                "6 values are ambiguous: give x y z qx qy qz qw, a 4x4 matrix, "
                "or x y z roll pitch yaw with the degrees flag (--rpy-deg)",
            )
        return make_pose(rpy_deg_to_matrix(*v[3:]), v[:3])
    raise InputError(source, field, f"expected 16, 12, 7 or 6 numbers for a pose, got {v.size}")


def check_metres(T: np.ndarray, source: str | Path | None, field: str | None) -> np.ndarray:
    """``T`` unchanged when its translation is within ``MAX_TRANSLATION_M``, else InputError:
    a pose in millimetres read as metres (tracking from 500 m loses every frame; a robot
    waypoint moved by it would be hundreds of metres off)."""
    distance = float(np.linalg.norm(T[:3, 3]))
    if distance > MAX_TRANSLATION_M:
        raise InputError(
            source,
            field,
            f"the translation is {distance:.4g} m long, over {MAX_TRANSLATION_M:g} m: it looks "
            "like millimetres; poses are in metres",
        )
    return T


def parse_pose(
    text: str | Path, *, rpy_deg: bool = False, field: str = "pose", obj_id: int | None = None
) -> np.ndarray:
    """A pose from inline numbers (``"0 0 0.5 0 0 0 1"``, commas allowed) or from a file path
    (``obj_id``: the object's entry in a BOP file that lists several). Its translation must be
    metres (``check_metres``)."""
    s = str(text).strip()
    path = Path(s)
    looks_inline = bool(s) and all(_NUMBER.fullmatch(tok) for tok in re.split(r"[\s,;]+", s) if tok)
    if not looks_inline:
        tokens = [tok for tok in re.split(r"[\s,;]+", s) if tok]
        odd = [tok for tok in tokens if tok.lower().lstrip("+-") in ("nan", "inf", "infinity")]
        if odd and not path.is_file():  # numbers, one of them not finite
            raise InputError(s, field, f"{odd[0]} is not a finite number")
        if not path.is_file():
            raise InputError(s, field, "not a file and not a list of numbers")
        return check_metres(load_pose_file(path, rpy_deg=rpy_deg, obj_id=obj_id), path, field)
    values = [float(tok) for tok in re.split(r"[\s,;]+", s) if tok]
    return check_metres(pose_from_values(values, rpy_deg=rpy_deg, field=field), None, field)


def bop_pose(entry: dict, path: Path, where: str = "") -> np.ndarray:
    """(4, 4) metres from a BOP ``cam_R_m2c`` / ``cam_t_m2c`` entry (millimetres); ``where``
    prefixes the field names in errors (``"12."``: frame 12's entry)."""
    try:
        R = np.asarray(entry["cam_R_m2c"], dtype=np.float64)
        t = np.asarray(entry["cam_t_m2c"], dtype=np.float64)
    except KeyError as exc:
        raise InputError(path, f"{where}{exc.args[0]}", "missing field") from exc
    except (TypeError, ValueError) as exc:
        raise InputError(path, f"{where}cam_R_m2c", f"not numeric ({exc})") from exc
    if R.size != 9:
        raise InputError(path, f"{where}cam_R_m2c", f"expected 9 numbers, got {R.size}")
    if t.size != 3:
        raise InputError(path, f"{where}cam_t_m2c", f"expected 3 numbers, got {t.size}")
    return check_rigid(make_pose(R.reshape(3, 3), t.reshape(3) / 1000.0), path, f"{where}cam_R_m2c")


def _bop_entry(data: object, path: Path, obj_id: int | None) -> dict | None:
    """The BOP ``cam_R_m2c``/``cam_t_m2c`` entry in a list of them (one per object) or in a
    ``scene_gt.json`` (its first frame), picked by ``obj_id`` where several objects are listed;
    None for anything else."""
    where = ""
    if isinstance(data, dict) and data and all(str(k).isdigit() for k in data):
        first = min(data, key=int)  # scene_gt.json: image id -> the objects in it
        data, where = data[first], f"{first}."
    if not isinstance(data, list) or not data or not all(isinstance(e, dict) for e in data):
        return None
    if not all("cam_R_m2c" in e for e in data):
        return None
    ids = sorted({e.get("obj_id") for e in data}, key=str)
    listed = ", ".join(map(str, ids))
    chosen = [e for e in data if obj_id is None or e.get("obj_id") == obj_id]
    if not chosen:
        raise InputError(path, f"{where}obj_id", f"no object {obj_id} (ids {listed})")
    if obj_id is None and len(ids) > 1:
        raise InputError(
            path, f"{where}obj_id", f"{len(ids)} objects (ids {listed}): pass --obj-id"
        )
    return chosen[0]


def _pose_from_json(data: object, path: Path, rpy_deg: bool, obj_id: int | None) -> np.ndarray:
    data = _bop_entry(data, path, obj_id) or data
    if isinstance(data, dict):
        if "cam_R_m2c" in data and "cam_t_m2c" in data:  # BOP scene_gt entry, millimetres
            return bop_pose(data, path)
        for key in ("T", "matrix", "pose", "T_cam_part"):
            if key in data:
                return pose_from_values(
                    np.asarray(data[key], dtype=np.float64), rpy_deg=rpy_deg, source=path, field=key
                )
        raise InputError(
            path,
            None,
            "no pose found: expected a key T, matrix, pose, T_cam_part or cam_R_m2c/cam_t_m2c",
        )
    try:
        values = np.asarray(data, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(path, "pose", f"not a numeric matrix ({exc})") from exc
    return pose_from_values(values, rpy_deg=rpy_deg, source=path)


def load_pose_file(
    path: str | Path, *, rpy_deg: bool = False, obj_id: int | None = None
) -> np.ndarray:
    """A pose from a JSON, OpenCV YAML or plain-text file (see the module doc); ``obj_id``
    picks the object of a BOP file that lists several."""
    from sim2real.core.opencv_yaml import is_opencv_yaml, load_opencv_yaml

    path = Path(path)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, None, f"cannot read pose file ({exc})") from exc
    if path.suffix.lower() == ".json":
        try:
            return _pose_from_json(json.loads(text), path, rpy_deg, obj_id)
        except json.JSONDecodeError as exc:
            raise InputError(path, None, f"not valid JSON ({exc.msg}, line {exc.lineno})") from exc
    if is_opencv_yaml(path):
        for key, value in load_opencv_yaml(path).items():
            if isinstance(value, np.ndarray) and value.shape == (4, 4):
                return check_rigid(value, path, key)
        raise InputError(path, None, "no 4x4 opencv-matrix in the file")
    # plain text: keep only the lines made of numbers (drops M3T's name line)
    values: list[float] = []
    for line in text.splitlines():
        tokens = [tok for tok in re.split(r"[\s,;]+", line.strip()) if tok]
        if tokens and all(_NUMBER.fullmatch(tok) for tok in tokens):
            values.extend(float(tok) for tok in tokens)
    if len(values) == 18 and values[:2] == [4.0, 4.0]:  # M3T writes "4, 4," before the matrix
        values = values[2:]
    return pose_from_values(values, rpy_deg=rpy_deg, source=path)


def look_at(
    eye: np.ndarray, target: np.ndarray, up: np.ndarray = np.array([0.0, 0.0, 1.0])
) -> np.ndarray:
    """(4, 4) ``T_world_cam`` of a camera at ``eye`` looking at ``target`` (OpenCV axes: z
    forward, y down, so the world's ``up`` appears upward in the image)."""
    eye, target, up = (np.asarray(a, dtype=np.float64) for a in (eye, target, up))
    z = target - eye
    z /= np.linalg.norm(z)
    x = np.cross(z, up)
    if np.linalg.norm(x) < 1e-9:
        raise ValueError("look_at: viewing direction is parallel to 'up'")
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    return make_pose(np.stack([x, y, z], axis=1), eye)
