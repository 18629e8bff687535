"""Noise profiles as data: YAML round trips, errors that name the field, the presets' numbers."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sim2real.core.errors import InputError
from sim2real.sensors.noise import axial_sigma_m
from sim2real.sensors.presets import get_preset, load_sensor, preset_names
from sim2real.sensors.profile import (
    AxialNoise,
    DepthDistortion,
    DisparityNoise,
    EdgeDropout,
    FlyingPixels,
    IncidenceDropout,
    LateralNoise,
    MissingBlobs,
    NoiseProfile,
    OutputQuantization,
    RangeLimits,
    load_profile,
    profile_from_dict,
    save_profile,
)

FULL = NoiseProfile(
    name="all-terms",
    source="hand-written test profile",
    baseline_m=-0.05,
    range=RangeLimits(min_m=0.3, max_m=5.0),
    axial=AxialNoise(a_m=0.001, b_per_m=0.002, c_m=0.5, d_m_sqrt_m=0.0002),
    disparity=DisparityNoise(sigma_px=0.07, step_px=0.125),
    lateral=LateralNoise(sigma_px=0.5),
    incidence_dropout=IncidenceDropout(start_deg=55.5, end_deg=80),
    edge_dropout=EdgeDropout(width_px=2, probability=0.25),
    flying_pixels=FlyingPixels(width_px=1, probability=0.1),
    missing_blobs=MissingBlobs(rate_per_mpx=3.5, radius_px=7.25),
    distortion=DepthDistortion(relative_std=0.002, cell_px=48, field_seed=11),
    quantization=OutputQuantization(unit_m=0.00025),
)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "profile.yaml"
    path.write_text(text)
    return path


# -------------------------------------------------------------------------------- round trip
@pytest.mark.parametrize("profile", [FULL, *(get_preset(n).profile for n in preset_names())])
def test_yaml_round_trip_is_equal(tmp_path: Path, profile: NoiseProfile) -> None:
    path = tmp_path / "out" / "profile.yaml"
    save_profile(profile, path)
    assert load_profile(path) == profile
    assert [p.name for p in path.parent.iterdir()] == ["profile.yaml"]  # no temporary left


def test_saved_yaml_leaves_out_terms_that_are_off(tmp_path: Path) -> None:
    # "ideal" has no term: the file holds name, source and baseline only
    path = tmp_path / "ideal.yaml"
    save_profile(get_preset("ideal").profile, path)
    text = path.read_text()
    assert "axial" not in text and "null" not in text
    assert load_profile(path).active_terms() == []


def test_load_profile_accepts_a_sensor_file_noise_section() -> None:
    # a preset file (camera: + noise:) is also a valid profile file
    preset_file = Path(__file__).parents[2] / "src/sim2real/sensors/profiles/kinect-v1.yaml"
    assert load_profile(preset_file) == get_preset("kinect-v1").profile


def test_profile_from_dict_reads_yaml_style_exponents() -> None:
    # PyYAML reads 1e-3 (no dot) as the string '1e-3'; it must still mean 0.001
    profile = profile_from_dict({"name": "x", "source": "s", "axial": {"a_m": "1e-3"}})
    assert profile.axial is not None and profile.axial.a_m == 0.001


# ------------------------------------------------------------------------------------ errors
@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        # misspelled term: named, with the close match suggested
        ("axail: {a_m: 0.001}", "axail", "did you mean 'axial'"),
        # misspelled field inside a term: the dotted path names it
        ("axial: {a_mm: 0.001}", "axial.a_mm", "did you mean 'a_m'"),
        # mistyped values
        ("axial: {a_m: abc}", "axial.a_m", "valid number"),
        ("axial: {a_m: yes}", "axial.a_m", "not a boolean"),
        ("axial: 0.001", "axial", "dictionary"),
        ("edge_dropout: {width_px: 1.5, probability: 0.5}", "edge_dropout.width_px", "integer"),
        ("baseline_m: .nan", "baseline_m", "finite"),
        # physically impossible values
        ("axial: {a_m: -0.001}", "axial.a_m", "greater than or equal to 0"),
        ("disparity: {sigma_px: -0.1}", "disparity.sigma_px", "greater than or equal to 0"),
        ("lateral: {sigma_px: -1}", "lateral.sigma_px", "greater than or equal to 0"),
        ("edge_dropout: {width_px: 1, probability: 1.5}", "edge_dropout.probability", "less"),
        ("flying_pixels: {probability: -0.1}", "flying_pixels.probability", "greater"),
        ("range: {min_m: 2.0, max_m: 1.0}", "range", "min_m (2.0) must be less than max_m"),
        ("incidence_dropout: {start_deg: 80, end_deg: 60}", "incidence_dropout", "start_deg"),
        ("incidence_dropout: {start_deg: 60, end_deg: 95}", "incidence_dropout.end_deg", "90"),
        ("missing_blobs: {rate_per_mpx: 1, radius_px: 0}", "missing_blobs.radius_px", "greater"),
        ("distortion: {relative_std: 1.5, cell_px: 10}", "distortion.relative_std", "less"),
        ("quantization: {unit_m: 0}", "quantization.unit_m", "greater than 0"),
        ("range: {min_m: 0.5}", "range.max_m", "required"),
        # disparity needs a baseline (B = 0 would divide by zero)
        ("disparity: {sigma_px: 0.1}", "disparity", "baseline"),
    ],
)
def test_bad_profile_names_file_and_field(
    tmp_path: Path, body: str, field: str, words: str
) -> None:
    path = write(tmp_path, f"name: bad\nsource: test\n{body}\n")
    with pytest.raises(InputError) as info:
        load_profile(path)
    err = info.value
    assert err.source == str(path)
    assert err.field == field
    assert words in err.message
    assert "\n" not in str(err)


def test_sensor_file_errors_are_prefixed_with_section(tmp_path: Path) -> None:
    path = write(tmp_path, "noise:\n  name: x\n  source: s\n  axial: {b_per_m: -1}\n")
    with pytest.raises(InputError) as info:
        load_profile(path)
    assert info.value.field == "noise.axial.b_per_m"


@pytest.mark.parametrize(
    ("text", "words"),
    [("name: [unclosed\n", "not valid YAML"), ("- a\n- b\n", "mapping"), ("", "mapping")],
)
def test_unreadable_yaml_is_an_input_error(tmp_path: Path, text: str, words: str) -> None:
    with pytest.raises(InputError, match=words):
        load_profile(write(tmp_path, text))


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="noise profile not found"):
        load_profile(tmp_path / "nope.yaml")


def test_profile_from_dict_names_its_source() -> None:
    with pytest.raises(InputError) as info:
        profile_from_dict({"name": "x", "source": "s", "range": {"min_m": 1, "max_m": 1}}, "cal")
    assert (info.value.source, info.value.field) == ("cal", "range")


# ----------------------------------------------------------------------------------- presets
ALL_PRESETS = [
    "azure-kinect-nfov",
    "azure-kinect-wfov",
    "ideal",
    "kinect-v1",
    "realsense-d405",
    "realsense-d435",
    "realsense-l515",
    "realsense-sr305",
]
DATA_SHEET_PRESETS = ["azure-kinect-wfov", "realsense-d405", "realsense-l515", "realsense-sr305"]


def test_preset_names() -> None:
    assert preset_names() == ALL_PRESETS


@pytest.mark.parametrize("name", ALL_PRESETS)
def test_every_preset_loads_with_provenance(name: str) -> None:
    preset = get_preset(name)
    assert preset.name == name == preset.profile.name
    assert len(preset.profile.source) > 20  # says where its numbers come from


def test_ideal_preset() -> None:
    # 640x480, fx = fy = 525, centre (319.5, 239.5), no noise term at all
    p = get_preset("ideal")
    cam = p.camera
    assert (cam.width, cam.height, cam.fx, cam.fy, cam.cx, cam.cy) == (
        640,
        480,
        525.0,
        525.0,
        319.5,
        239.5,
    )
    assert p.profile.active_terms() == [] and p.profile.baseline_m == 0.0


def test_kinect_v1_preset() -> None:
    # Nguyen, Izadi & Lovell 2012: a, b, c, d = 0.0012, 0.0019, 0.4, 0.0001; lateral 0.8 px;
    # Konolige & Mihelich: baseline 7.5 cm, disparity in 1/8 px; range 0.5-4.0 m; 1 mm unit
    p = get_preset("kinect-v1")
    prof = p.profile
    assert (p.camera.width, p.camera.height, p.camera.fx, p.camera.cx) == (640, 480, 525.0, 319.5)
    assert prof.axial == AxialNoise(a_m=0.0012, b_per_m=0.0019, c_m=0.4, d_m_sqrt_m=0.0001)
    assert prof.lateral == LateralNoise(sigma_px=0.8)
    assert abs(prof.baseline_m) == 0.075
    assert prof.disparity is not None and prof.disparity.step_px == 0.125
    assert prof.range == RangeLimits(min_m=0.5, max_m=4.0)
    assert prof.quantization == OutputQuantization(unit_m=0.001)
    # sigma at 1.2 m head-on: 0.0012 + 0.0019 * 0.8^2 = 0.002416 m
    assert axial_sigma_m(np.float32(1.2), np.float32(0), prof.axial) == pytest.approx(0.002416)


def test_realsense_d435_preset() -> None:
    # 848x480 at HFOV 87 deg: f = 424 / tan(43.5 deg) = 446.80 px; B = 50 mm; subpixel 0.08 px
    p = get_preset("realsense-d435")
    cam, prof = p.camera, p.profile
    assert (cam.width, cam.height) == (848, 480)
    assert cam.fx == pytest.approx(446.80, abs=0.01) and cam.fy == cam.fx
    assert cam.fx == pytest.approx(424 / math.tan(math.radians(43.5)))
    assert (cam.cx, cam.cy) == (423.5, 239.5)
    assert cam.hfov_deg == pytest.approx(87.0)
    assert abs(prof.baseline_m) == 0.05
    assert prof.disparity == DisparityNoise(sigma_px=0.08, step_px=0.0)
    assert prof.axial is None
    assert prof.range == RangeLimits(min_m=0.28, max_m=10.0)
    assert prof.quantization == OutputQuantization(unit_m=0.001)


def test_azure_kinect_nfov_preset() -> None:
    # NFOV unbinned: 640x576, 75 x 65 deg, 0.5-3.86 m, time of flight (no baseline), 1 mm
    p = get_preset("azure-kinect-nfov")
    cam, prof = p.camera, p.profile
    assert (cam.width, cam.height) == (640, 576)
    assert cam.hfov_deg == pytest.approx(75.0)
    assert math.degrees(2 * math.atan(cam.height / (2 * cam.fy))) == pytest.approx(65.0)
    assert prof.baseline_m == 0.0 and prof.disparity is None
    assert prof.range == RangeLimits(min_m=0.5, max_m=3.86)
    assert prof.quantization == OutputQuantization(unit_m=0.001)
    # random error: the data sheet's 17 mm bound is reached at the far end of the range
    # (assumed growth), and never exceeded inside it
    assert prof.axial is not None
    z = np.linspace(0.5, 3.86, 50, dtype=np.float32)
    sigma = axial_sigma_m(z, np.zeros_like(z), prof.axial)
    assert sigma.max() == pytest.approx(0.017, abs=2e-4) and (sigma <= 0.0172).all()
    # systematic: relative field, 0.3 % std (2 std at 2 m = 12 mm, within the 13 mm bound)
    assert prof.distortion is not None and prof.distortion.relative_std == 0.003


def _field_value(profile, key: str) -> float:
    value = profile
    for part in key.split("."):
        value = getattr(value, part)
    return float(value)


@pytest.mark.parametrize("name", DATA_SHEET_PRESETS)
def test_data_sheet_presets_mark_every_value(name: str) -> None:
    # every number of the noise terms carries 'data sheet' or 'assumption', and the mark's
    # value is the profile's own (a stale mark would misreport where a value comes from)
    prof = get_preset(name).profile
    marks = prof.calibration
    numbers = {
        f"{term}.{field}"
        for term in prof.active_terms()
        for field, v in getattr(prof, term).model_dump().items()
        if isinstance(v, float | int)
    } | {"baseline_m"}
    assert numbers <= set(marks), numbers - set(marks)
    for key, mark in marks.items():
        assert mark.status.split(":")[0] in ("data sheet", "assumption"), key
        assert mark.value == pytest.approx(_field_value(prof, key)), key


def test_short_range_and_time_of_flight_presets() -> None:
    # D405 [D400 datasheet]: 18 mm baseline, Min-Z 70 mm at 848x480, 0.1 mm unit (librealsense)
    d405 = get_preset("realsense-d405")
    assert d405.profile.baseline_m == 0.018 and d405.profile.range.min_m == 0.07
    assert d405.profile.quantization.unit_m == 0.0001 and d405.camera.depth_scale == 0.0001
    assert d405.camera.hfov_deg == pytest.approx(87.0)
    # SR305: 0.2-1.5 m, 68 x 54 deg, 1/8 mm unit
    sr = get_preset("realsense-sr305")
    assert sr.profile.range == RangeLimits(min_m=0.2, max_m=1.5)
    assert sr.camera.hfov_deg == pytest.approx(68.0)
    assert math.degrees(2 * math.atan(240 / sr.camera.fy)) == pytest.approx(54.0)
    assert sr.profile.quantization.unit_m == 0.000125
    # L515 and Azure WFOV: time of flight (no baseline), their data-sheet ranges and FOVs
    l515, wfov = get_preset("realsense-l515"), get_preset("azure-kinect-wfov")
    assert l515.profile.baseline_m == 0.0 and wfov.profile.baseline_m == 0.0
    assert l515.profile.range == RangeLimits(min_m=0.25, max_m=9.0)
    assert l515.camera.hfov_deg == pytest.approx(70.0)
    assert (l515.camera.width, l515.camera.height) == (1024, 768)
    assert wfov.profile.range == RangeLimits(min_m=0.25, max_m=2.88)
    assert wfov.camera.hfov_deg == pytest.approx(120.0)
    # the random-error bound of the data sheets at the far end of the range: Azure 17 mm,
    # L515 ~14 mm through 9 m
    for p, z_far, bound in ((wfov, 2.88, 0.017), (l515, 9.0, 0.014)):
        sigma = axial_sigma_m(np.float32(z_far), np.float32(0), p.profile.axial)
        assert sigma == pytest.approx(bound, abs=2e-4)


def test_unknown_preset_suggests_close_names() -> None:
    with pytest.raises(InputError) as info:
        get_preset("kinect")
    err = info.value
    assert err.source is None and err.field == "sensor"
    assert "unknown preset 'kinect'" in err.message
    assert "kinect-v1" in err.message and "choose one of: azure-kinect-nfov" in err.message


def test_get_preset_returns_a_copy() -> None:
    a = get_preset("kinect-v1")
    assert a.profile.axial is not None
    a.profile.axial.a_m = 1.0
    assert get_preset("kinect-v1").profile.axial == AxialNoise()


def test_load_sensor_names_camera_fields(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "camera: {fx: -1, fy: 500, cx: 1, cy: 1, width: 4, height: 4}\n"
        "noise: {name: x, source: s}\n",
    )
    with pytest.raises(InputError) as info:
        load_sensor(path)
    assert info.value.field == "camera.fx"
    path = write(tmp_path, "camera: {fx: 1, fy: 1, cx: 1, cy: 1, width: 4, height: 4}\n")
    with pytest.raises(InputError) as info:
        load_sensor(path)
    assert info.value.field == "noise"
