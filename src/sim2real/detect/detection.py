"""One frame's detection of the part (what ``detector.detect_frame`` returns)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Detection:
    """One frame's detection; positions in the camera frame of the image given (metres)."""

    found: bool
    confidence: float
    position_m: np.ndarray | None
    """(3,) the part's bounding-box centre, camera frame [m]; None when nothing was found."""
    centre_px: np.ndarray | None
    """(2,) its projection in the given image [px]."""
    T_cam_part: np.ndarray | None = None
    """(4, 4) pose from the keypoints (PnP) moved to ``position_m`` (and refined onto the
    depth when ``depth_agreement`` is set), or None."""
    keypoints_px: np.ndarray | None = field(default=None, repr=False)
    """(K, 2) predicted keypoints in the given image [px]."""
    depth_from: str = "none"
    """Which head gave the depth: "depth" (measured depth + offset), "size" or "none"."""
    depth_agreement: float | None = None
    """Share of the part's camera-facing surface points the depth confirms at ``T_cam_part``
    (refined onto the depth: detect/verify.py); None when not checked."""

    def to_json(self, frame: int) -> dict:
        out: dict = {"frame": int(frame), "found": bool(self.found)}
        out["confidence"] = round(float(self.confidence), 4)
        out["position_m"] = (
            None if self.position_m is None else [round(float(v), 5) for v in self.position_m]
        )
        if self.T_cam_part is not None:
            out["T_cam_part"] = [[round(float(v), 6) for v in row] for row in self.T_cam_part]
        if self.depth_agreement is not None:
            out["depth_agreement"] = round(float(self.depth_agreement), 4)
        return out
