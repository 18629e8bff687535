"""The working range is fitted from frames simulated with a known short range, and a base
preset's range the frames contradict is not inherited (the issue's short-range camera)."""

import numpy as np
import pytest
from sensors.plane_scenes import CAMERA, planes_frame, tilted_normal

from sim2real.sensors.calibrate import calibrate_profile
from sim2real.sensors.fit_range import RANGE_MARGIN_RELATIVE, fit_range
from sim2real.sensors.gap import measure_gap
from sim2real.sensors.noise import apply_noise
from sim2real.sensors.presets import get_preset
from sim2real.sensors.profile import AxialNoise, NoiseProfile, OutputQuantization, RangeLimits
from sim2real.sensors.reference import build_reference

SHORT = NoiseProfile(
    name="short-range truth",
    axial=AxialNoise(a_m=0.0003, b_per_m=0.002, c_m=0.0, d_m_sqrt_m=0.0),
    range=RangeLimits(min_m=0.12, max_m=1.0),
    quantization=OutputQuantization(unit_m=0.0001),
)
# a base preset whose near limit (0.3 m) the frames contradict: most of the near plane lies
# nearer than it
BASE = get_preset("realsense-d435").profile.model_copy(
    update={"range": RangeLimits(min_m=0.3, max_m=10.0)}
)


def short_range_frame(view: int, truth: NoiseProfile = SHORT, seed: int = 0):
    """Two planes tilted 50 deg: the left one 0.07-0.42 m (cut at the near limit), the right
    one 0.58-3.5 m (cut at the far limit); ``view`` moves them."""
    scale = 1.0 + 0.06 * view
    ideal = planes_frame(
        [(tilted_normal(50), 0.077 * scale, 0, 320), (tilted_normal(48), 0.643 * scale, 320, 640)]
    )
    depth = apply_noise(ideal, truth, np.random.default_rng(seed))
    return build_reference(depth, CAMERA, source=f"short-{view}")


@pytest.fixture(scope="module")
def frames():
    return [short_range_frame(0, seed=0), short_range_frame(1, seed=1)]


def test_range_recovered_within_the_margin_and_the_base_not_inherited(frames):
    train, unseen = frames
    assert len(train.regions) >= 2  # both planes found in the frame
    result = calibrate_profile([train], BASE, bootstrap=3)
    r, cal = result.profile.range, result.profile.calibration
    # the returns stop at 0.12 and 1.0 m while both planes run on: both ends pinned there
    assert r.min_m == pytest.approx(0.12, rel=RANGE_MARGIN_RELATIVE)
    assert r.max_m == pytest.approx(1.0, rel=RANGE_MARGIN_RELATIVE)
    assert cal["range.min_m"].status.startswith("fitted")
    assert cal["range.max_m"].status.startswith("fitted")
    # on a frame it was not fitted to, the simulated planes return where the real ones do;
    # the base (near limit 0.3 m) loses the near plane's returns
    gap = measure_gap([unseen], {"calibrated": result.profile, "base": BASE}, seeds=(0,))
    cal_gap, base_gap = (g.metrics for g in gap.gaps)
    assert cal_gap["valid_rate_region_pp_max"] < 5
    assert base_gap["valid_rate_region_pp_max"] > 30


def test_a_range_the_frames_do_not_reach_is_kept_and_said_so():
    # a sensor that sees 0.05-5 m: the returns stop where the planes leave the image, not at
    # a range limit; kinect-v1's 0.5 m near limit is contradicted (widened to the returns),
    # its 4.0 m far limit is not (kept, and reported as kept)
    wide = SHORT.model_copy(update={"range": RangeLimits(min_m=0.05, max_m=5.0)})
    ref = short_range_frame(0, wide)
    found = fit_range([ref], get_preset("kinect-v1").profile.range)
    near = ref.depth_m[ref.depth_m > 0].min()
    assert found.limits.min_m == pytest.approx(near * (1 - RANGE_MARGIN_RELATIVE), rel=0.02)
    assert found.status["min_m"].startswith("fitted") and "contradicts" in found.status["min_m"]
    assert found.limits.max_m == 4.0
    assert found.status["max_m"].startswith("base: consistent")
    assert found.cutoff_pixels["max_m"] < 200  # no plane runs on past the farthest return
