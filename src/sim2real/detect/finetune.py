"""Fine-tuning a simulation-trained detector on k labelled real frames without forgetting
(``sim2real detect finetune``).

The first k labelled frames train, the others are held out. ``replay`` mixes each batch with
randomized simulated frames rendered again from the detector's own config, and adds an L2-SP
penalty (Li et al. 2018: alpha/2 * |w - w_sim|^2) pulling the weights towards the simulated
ones; ``naive`` trains on the real frames alone. Both report the held-out real error and the
simulated validation error (the frames ``detect train`` validated on) before and after.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import Field

from sim2real.core.errors import InputError
from sim2real.core.strict import StrictModel
from sim2real.detect.decode import prepare_frame
from sim2real.detect.detector import Detector
from sim2real.detect.evaluate import DetectionMetrics, evaluate_frames
from sim2real.detect.sim_data import FrameSet, concat, render_frames
from sim2real.detect.targets import MIN_VISIBLE_PX, Label
from sim2real.detect.train import OptimConfig, TrainConfig, fit_network, sim_eval_frames


class FinetuneConfig(StrictModel):
    """How ``detect finetune`` adapts a detector."""

    k: int = Field(5, ge=1, description="labelled real frames trained on (the first k)")
    mode: Literal["replay", "naive"] = Field(
        "replay", description="replay: simulated frames mixed in + L2-SP; naive: real only"
    )
    replay_frames: int = Field(300, ge=1, description="simulated frames rendered for replay")
    replay_share: float = Field(0.5, ge=0, lt=1, description="share of each batch simulated")
    l2sp_alpha: float = Field(0.01, ge=0, description="L2-SP weight towards the sim weights")
    val_frames: int = Field(100, ge=1, description="simulated validation frames measured")
    optim: OptimConfig = Field(
        default_factory=lambda: OptimConfig(batch_size=8, lr=5e-4, max_minutes=2.0, max_steps=None),
        description="the optimizer (a shorter, gentler schedule than training's)",
    )


@dataclass
class FinetuneResult:
    detector: Detector
    config: FinetuneConfig
    train_frames: list[int]
    held_out_frames: list[int]
    real_before: DetectionMetrics
    real_after: DetectionMetrics
    sim_before: DetectionMetrics
    sim_after: DetectionMetrics
    steps: int
    log: list[dict]

    def summary(self) -> dict:
        return {
            "mode": self.config.mode,
            "k": self.config.k,
            "train_frames": self.train_frames,
            "held_out_frames": len(self.held_out_frames),
            "steps": self.steps,
            "real_held_out_before": self.real_before.summary(),
            "real_held_out_after": self.real_after.summary(),
            "sim_val_before": self.sim_before.summary(),
            "sim_val_after": self.sim_after.summary(),
        }


def real_frame_set(frames: list[tuple], net_cfg) -> FrameSet:
    """Labelled real frames ``(frame, rgb, depth, K, T_cam_part)`` at the network's size."""
    rgb, depth, labels = [], [], []
    for _, im, d, K, T in frames:
        f = prepare_frame(im, d, K, net_cfg)
        rgb.append(f.rgb)
        depth.append(f.depth_m.astype(np.float16))
        h, w = f.rgb.shape[:2]
        # no mask of the real part: taken as seen (the reference pose puts it in view)
        labels.append(Label(h, w, np.asarray(T), f.K, 10 * MIN_VISIBLE_PX))
    return FrameSet(np.stack(rgb), np.stack(depth), labels)


def check_labels(frame_ids: list[int], label_ids: list[int], labels_path, k: int) -> None:
    """InputError when labels name frames that are not there, or fewer than k + 1 match."""
    missing = sorted(set(label_ids) - set(frame_ids))
    if missing:
        shown = ", ".join(map(str, missing[:8])) + (" ..." if len(missing) > 8 else "")
        raise InputError(
            labels_path,
            "frame ids",
            f"{len(missing)} labelled frames are not in the frames given ({shown})",
        )
    if len(label_ids) <= k:
        raise InputError(
            labels_path, "frame ids", f"{len(label_ids)} labelled frames: need more than k = {k}"
        )


def _part_of(progress, offset: int, total: int):
    """A ``(done, n)`` callback for one part of a larger count ``progress(done, total)``."""
    return progress and (lambda done, _: progress(offset + done, total))


def sim_frames(detector: Detector, train_cfg: TrainConfig, cfg: FinetuneConfig, progress=None):
    """(validation, replay) simulated frames of the detector's own randomization: validation
    at the indices ``detect train`` validated on, replay after them (never trained on);
    ``progress(done, total)`` over both."""
    from sim2real.detect.render_rgbd import SampleRenderer
    from sim2real.models.part import load_part

    part = load_part(detector.info.model_path)
    detector.check_model(part.mesh, detector.info.model_path)
    scene = train_cfg.scene.model_copy(
        update={"width_px": train_cfg.network.width_px, "height_px": train_cfg.network.height_px}
    )
    renderer = SampleRenderer(part, scene, seed=train_cfg.seed)
    start = train_cfg.frames
    n_val = min(cfg.val_frames, train_cfg.val_frames)
    n_replay = cfg.replay_frames if cfg.mode == "replay" else 0
    total = n_val + n_replay
    val = render_frames(renderer, range(start, start + n_val), _part_of(progress, 0, total))
    first = start + train_cfg.val_frames
    replay = None
    if n_replay:
        replay = render_frames(
            renderer, range(first, first + n_replay), _part_of(progress, n_val, total)
        )
    return val, replay


def finetune_detector(
    detector: Detector,
    train_cfg: TrainConfig,
    frames: list[tuple],
    cfg: FinetuneConfig,
    sim: tuple[FrameSet, FrameSet | None] | None = None,
    progress=None,
) -> FinetuneResult:
    """Fine-tune a copy of ``detector`` (trained with ``train_cfg``) on the first ``cfg.k`` of
    the labelled real ``frames`` (frame, rgb, depth, K, T_cam_part), in frame order; ``sim``:
    the (validation, replay) frames of ``sim_frames`` when already rendered.
    ``progress(stage, done, total)`` reports rendering and measuring (frames) and fine-tuning
    (% of the budget)."""
    import torch

    def stage(name: str):
        return progress and (lambda done, total: progress(name, done, total))

    frames = sorted(frames, key=lambda f: f[0])
    train, held = frames[: cfg.k], frames[cfg.k :]
    sim_val, replay = (
        sim if sim is not None else sim_frames(detector, train_cfg, cfg, stage("render"))
    )
    sim_eval = sim_eval_frames(sim_val)
    measure, n_measured = stage("measure"), 2 * (len(held) + len(sim_eval))  # before, after
    real_before, _ = evaluate_frames(detector, held, _part_of(measure, 0, n_measured))
    sim_before, _ = evaluate_frames(detector, sim_eval, _part_of(measure, len(held), n_measured))

    net = copy.deepcopy(detector.net)
    geometry = detector.geometry
    real = real_frame_set(train, detector.info.network)
    penalty = None
    pool = real
    n_sim = 0
    if cfg.mode == "replay":
        pool = concat(real, replay)
        n_sim = round(cfg.replay_share * cfg.optim.batch_size)
        anchor = [p.detach().clone() for p in net.parameters()]

        def penalty(model):
            return (
                0.5
                * cfg.l2sp_alpha
                * sum(((p - a) ** 2).sum() for p, a in zip(model.parameters(), anchor, strict=True))
            )

    def draw(rng):
        n_real = cfg.optim.batch_size - n_sim
        idx = np.r_[rng.integers(0, len(real), n_real), rng.integers(len(real), len(pool), n_sim)]
        rgb, depth, tgt = pool.batch(
            idx.astype(int),
            geometry,
            rng,
            cfg.optim.depth_dropout,
            cfg.optim.crop_px,
            cfg.optim.zoom,
        )
        gain = torch.from_numpy(rng.uniform(0.7, 1.3, (len(idx), 1, 1, 3)).astype(np.float32))
        rgb = (rgb.float() * gain).clamp(0, 255).to(torch.uint8)  # exposure / white balance
        return rgb, depth, tgt

    log: list[dict] = []

    def on_log(step, elapsed, lr, terms):
        log.append({"step": step, "elapsed_s": round(elapsed, 2), **terms})
        if progress:
            progress("fine-tune", 100.0 * min(cfg.optim.spent(elapsed, step), 1.0), 100.0)

    steps = fit_network(
        net, draw, geometry, cfg.optim, detector.info.network, penalty=penalty, log=on_log
    )
    tuned = Detector(net, detector.info)
    half = n_measured // 2
    real_after, _ = evaluate_frames(tuned, held, _part_of(measure, half, n_measured))
    sim_after, _ = evaluate_frames(tuned, sim_eval, _part_of(measure, half + len(held), n_measured))
    return FinetuneResult(
        tuned,
        cfg,
        [f[0] for f in train],
        [f[0] for f in held],
        real_before,
        real_after,
        sim_before,
        sim_after,
        steps,
        log,
    )


def write_finetuned_folder(result: FinetuneResult, train_cfg: TrainConfig, out: str | Path) -> Path:
    """``DET2/``: the tuned detector, the original training config, ``finetune.yaml`` (the
    config and the errors before and after)."""
    import json

    import yaml

    from sim2real.core.atomic import atomic_folder
    from sim2real.detect.detector import save_detector

    out = Path(out)
    with atomic_folder(out) as tmp:
        save_detector(result.detector, tmp)
        (tmp / "config.yaml").write_text(
            yaml.safe_dump(train_cfg.model_dump(mode="json"), sort_keys=False)
        )
        doc = {"config": result.config.model_dump(mode="json"), "results": result.summary()}
        (tmp / "finetune.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
        (tmp / "finetune_log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in result.log))
    return out
