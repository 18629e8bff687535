"""A trained detector: its network, the part it was trained for, and one frame's detection.

``DET/`` on disk: ``weights.pt`` (the network's state dict), ``detector.yaml`` (the network
config, the part's identity and geometry, the run-time settings). ``detect_frame`` is the one
call the tracker (and ``sim2real detect run``) uses.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import Field

from sim2real.core.errors import InputError
from sim2real.core.mesh_io import Mesh
from sim2real.core.strict import StrictModel, validate
from sim2real.core.yaml_io import read_yaml_mapping
from sim2real.detect.detection import Detection
from sim2real.detect.network import NetworkConfig, build_network
from sim2real.detect.targets import PartGeometry

WEIGHTS_FILE = "weights.pt"
DETECTOR_YAML = "detector.yaml"


def mesh_hash(mesh: Mesh) -> str:
    """sha256 of the mesh's vertices (float64, metres, rounded to 1 um) and faces: the part's
    identity, whatever file or folder it was read from."""
    h = hashlib.sha256()
    h.update(np.round(np.asarray(mesh.vertices, np.float64), 6).tobytes())
    h.update(np.asarray(mesh.faces, np.int64).tobytes())
    return h.hexdigest()


class DetectorSettings(StrictModel):
    """How a detection is read from the network's outputs."""

    min_confidence: float = Field(0.3, ge=0, le=1, description="peak score to call it found")
    min_depth_valid: float = Field(
        0.2, ge=0, le=1, description="valid depth share near the peak to use the depth head"
    )
    max_pnp_rms_rel: float = Field(
        0.15, gt=0, description="PnP residual, in projected part sizes, above which no pose"
    )
    verify: bool = Field(
        True, description="with depth: check the candidates' poses against it (verify.py)"
    )
    candidates: int = Field(8, ge=1, le=20, description="heatmap peaks checked against depth")
    candidate_confidence: float = Field(
        0.1,
        ge=0,
        le=1,
        description="peak score another candidate needs to be checked (the highest peak "
        "still needs min_confidence to call the part found)",
    )
    min_agreement: float = Field(
        0.0,
        ge=0,
        le=1,
        description="share of surface points the depth must confirm (0: the "
        "most confirmed peak wins, however few)",
    )
    check_first: int = Field(
        2, ge=1, le=20, description="the highest candidates, checked against depth first"
    )
    accept_agreement: float | None = Field(
        0.5,
        ge=0,
        le=1,
        description="when the most confirmed of the first has this share of its points "
        "confirmed it is kept and the rest are not checked (null: check them all)",
    )
    rotation_agreement: float | None = Field(
        0.5,
        ge=0,
        le=1,
        description="a candidate whose keypoints give no pose is checked from 12 fixed "
        "rotations at its position and counts only with this share of its points confirmed "
        "(more starts fit other objects by chance more often); null: not checked",
    )
    no_return_share: float | None = Field(
        None,
        gt=0,
        le=1,
        description="when no checked candidate reaches accept_agreement and the highest peak's "
        "part would lie where the depth has no return for at least this share of its "
        "camera-facing points, that peak is kept unchecked: a part that returns no depth "
        "(dark, IR-absorbing, mirror-like); null: off",
    )


class DetectorFile(StrictModel):
    """``detector.yaml``."""

    network: NetworkConfig = Field(description="the network's shape")
    settings: DetectorSettings = Field(default_factory=DetectorSettings, description="run-time")
    model_name: str = Field(description="the part's name")
    model_path: str = Field(description="the mesh or MODEL_DIR it was trained from, as given")
    model_hash: str = Field(description="sha256 of the part's mesh (detector.mesh_hash)")
    centre_part_m: list[float] = Field(description="bounding-box centre, part frame [m]")
    keypoints_part_m: list[list[float]] = Field(description="(K, 3) keypoints, part frame [m]")
    symmetries: list[list[list[float]]] = Field(description="(S, 4, 4) symmetries, metres")
    surface_part_m: list[list[float]] | None = Field(
        None,
        description="(N, 6) surface points and normals, part frame (verify.py); None: "
        "a detector from before 2026-12-02, whose peaks are not checked against depth",
    )
    diameter_m: float | None = Field(None, gt=0, description="the mesh's bounding-box diagonal")
    absent_found: float | None = Field(
        None,
        ge=0,
        le=1,
        description="share of randomized frames without the part in which it said found "
        "(detect train's absent_frames); None: not measured (trained before 2026-12-05)",
    )


@dataclass
class Detector:
    """A network and what it was trained on; ``net`` is in eval mode for detection."""

    net: object
    info: DetectorFile

    # the part's geometry as arrays, built once: converting detector.yaml's lists (a cube's 24
    # symmetries, 256 surface points) cost 0.3-0.4 ms on every candidate of every frame
    @functools.cached_property
    def geometry(self) -> PartGeometry:
        return PartGeometry(
            np.asarray(self.info.centre_part_m),
            np.asarray(self.info.keypoints_part_m),
            np.asarray(self.info.symmetries),
        )

    @functools.cached_property
    def start_rotations(self) -> np.ndarray:
        """(12, 3, 3) the rotations a candidate without a keypoint pose is checked from."""
        from sim2real.detect.verify import start_rotations

        return start_rotations(self.geometry.symmetries)

    @functools.cached_property
    def surface_part_m(self) -> np.ndarray | None:
        """(N, 6) surface points and normals (``DetectorFile.surface_part_m``) or None."""
        surface = self.info.surface_part_m
        return None if surface is None else np.asarray(surface)

    def check_model(self, mesh: Mesh, source: str | Path) -> None:
        """InputError when ``mesh`` is not the part this detector was trained for."""
        if mesh_hash(mesh) != self.info.model_hash:
            raise InputError(
                source,
                "model",
                f"the detector was trained for another part ({self.info.model_name}, mesh "
                f"sha256 {self.info.model_hash[:12]}), not this one",
            )


def save_detector(detector: Detector, folder: Path) -> None:
    """Write ``weights.pt`` and ``detector.yaml`` into ``folder`` (an existing, temporary one)."""
    import torch
    import yaml

    torch.save(detector.net.state_dict(), folder / WEIGHTS_FILE)
    text = yaml.safe_dump(detector.info.model_dump(mode="json"), sort_keys=False)
    (folder / DETECTOR_YAML).write_text(text)


def load_detector(folder: str | Path) -> Detector:
    """Read a ``DET/`` folder; InputError naming the missing or malformed file."""
    import torch

    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(folder, None, "detector folder not found")
    yaml_path, weights = folder / DETECTOR_YAML, folder / WEIGHTS_FILE
    if not yaml_path.is_file():
        raise InputError(yaml_path, None, "missing: not a detector folder (detect train)")
    if not weights.is_file():
        raise InputError(weights, None, "missing: the detector folder has no weights")
    info = validate(DetectorFile, read_yaml_mapping(yaml_path), yaml_path)
    net = build_network(info.network)
    try:
        state = torch.load(weights, map_location="cpu", weights_only=True)
        net.load_state_dict(state)
    except Exception as exc:  # a truncated or foreign file: one line, naming it
        raise InputError(
            weights, None, f"cannot be read as this detector's weights ({exc})"
        ) from exc
    net.eval()
    return Detector(net, info)


def detect_frame(
    detector: Detector, rgb: np.ndarray, depth_m: np.ndarray | None, K: np.ndarray
) -> Detection:
    """Detect the part in one frame: (H, W, 3) uint8 RGB, (H, W) float32 depth [m] registered
    to it (0 = no return; None: colour only) and its (3, 3) intrinsics. A frame of another size
    than the network's is resized (intrinsics scaled); the result is in the given image's
    pixels and camera frame."""
    from sim2real.detect.decode import decode_outputs, prepare_frame, run_network

    frame = prepare_frame(rgb, depth_m, K, detector.info.network)
    out = run_network(detector, frame)
    return decode_outputs(detector, out, frame)
