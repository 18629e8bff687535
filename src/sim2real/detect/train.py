"""Training the detector on randomized simulated frames only (``sim2real detect train``).

The frames are rendered once into memory (``frames`` of them, seeded per index, so a run is
reproducible) and the network is trained on them for ``max_steps`` (or ``max_minutes``, when
those run out first), with a cosine learning-rate decay over that budget; ``val_frames``
further frames (other indices of the same randomization) measure it, and ``absent_frames``
more, drawn without the part, how often it says found where the part is not.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from pydantic import Field

from sim2real.core.strict import StrictModel
from sim2real.detect.detector import (
    Detector,
    DetectorFile,
    DetectorSettings,
    detect_frame,
    mesh_hash,
)
from sim2real.detect.evaluate import DetectionMetrics, evaluate_frames
from sim2real.detect.keypoints import bbox_corners, part_symmetries
from sim2real.detect.network import NetworkConfig, build_network, network_input, reference_depth
from sim2real.detect.scene_config import SceneConfig, resolve_assets
from sim2real.detect.sim_data import FrameSet, render_frames
from sim2real.detect.targets import PartGeometry, detector_loss
from sim2real.detect.verify import surface_samples


class OptimConfig(StrictModel):
    """The optimizer's schedule (shared by training and fine-tuning)."""

    batch_size: int = Field(16, ge=1, le=512, description="frames per step")
    lr: float = Field(2e-3, gt=0, description="peak learning rate (AdamW), cosine decay to 5 %")
    weight_decay: float = Field(1e-4, ge=0, description="AdamW weight decay")
    # steps, not minutes, set what a default training is: the same on an idle machine and a
    # loaded one (a 12 min budget gave 8,923 steps idle and 263-889 on a loaded machine); the
    # minutes only cap it (10,000 steps took 14.5-16 min on this 2-core machine, 2026-12-02)
    max_steps: int | None = Field(10_000, ge=1, description="step budget (None: time only)")
    max_minutes: float = Field(17.0, gt=0, description="wall-clock cap on the steps [min]")
    depth_dropout: float = Field(
        0.1, ge=0, le=1, description="share of frames trained with their depth blanked (RGB-D)"
    )
    colour_dropout: float = Field(
        0.3,
        ge=0,
        le=1,
        description="share of frames trained with their colour flat grey (RGB-D): the part's "
        "shape in the depth then decides, not a texture (a printed bottle scored 0.01 without)",
    )
    zoom: tuple[float, float] | None = Field(
        (0.6, 1.7),
        description="crops scaled by a factor drawn log-uniformly in [low, high] (a focal length "
        "change: the part looks larger or smaller at the same depth); None: no scaling",
    )
    crop_px: tuple[int, int] | None = Field(
        (160, 128),
        description="train on crops of this size [px] (w, h; multiples of 16), on the part "
        "most of the time: a quarter of the cost of a step on whole 320x240 frames; None: whole",
    )

    def spent(self, elapsed_s: float, step: int) -> float:
        """Share of the budget spent after ``step`` steps and ``elapsed_s`` seconds: steps or
        minutes, whichever leads (>= 1: done)."""
        by_steps = step / self.max_steps if self.max_steps else 0.0
        return max(elapsed_s / (60.0 * self.max_minutes), by_steps)

    def cut_short(self, steps: int) -> str | None:
        """A one-line notice when the minutes cap ended a training before its step budget (a
        loaded machine trains fewer steps in the same minutes: 2,169 of 10,000 seen), or None."""
        if self.max_steps is None or steps >= self.max_steps:
            return None
        return (
            f"stopped by the {self.max_minutes:g}-minute cap after {steps:,} of "
            f"{self.max_steps:,} steps: less trained than the defaults were measured with "
            "(--minutes raises the cap)"
        )


class TrainConfig(StrictModel):
    """Everything ``detect train`` resolves (written as DET/config.yaml)."""

    network: NetworkConfig = Field(default_factory=NetworkConfig, description="network shape")
    scene: SceneConfig = Field(default_factory=SceneConfig, description="the randomization")
    optim: OptimConfig = Field(default_factory=OptimConfig, description="the optimizer")
    settings: DetectorSettings = Field(
        default_factory=DetectorSettings, description="how detections are read at run time"
    )
    frames: int = Field(1500, ge=1, description="randomized training frames rendered")
    val_frames: int = Field(200, ge=1, description="randomized validation frames (other indices)")
    absent_frames: int = Field(
        100,
        ge=0,
        description="randomized frames without the part (other indices): how often the "
        "detector says found of nothing",
    )
    seed: int = Field(0, ge=0, description="seed of the randomization and the network's init")
    threads: int = Field(2, ge=1, le=256, description="torch CPU threads")


@dataclass
class TrainResult:
    detector: Detector
    config: TrainConfig
    log: list[dict]
    """Per logged step: step, elapsed_s, lr, the loss terms."""
    val: DetectionMetrics
    preview: FrameSet
    """A few training frames, for the report."""
    timings: dict = field(default_factory=dict)


def resolve_train_config(
    path: str | Path | None,
    frames: int | None = None,
    minutes: float | None = None,
    input_kind: str | None = None,
    seed: int | None = None,
    steps: int | None = None,
) -> TrainConfig:
    """The config of a YAML file (or the defaults) with the command line's overrides."""
    from sim2real.core.errors import InputError
    from sim2real.core.strict import validate
    from sim2real.core.yaml_io import read_yaml_mapping

    cfg = TrainConfig() if path is None else validate(TrainConfig, read_yaml_mapping(path), path)
    if path is not None:
        resolve_assets(cfg.scene, path, prefix="scene.")
    if input_kind is not None and input_kind not in ("rgb", "rgbd"):
        raise InputError(None, "--input", f"expected rgb or rgbd, got {input_kind!r}")
    update: dict = {}
    if frames is not None:
        update["frames"] = frames
    if seed is not None:
        update["seed"] = seed
    optim: dict = {}
    if minutes is not None:
        optim["max_minutes"] = minutes
    if steps is not None:
        optim["max_steps"] = steps
    if optim:
        update["optim"] = cfg.optim.model_copy(update=optim)
    if input_kind is not None:
        update["network"] = cfg.network.model_copy(update={"input": input_kind})
    return cfg.model_copy(update=update)


def part_geometry(part) -> PartGeometry:
    return PartGeometry(part.mesh.centre_m, bbox_corners(part.mesh), part_symmetries(part))


def fit_network(net, draw_batch, geometry, cfg: OptimConfig, net_cfg, penalty=None, log=None):
    """Train ``net`` in place on batches ``draw_batch(rng) -> (rgb, depth, targets)`` for the
    budget of ``cfg``; ``penalty(net) -> tensor`` is added to the loss (fine-tuning's L2-SP);
    ``log(step, elapsed_s, lr, terms)`` is called every 25 steps and after the last. Returns the
    steps done."""
    import torch

    rng = np.random.default_rng(0)
    opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    t0, step, terms, lr = time.perf_counter(), 0, None, cfg.lr
    net.train()
    while True:
        elapsed = time.perf_counter() - t0
        frac = cfg.spent(elapsed, step)
        if frac >= 1.0:
            if log is not None and terms is not None and step % 25 != 0:
                log(step, elapsed, lr, {k: float(v.detach()) for k, v in terms.items()})
            break
        lr = float(cfg.lr) * float(0.05 + 0.95 * 0.5 * (1 + np.cos(np.pi * frac)))
        for g in opt.param_groups:
            g["lr"] = lr
        rgb, depth, tgt = draw_batch(rng)
        out = net(network_input(rgb, depth, net_cfg))
        z_ref = reference_depth(depth) if net_cfg.input == "rgbd" else (None, None)
        terms = detector_loss(out, tgt, *z_ref)
        loss = terms["total"] + (penalty(net) if penalty is not None else 0.0)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if log is not None and step % 25 == 0:
            log(
                step, time.perf_counter() - t0, lr, {k: float(v.detach()) for k, v in terms.items()}
            )
    net.eval()
    return step


def sim_eval_frames(frames: FrameSet) -> list[tuple]:
    """(frame, rgb, depth, K, T_cam_part) of each simulated frame, for ``evaluate_frames``."""
    return [
        (i, frames.rgb[i], frames.depth_m[i].astype(np.float32), lab.K, lab.T_cam_part)
        for i, lab in enumerate(frames.labels)
        if lab.visible_px > 0
    ]


def train_detector(model: str | Path, cfg: TrainConfig, progress=None) -> TrainResult:
    """Render ``cfg.frames`` randomized frames of the part ``model`` (a mesh file or a
    MODEL_DIR), train a detector on them, measure it on ``cfg.val_frames`` others.
    ``progress(stage, done, total)`` reports rendering (frames) and training (% of the budget)."""
    import torch

    from sim2real.core.cores import usable_cores
    from sim2real.detect.frame_workers import worker_renderer
    from sim2real.models.part import load_part

    torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    part = load_part(model)
    geometry = part_geometry(part)
    scene = cfg.scene.model_copy(
        update={"width_px": cfg.network.width_px, "height_px": cfg.network.height_px}
    )
    key = (str(model), scene.model_dump_json(), int(cfg.seed))
    renderer = worker_renderer(*key, part=part)  # worker processes start with this one
    t0 = time.perf_counter()
    report = (lambda d, n: progress("render", d, n)) if progress else None
    every = {"key": key, "processes": usable_cores()}
    train = render_frames(renderer, range(cfg.frames), report, **every)
    val = render_frames(renderer, range(cfg.frames, cfg.frames + cfg.val_frames), report, **every)
    first = cfg.frames + cfg.val_frames
    absent = None
    if cfg.absent_frames:
        absent = render_frames(renderer, range(first, first + cfg.absent_frames), report,
                               part_absent=True, **every)  # fmt: skip
    render_s = time.perf_counter() - t0

    net = build_network(cfg.network)
    log: list[dict] = []

    def on_log(step, elapsed, lr, terms):
        log.append({"step": step, "elapsed_s": round(elapsed, 2), "lr": lr, **terms})
        if progress:
            progress("train", 100.0 * min(cfg.optim.spent(elapsed, step), 1.0), 100.0)

    def draw(rng):
        idx = rng.integers(0, len(train), cfg.optim.batch_size)
        o = cfg.optim
        grey = o.colour_dropout if cfg.network.input == "rgbd" else 0.0  # RGB alone: blank
        return train.batch(idx, geometry, rng, o.depth_dropout, o.crop_px, o.zoom, grey)

    t1 = time.perf_counter()
    steps = fit_network(net, draw, geometry, cfg.optim, cfg.network, log=on_log)
    train_s = time.perf_counter() - t1
    info = DetectorFile(
        network=cfg.network,
        settings=cfg.settings,
        model_name=part.name,
        model_path=str(model),
        model_hash=mesh_hash(part.mesh),
        centre_part_m=geometry.centre_part_m.tolist(),
        keypoints_part_m=geometry.keypoints_part_m.tolist(),
        symmetries=geometry.symmetries.tolist(),
        surface_part_m=np.round(surface_samples(part.mesh), 6).tolist(),
        diameter_m=float(part.mesh.diameter_m),
    )
    detector = Detector(net, info)
    metrics, _ = evaluate_frames(detector, sim_eval_frames(val))
    preview = FrameSet(train.rgb[:8], train.depth_m[:8], train.labels[:8])
    timings = {"render_s": round(render_s, 1), "train_s": round(train_s, 1), "steps": steps}
    detector.info.absent_found = found_share(detector, absent)
    return TrainResult(detector, cfg, log, metrics, preview, timings)


def found_share(detector: Detector, frames: FrameSet | None) -> float | None:
    """Share of ``frames`` in which ``detect_frame`` says the part is found (None for none)."""
    if frames is None:
        return None
    found = [
        detect_frame(detector, frames.rgb[i], frames.depth_m[i].astype(np.float32), lab.K).found
        for i, lab in enumerate(frames.labels)
    ]
    return float(np.mean(found))
