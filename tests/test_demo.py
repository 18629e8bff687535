import pytest
from cli_helpers import figures_drawn

from sim2real.demo import run_demo

pytestmark = pytest.mark.slow


def test_demo_writes_its_report_and_images(tmp_path, real_data, figure_log):
    result = run_demo(tmp_path / "demo", quiet=True)
    html = result.report.read_text()
    drawn = figures_drawn(figure_log)
    for image in (
        "bracket_sensors.png",
        "bracket_closeup.png",
        "m3t_real_vs_sim.png",
        "pcl_noise.png",
        "tuned/tuned_model.png",
        "tuned/valid_pixels.png",
    ):
        assert image in html and (tmp_path / "demo" / image).is_file(), image
    # what the pictures show: the bracket seen by three sensors, the real M3T frame beside its
    # simulation, the PCL noise of the real frame against the profiles, the tuned model
    sensors = [ax["title"].split(" (")[0] for ax in drawn["bracket_sensors.png"]["axes"]]
    assert sensors == ["ideal", "kinect-v1", "realsense-d435"]
    assert all(ax["images"] == 1 for ax in drawn["m3t_real_vs_sim.png"]["axes"])
    assert drawn["m3t_real_vs_sim.png"]["axes"][0]["title"] == "real D4xx frame"
    noise = drawn["pcl_noise.png"]["axes"][0]
    assert noise["xlabel"] == "depth [m]" and noise["lines"][0]["label"] == "real"
    tuned = [ax["title"] for ax in drawn["valid_pixels.png"]["axes"]]
    assert tuned[0] == "real frame" and tuned[2].startswith("simulated, tuned")
    # the bracket on its table: the ideal sensor sees every pixel, the Kinect preset casts a shadow
    assert result.summaries["bracket"]["ideal"]["valid_fraction"] == 1.0
    assert result.summaries["bracket"]["kinect-v1"]["shadow_pixels"] > 100
    # calibrated on one real frame, judged on another: closer than the ideal sensor
    gap = result.summaries["calibration"]
    assert gap["calibrated"]["w1_mm"] < gap["ideal"]["w1_mm"]
    # the tracked sequence (a bar hides up to half of the part): the bar for occlusion,
    # >= 90 % of the frames within 10 % of the diameter, and nothing wrong reported as tracking
    assert result.summaries["tracking"]["recall_at_10"] >= 0.9
    assert result.summaries["tracking"]["tracking_precision"] == 1.0
    score, error = drawn["track.png"]["axes"]
    assert score["lines"][0]["n"] == 60 and error["lines"][0]["label"] == "ADD"
    # the model stages: a STEP bracket prepared into a MODEL_DIR, the M3T triangle tuned
    assert (tmp_path / "demo" / "model" / "bracket_model" / "model.yaml").is_file()
    assert "Tuned model" in html and "Model preparation" in html
    # the dynamics stage: the real pendulum log against its identified model
    dynamics = drawn["dynamics_overlay.png"]["axes"][0]
    assert [line["label"] for line in dynamics["lines"][:2]] == ["measured", "simulated (fit)"]
    # the actuator stage: measured vs predicted servo motion on a held-out gain
    overlays = sorted(name for name in drawn if name.startswith("actuator_"))
    assert len(overlays) == 2
    for name in overlays:
        positions = drawn[name]["axes"][0]
        labels = [line["label"] for line in positions["lines"]]
        assert labels[:2] == ["goal (command)", "measured"] and len(labels) == 4, labels
        assert "kp 400" in positions["title"]  # a gain the models were not fitted on
    assert "Actuators: measured vs predicted" in html
