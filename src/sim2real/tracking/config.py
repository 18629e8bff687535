"""Thresholds of the part tracker (``Tracker``), one validated config."""

from __future__ import annotations

from pydantic import Field

from sim2real.core.strict import StrictModel
from sim2real.tracking.region import RegionConfig


class TrackerConfig(StrictModel):
    """Thresholds of the tracker. Scores are shares of the visible model points that agree."""

    views: int = Field(800, ge=20, description="precomputed viewpoints around the part")
    points_per_view: int = Field(400, ge=50, description="model points aligned per frame")
    track_score: float = Field(0.85, gt=0, le=1, description="score to report tracking")
    lost_score: float = Field(0.35, ge=0, le=1, description="below it: lost at once")
    recover_score: float = Field(
        0.9,
        gt=0,
        le=1,
        description="score to accept a re-found pose (a wrong match elsewhere must not pass)",
    )
    gates_m: tuple[float, ...] = Field(
        (0.03, 0.012, 0.006), description="ICP correspondence gates [m]"
    )
    track_outline: float = Field(
        0.35,
        ge=0,
        le=1,
        description="share of the outline that must be a depth edge to keep tracking",
    )
    recover_outline: float = Field(
        0.45,
        ge=0,
        le=1,
        description="share of a re-found pose's outline inside the image that must be a depth "
        "edge in the frame, the outline beside an occluder counting as unconfirmed (a shape "
        "matched inside a larger surface, e.g. an L-bracket on a box's corner, scores ~0.2; but "
        "a bracket lying on a table scores ~0.5, its contact being no edge)",
    )
    recover_support: float = Field(
        0.5,
        ge=0,
        le=1,
        description="share of a re-found pose's expected returns (less those an occluder "
        "explains) that must agree: over a hole in the data, a wrong pose meets few "
        "contradictions but finds little support",
    )
    recover_in_image: float = Field(
        0.8,
        gt=0,
        le=1,
        description="share of a re-found pose's camera-facing surface that must lie inside the "
        "image: a part half outside it matches flipped or shifted poses as well as the true one",
    )
    track_occluder_m: float = Field(
        0.012,
        gt=0,
        description="while tracking, a surface this much in front of the model is an occluder "
        "(a gripper or a hand close to the part), not a contradiction; a re-found pose needs a "
        "clear gap of half the part's diameter (3 to 10 cm)",
    )
    inlier_m: float = Field(
        0.006, gt=0, description="agreeing-return tolerance (at least 1 % of depth) [m]"
    )
    noise_sigmas: float = Field(
        2.0,
        ge=0,
        description="the agreeing-return tolerance and the ICP gates are at least this many "
        "standard deviations of the frame's own depth noise, read where the part is expected "
        "(``tracking.depth_noise``), and the lost part's search voxel 1.5 of them: a sensor "
        "noisier than the 6 mm suit is not called lost on the true pose (2.5 let a bracket "
        "re-found 180 deg over pass on 5 mm noise); 0 = the fixed tolerances alone",
    )
    search_voxel_m: float | None = Field(
        None, description="voxel of the global search; None = 3 % of the diameter"
    )
    max_step_m: float = Field(
        0.3,
        gt=0,
        description="a predicted motion of more than this between two frames is reset to none "
        "(the next frame starts from the last pose) [m]",
    )
    static_camera: bool = Field(
        True,
        description="the camera does not move: when lost, search first where the frame stands "
        "in front of the farthest depth seen so far (what moved), then the whole frame",
    )
    full_search_every: int = Field(
        10,
        ge=1,
        description="while lost with a static camera, search the whole frame only on every n-th "
        "lost frame (the foreground is searched on each): bounds the cost of a lost frame",
    )
    outline_margin_px: float = Field(
        3.0,
        ge=0,
        description="model points nearer than this to the part's outline in the image neither "
        "confirm nor contradict a pose: depth sensors blur, fatten or lose thin features and "
        "what borders an outline (stereo matching windows, mixed pixels) [px]",
    )
    region: RegionConfig = Field(
        default_factory=RegionConfig, description="the colour (region) modality's settings"
    )
    color_agreement: float = Field(
        0.35,
        gt=0,
        le=1,
        description="colour agreement of the outline (share of each line's outline distribution "
        "within a few pixels of the model's) that counts as much as track_score: below it, "
        "colour does not vouch for the pose",
    )
    max_pose_spread: float = Field(
        0.1,
        gt=0,
        description="with colour, a pose is tracking only while the evidence pins the part's "
        "points to within this share of its diameter (RMS standard deviation from the fused "
        "step's information): a dark part with half its outline hidden slides along a valley "
        "that both modalities agree with, and such a pose is not vouched for",
    )
    min_depth_share: float = Field(
        0.15,
        ge=0,
        le=1,
        description="with depth alone, a pose is tracking only while the frame pins it, in every "
        "direction, by at least this share of what the part's view could (agreeing surface "
        "returns and outline edges): a plate slid along itself agrees in depth, and only the "
        "outline it lost could tell",
    )
    recover_flat_outline: float = Field(
        0.75,
        ge=0,
        le=1,
        description="with depth alone, a flat view's pose found again needs this share of its "
        "outline to be an edge on both sides: a plate matched onto a table's corner has two "
        "sides on the table's edges and two on the table itself (27-60 %); a plate held clear "
        "of things, 100 %",
    )
    depth_outline: bool = Field(
        True,
        description="with depth alone, where the view's surface leaves a direction free (a "
        "cube seen on two faces slides along their edge, a plate along itself), refine ICP's "
        "pose with the outline's depth edges (the colour modality's lines on the depth image)",
    )
    depth_sigma_m: float = Field(
        0.001,
        gt=0,
        description="in the fused step, the depth residual weighing as much as one standard "
        "deviation of an outline position [m]",
    )
