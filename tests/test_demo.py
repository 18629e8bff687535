import pytest

from sim2real.demo import run_demo

pytestmark = pytest.mark.slow


def test_demo_writes_its_report_and_images(tmp_path, real_data):
    result = run_demo(tmp_path / "demo", quiet=True)
    html = result.report.read_text()
    for image in (
        "bracket_sensors.png",
        "bracket_closeup.png",
        "m3t_real_vs_sim.png",
        "pcl_noise.png",
        "tuned/tuned_model.png",
        "tuned/valid_pixels.png",
    ):
        assert image in html
        assert (tmp_path / "demo" / image).stat().st_size > 5000, image
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
    assert (tmp_path / "demo" / "track_report" / "track.png").stat().st_size > 5000
    # the model stages: a STEP bracket prepared into a MODEL_DIR, the M3T triangle tuned
    assert (tmp_path / "demo" / "model" / "bracket_model" / "model.yaml").is_file()
    assert "Tuned model" in html and "Model preparation" in html
    # the dynamics stage: the real pendulum log against its identified model
    assert (tmp_path / "demo" / "dynamics_overlay.png").stat().st_size > 5000
    # the actuator stage: measured vs predicted servo motion on a held-out gain
    overlays = sorted((tmp_path / "demo").glob("actuator_*.png"))
    assert len(overlays) == 2 and all(p.stat().st_size > 5000 for p in overlays)
    assert "Actuators: measured vs predicted" in html
