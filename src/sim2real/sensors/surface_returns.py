"""How often the real sensor returns depth on each part of a part's surface, and how far the
returns sit from the model there: a property of the material (dark, shiny) and of the model's
errors that no sensor-wide noise term captures. Measured from real frames by ``tune_returns``;
used by the renderer (dropout by region) and by the tracker (which model points to expect).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sim2real.core.atomic import atomic_path
from sim2real.core.errors import InputError
from sim2real.core.mesh_io import Mesh, validate_mesh

FORMAT = "sim2real.surface_returns/1"
RETURNS_FILE = "returns.npz"
"""Its name in a prepared MODEL_DIR."""


@dataclass(frozen=True)
class SurfaceReturns:
    """Per-vertex attributes of ``mesh`` (part frame, metres), interpolated across triangles."""

    mesh: Mesh
    return_probability: np.ndarray
    """(V,) float64 in [0, 1]: chance the sensor returns depth where this surface is seen."""
    confidence: np.ndarray
    """(V,) float64 in [0, 1]: how much of the estimate comes from observations rather than the
    prior (observations / (observations + prior_strength))."""
    depth_bias_m: np.ndarray
    """(V,) float64 metres: mean measured-minus-model depth of the returns (positive = the real
    surface lies behind the model there: a model error, or a see-through region)."""
    observations: np.ndarray
    """(V,) float64: pixels (barycentric shares) that saw this vertex's neighbourhood."""

    def __post_init__(self) -> None:
        n = len(self.mesh.vertices)
        for name in ("return_probability", "confidence", "depth_bias_m", "observations"):
            if np.asarray(getattr(self, name)).shape != (n,):
                raise ValueError(f"{name} must have one value per vertex ({n})")

    def at_faces(self, face_ids: np.ndarray, uvs: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Interpolate per-vertex ``values`` at hits: ``face_ids`` (N,), ``uvs`` (N, 2) as Open3D
        returns them (weights of the triangle's 2nd and 3rd vertex)."""
        tri = self.mesh.faces[face_ids]
        u, v = uvs[:, 0], uvs[:, 1]
        return (1 - u - v) * values[tri[:, 0]] + u * values[tri[:, 1]] + v * values[tri[:, 2]]

    def probability_at_points(self, points: np.ndarray) -> np.ndarray:
        """(N,) return probability at part-frame ``points`` (N, 3): that of the nearest vertex."""
        from scipy.spatial import cKDTree

        _, idx = cKDTree(self.mesh.vertices).query(points)
        return self.return_probability[idx]

    def save(self, path: str | Path) -> None:
        with atomic_path(path) as tmp, open(tmp, "wb") as f:
            np.savez_compressed(
                f,
                format=np.array(FORMAT),
                vertices=self.mesh.vertices,
                faces=self.mesh.faces,
                return_probability=self.return_probability,
                confidence=self.confidence,
                depth_bias_m=self.depth_bias_m,
                observations=self.observations,
            )

    @classmethod
    def load(cls, path: str | Path) -> SurfaceReturns:
        path = Path(path)
        if not path.is_file():
            raise InputError(path, None, "surface-returns file not found")
        try:
            with np.load(path) as z:
                data = {k: z[k] for k in z.files}
        except Exception as exc:
            raise InputError(path, None, f"cannot read surface returns ({exc})") from exc
        if str(data.get("format", "")) != FORMAT:
            raise InputError(path, "format", f"not a {FORMAT} file")
        mesh = validate_mesh(data["vertices"], data["faces"], path, "tuned")
        try:
            return cls(
                mesh,
                data["return_probability"].astype(np.float64),
                data["confidence"].astype(np.float64),
                data["depth_bias_m"].astype(np.float64),
                data["observations"].astype(np.float64),
            )
        except (KeyError, ValueError) as exc:
            raise InputError(path, None, f"inconsistent surface returns ({exc})") from exc
