"""``sim2real model tune``: a prepared model tuned with real frames of the part at known poses.

The surface returns (``models.tune_returns``) are stored beside the model (``returns.npz``,
with a summary in ``tuning.yaml``); the tracker and the renderer pick them up from the
MODEL_DIR. The result also says how much better the tuned model predicts the real frames'
valid pixels on the part than the untuned one (same frames: in-sample).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from sim2real.core.atomic import write_text_atomic
from sim2real.core.camera import CameraIntrinsics
from sim2real.core.mesh_io import Mesh
from sim2real.models.tune_returns import TuneResult, tune_surface_returns, valid_pixel_agreement
from sim2real.sensors.surface_returns import RETURNS_FILE, SurfaceReturns

TUNING_FILE = "tuning.yaml"
AGREEMENT_SEEDS = 4
"""Noise draws averaged per frame when comparing simulated and real valid pixels."""


@dataclass
class ModelTuneResult:
    mesh: Mesh
    camera: CameraIntrinsics
    tune: TuneResult
    depths: list[np.ndarray]
    before: list[dict] = field(default_factory=list)
    """Per frame: ``valid_pixel_agreement`` of the untuned model (means over noise draws)."""
    after: list[dict] = field(default_factory=list)
    """The same with the tuned returns."""
    region: list[np.ndarray] = field(default_factory=list)
    """Per frame: (H, W) bool, the part's pixels not hidden by an occluder."""
    sim_before: list[np.ndarray] = field(default_factory=list)
    sim_after: list[np.ndarray] = field(default_factory=list)

    @property
    def returns(self) -> SurfaceReturns:
        return self.tune.returns

    def summary(self) -> dict:
        def mean(rows, key):
            return float(np.mean([r[key] for r in rows]))

        return {
            "frames": len(self.depths),
            "return_rate": round(self.tune.return_rate, 4),
            "vertices": len(self.returns.mesh.vertices),
            "probability_range": [
                round(float(self.returns.return_probability.min()), 4),
                round(float(self.returns.return_probability.max()), 4),
            ],
            "valid_pixel_agreement": {
                "untuned": round(mean(self.before, "agreement"), 4),
                "tuned": round(mean(self.after, "agreement"), 4),
            },
            "valid_pixel_iou": {
                "untuned": round(mean(self.before, "iou"), 4),
                "tuned": round(mean(self.after, "iou"), 4),
            },
            "per_frame": [
                {k: (round(v, 4) if isinstance(v, float) else v) for k, v in f.items()}
                for f in self.tune.frames
            ],
        }


def _simulate(mesh, T, camera, profile, returns, seed: int) -> np.ndarray:
    from sim2real.sensors.render import DepthRenderer
    from sim2real.sensors.scene import Scene, SceneObject

    obj = SceneObject(returns.mesh if returns else mesh, T, returns=returns)
    return DepthRenderer(Scene([obj]), camera).render(profile, seed=seed).depth_m


def tune_model(
    mesh: Mesh,
    depths: list[np.ndarray],
    camera: CameraIntrinsics,
    poses: list[np.ndarray],
    profile,
    *,
    refine: bool = True,
) -> ModelTuneResult:
    """Tune ``mesh`` with real ``depths`` at ``poses`` (T_cam_part), and compare the valid
    pixels of simulated frames (sensor ``profile``, a NoiseProfile) with the real ones."""
    from sim2real.sensors.render import DepthRenderer
    from sim2real.sensors.scene import Scene, SceneObject

    tune = tune_surface_returns(mesh, depths, camera, poses, refine=refine)
    result = ModelTuneResult(mesh, camera, tune, depths)
    for depth, T in zip(depths, tune.poses, strict=True):
        model = DepthRenderer(Scene([SceneObject(mesh, T)]), camera).render(None).depth_m
        region = (model > 0) & ~((depth > 0) & (depth < model - 0.015))
        rows = {"before": [], "after": []}
        sims = {}
        for key, returns in (("before", None), ("after", tune.returns)):
            for seed in range(AGREEMENT_SEEDS):
                sim = _simulate(mesh, T, camera, profile, returns, seed)
                rows[key].append(valid_pixel_agreement(depth, sim, region))
                sims.setdefault(key, sim)
        for key in ("before", "after"):
            getattr(result, key).append(
                {k: float(np.mean([r[k] for r in rows[key]])) for k in rows[key][0]}
            )
        result.region.append(region)
        result.sim_before.append(sims["before"])
        result.sim_after.append(sims["after"])
    return result


def tune_model_dir(
    model_dir: str | Path,
    frames: list[Path],
    poses: list[str],
    *,
    camera: CameraIntrinsics | None,
    profile,
    T_world_cam: np.ndarray | None = None,
    refine: bool = True,
    encoding: str = "auto",
    depth_scale: float | None = None,
) -> ModelTuneResult:
    """``tune_model`` on a prepared MODEL_DIR from files: depth images (with ``camera``; read
    as ``load_real_frame`` reads them, ``encoding`` and ``depth_scale`` too) or
    organised clouds, and one pose per frame (text or file; T_cam_part, or T_world_part when
    ``T_world_cam`` is given). Raises InputError for a folder that is not a prepared model, a
    pose count that differs from the frame count, or frames of another size."""
    from sim2real.core.errors import InputError
    from sim2real.core.pose import invert_pose, parse_pose
    from sim2real.models.model_dir import require_model_dir
    from sim2real.models.part import load_prepared_model
    from sim2real.sensors.real_frame import load_real_frame

    model_dir = Path(model_dir)
    require_model_dir(model_dir)
    if len(poses) != len(frames):
        raise InputError(None, "--poses", f"{len(frames)} frames but {len(poses)} poses")
    mesh = load_prepared_model(model_dir).mesh
    depths, cameras = [], []
    for path in frames:
        depth, cam = load_real_frame(path, camera, encoding=encoding, depth_scale=depth_scale)
        depths.append(depth)
        cameras.append(cam)
    Ts = [parse_pose(p, field=f"--poses[{i}]") for i, p in enumerate(poses)]
    if T_world_cam is not None:
        Ts = [invert_pose(T_world_cam) @ T for T in Ts]
    return tune_model(mesh, depths, cameras[0], Ts, profile, refine=refine)


def write_tuning(model_dir: str | Path, result: ModelTuneResult) -> None:
    """``returns.npz`` and ``tuning.yaml`` in ``model_dir`` (each written atomically)."""
    model_dir = Path(model_dir)
    result.returns.save(model_dir / RETURNS_FILE)
    write_text_atomic(model_dir / TUNING_FILE, yaml.safe_dump(result.summary(), sort_keys=False))
