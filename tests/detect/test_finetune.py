"""Fine-tuning: the split into k trained and held-out frames, the L2-SP pull towards the
simulated weights, the original detector left as it was."""

import numpy as np
import pytest
import torch
import trimesh
from detect.standin_frames import standin_sample

from sim2real.detect.finetune import FinetuneConfig, finetune_detector
from sim2real.detect.train import OptimConfig, TrainConfig, train_detector


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    path = tmp_path_factory.mktemp("ft") / "box.ply"
    trimesh.creation.box(extents=[0.06, 0.04, 0.03]).export(path)
    cfg = TrainConfig.model_validate(
        {
            "network": {"width": 4, "height_px": 48, "width_px": 64},
            "scene": {"textures": {"count": 10, "size_px": 8}},
            "optim": {"max_steps": 2, "batch_size": 2},
            "frames": 4,
            "val_frames": 3,
            "absent_frames": 0,
        }
    )
    return train_detector(path, cfg).detector, cfg


def distance(a, b) -> float:
    pairs = zip(a.parameters(), b.parameters(), strict=True)
    return float(sum(((p.detach() - q.detach()) ** 2).sum() for p, q in pairs))


@pytest.mark.slow
def test_l2sp_keeps_the_weights_nearer_the_simulated_ones_than_naive_tuning(tiny):
    det, train_cfg = tiny
    before = [p.detach().clone() for p in det.net.parameters()]
    frames = []
    for i in range(6):
        s = standin_sample(40 + i, 64, 48)
        frames.append((10 + i, s.rgb, s.depth_m, s.K, s.T_cam_part))
    optim = OptimConfig(max_steps=15, batch_size=4, lr=5e-3, max_minutes=5)
    common = {"k": 3, "replay_frames": 4, "val_frames": 3, "optim": optim}
    torch.manual_seed(0)
    naive = finetune_detector(det, train_cfg, frames[::-1], FinetuneConfig(mode="naive", **common))
    torch.manual_seed(0)
    stages: dict[str, list] = {}
    kept = finetune_detector(
        det, train_cfg, frames, FinetuneConfig(mode="replay", l2sp_alpha=50.0, **common),
        progress=lambda stage, done, total: stages.setdefault(stage, []).append((done, total)),
    )  # fmt: skip
    # the first k frames by id train, the rest is held out, whatever the order given
    assert naive.train_frames == kept.train_frames == [10, 11, 12]
    assert kept.held_out_frames == [13, 14, 15] and kept.steps == naive.steps == 15
    assert kept.real_before.frames == 3 and kept.sim_before.frames >= 1
    # progress: one count per stage, each ending at its total (3 validation + 4 replay frames
    # rendered; the 3 held-out and the simulated frames measured before and after)
    assert stages["render"][-1] == (7, 7) and len(stages["render"]) == 7
    n = 2 * (3 + kept.sim_before.frames)
    assert [d for d, _ in stages["measure"]] == list(range(1, n + 1))
    assert stages["fine-tune"][-1] == (100.0, 100.0)
    assert distance(kept.detector.net, det.net) < 0.5 * distance(naive.detector.net, det.net)
    # the detector fine-tuned is a copy: the simulated one is unchanged
    assert all(torch.equal(p, q) for p, q in zip(det.net.parameters(), before, strict=True))
    assert np.isfinite(distance(naive.detector.net, det.net))
