"""Without --base-profile the base is the preset whose simulation of the found planes is
closest to the frames: frames simulated with a known preset must choose that preset. And a
time-of-flight sensor's frames give baseline 0, whatever the base."""

import numpy as np
import pytest
from sensors.plane_scenes import CAMERA, planes_frame, tilted_normal

from sim2real.sensors.base_choice import choose_base
from sim2real.sensors.calibrate import calibrate_profile
from sim2real.sensors.noise import apply_noise
from sim2real.sensors.presets import get_preset
from sim2real.sensors.reference import build_reference


def frame_of(preset: str, seed: int):
    # a floor-like plane 0.58-3.5 m and a wall-like one 1.2-2.1 m, within every compared
    # range but the short-range presets', and a box face at 0.6 m in front of the floor
    ideal = planes_frame(
        [
            (tilted_normal(48), 0.643, 0, 400),
            (tilted_normal(20), 1.4, 400, 640),
            (np.array([0.0, 0.0, -1.0]), 0.6, 150, 250, 180, 330),
        ]
    )
    depth = apply_noise(ideal, get_preset(preset).profile, np.random.default_rng(seed))
    return build_reference(depth, CAMERA, source=f"{preset}-{seed}")


@pytest.mark.parametrize("preset", ["kinect-v1", "azure-kinect-nfov"])
def test_frames_of_a_preset_choose_that_preset(preset):
    choice = choose_base([frame_of(preset, seed=3)])
    assert choice.name == preset, choice.scores
    assert choice.chosen_by == "evidence"
    assert preset in choice.reason() and "chosen by evidence" in choice.reason()
    # kinect-v1 quantizes disparity in 1/8 px: only presets with a baseline compete
    if preset == "kinect-v1":
        assert all(get_preset(n).profile.baseline_m != 0 for n in choice.scores)


def test_time_of_flight_frames_give_baseline_zero():
    # Azure Kinect frames (no emitter shadow beside the box's edges, evenly spaced 1 mm depth
    # levels) calibrated from kinect-v1 (7.5 cm baseline): no baseline acts
    result = calibrate_profile(
        [frame_of("azure-kinect-nfov", seed=4)], get_preset("kinect-v1").profile, bootstrap=2
    )
    p = result.profile
    assert p.baseline_m == 0.0 and p.disparity is None
    assert p.calibration["baseline_m"].status.startswith("fitted: 0 (time of flight)")
