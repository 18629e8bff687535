"""The bars a pose must pass to be reported: a followed pose (``tracking_failures``) and a pose
found again, whose motion is unknown (``recovery_failures``, stricter). Each names the bars
missed, so a lost frame can say why (``poses.jsonl``'s ``refused``)."""

from __future__ import annotations

from sim2real.tracking.config import TrackerConfig
from sim2real.tracking.icp import Alignment


def tracking_failures(a: Alignment, cfg: TrackerConfig) -> list[str]:
    """The bars a followed pose misses, by name (empty: still the part's): the score, the
    outline as a depth edge where the depth image has an opinion (colour checks the outline
    otherwise), and the evidence pinning the pose (``max_pose_spread`` with colour,
    ``min_depth_share`` with depth alone)."""
    passed = {
        "score": a.score >= cfg.track_score,
        "outline": a.outline >= cfg.track_outline or not a.depth_has_opinion,
        "pose_spread": a.spread <= cfg.max_pose_spread,
        "depth_share": a.depth_share >= cfg.min_depth_share,
    }
    return [name for name, ok in passed.items() if not ok]


def recovery_failures(a: Alignment, cfg: TrackerConfig, in_image: bool = True) -> list[str]:
    """The bars a pose found again (not followed) misses, by name (empty: trusted;
    ``in_image=False``: all but the share of the part inside the image). The outline must be an
    edge both counting and not counting the missing returns beside it, and the evidence must
    pin the pose. Beside an occluder the outline is unconfirmed here, not skipped: a wrong
    pose tucked behind a nearer surface hides there the outline that would refute it. A flat
    view, depth alone, must stand clear of its surroundings along most of its outline
    (``recover_flat_outline``): a plate is any plate-shaped patch of a table to depth."""
    passed = {
        "score": a.score >= cfg.recover_score,
        "outline": a.outline * a.outline_clear >= cfg.recover_outline,
        "outline_returns": a.outline_returns >= cfg.recover_outline,
        "support": a.support >= cfg.recover_support,
        "in_image": not in_image or a.in_image >= cfg.recover_in_image,
        "pose_spread": a.spread <= cfg.max_pose_spread,
        "depth_share": a.depth_share >= cfg.min_depth_share,
        "flat_outline": a.flat_outline >= cfg.recover_flat_outline,
    }
    return [name for name, ok in passed.items() if not ok]


def trusted_recovery(a: Alignment, cfg: TrackerConfig, in_image: bool = True) -> bool:
    """Whether a pose found again passes every bar of ``recovery_failures``."""
    return not recovery_failures(a, cfg, in_image)


def recovery_rank(a: Alignment, cfg: TrackerConfig) -> float:
    """Re-found candidates whose outline is no edge in the frame rank below all others."""
    return a.score - (0.0 if a.outline >= cfg.recover_outline else 1.0)
