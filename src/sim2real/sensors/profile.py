"""A depth sensor's noise model, declared as data: one optional config per noise term.

A :class:`NoiseProfile` is what a preset ships, what a user edits in YAML, and what a
calibration writes. Every term is ``None`` (off) or a small validated model with units in its
field names. :func:`sim2real.sensors.noise.apply_noise` turns a profile into noise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import (
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from sim2real.core.atomic import write_text_atomic
from sim2real.core.errors import InputError
from sim2real.core.strict import StrictModel, validation_error
from sim2real.core.yaml_io import read_yaml_mapping


class RangeLimits(StrictModel):
    """Working range: returns with depth z outside [min_m, max_m] are dropped (depth 0).
    Applied to the noisy depth, as a sensor's firmware does; from each sensor's data sheet."""

    min_m: float = Field(..., ge=0, description="closest depth that returns [m]")
    max_m: float = Field(..., gt=0, description="farthest depth that returns [m]")

    @model_validator(mode="after")
    def _ordered(self) -> RangeLimits:
        if self.min_m >= self.max_m:
            raise ValueError(f"min_m ({self.min_m}) must be less than max_m ({self.max_m})")
        return self


class AxialNoise(StrictModel):
    """Gaussian depth noise along the ray,
    sigma(z, theta) = a + b (z - c)^2 + d / sqrt(z) * theta^2 / (pi/2 - theta)^2,
    z depth [m], theta incidence angle [rad]. Form and Kinect v1 constants of Nguyen, Izadi &
    Lovell, "Modeling Kinect sensor noise for improved 3D reconstruction and tracking", 3DIMPVT
    2012; coefficients are free for calibration. theta is clamped to 89 deg (the term diverges
    at grazing incidence)."""

    a_m: float = Field(0.0012, ge=0, description="constant term [m]")
    b_per_m: float = Field(0.0019, ge=0, description="quadratic growth with depth [1/m]")
    c_m: float = Field(0.4, description="depth of least noise [m]")
    d_m_sqrt_m: float = Field(0.0001, ge=0, description="incidence-angle term [m^1.5]")


class DisparityNoise(StrictModel):
    """Stereo / structured-light noise in disparity space. Disparity d = f B / z [px], with
    f = camera fx [px] and B = |baseline_m| [m]. Gaussian noise of sigma_px is added to d (so
    the depth sigma is about z^2 sigma_px / (f B), Intel's D400 RMS-error formula), then d is
    rounded to a multiple of step_px (sub-pixel resolution; Konolige & Mihelich, "Technical
    description of Kinect calibration", ROS wiki 2011: Kinect v1 disparity in 1/8 px) and
    converted back, z = f B / d. Either may be 0 (off)."""

    sigma_px: float = Field(0.0, ge=0, description="std of the disparity noise [px]")
    step_px: float = Field(0.0, ge=0, description="disparity quantization step [px], 0 = none")


class LateralNoise(StrictModel):
    """Lateral (image-plane) noise: the renderer jitters each ray's pixel position by a
    Gaussian of sigma_px. Config only; the noise function does not apply it. Kinect v1:
    0.8 px (Nguyen, Izadi & Lovell 2012)."""

    sigma_px: float = Field(..., ge=0, description="std of the ray jitter in the image [px]")


class IncidenceDropout(StrictModel):
    """No return at grazing incidence: drop probability p(theta) = 0 below start_deg, 1 above
    end_deg, (theta - start) / (end - start) between (a linear ramp; an empirical choice)."""

    start_deg: float = Field(..., ge=0, le=90, description="angle where dropouts begin [deg]")
    end_deg: float = Field(..., ge=0, le=90, description="angle where every pixel drops [deg]")

    @model_validator(mode="after")
    def _ordered(self) -> IncidenceDropout:
        if self.start_deg >= self.end_deg:
            raise ValueError(
                f"start_deg ({self.start_deg}) must be less than end_deg ({self.end_deg})"
            )
        return self


class EdgeDropout(StrictModel):
    """No return near depth edges: a pixel within width_px (square neighbourhood) of a depth
    discontinuity (frame.edge) is dropped with the given probability, independently."""

    width_px: int = Field(..., ge=0, le=64, description="half-width of the edge band [px]")
    probability: float = Field(..., ge=0, le=1, description="drop probability in the band [1]")


class FlyingPixels(StrictModel):
    """Mixed pixels at depth edges: a valid pixel within width_px of an edge takes, with the
    given probability, a depth drawn uniformly between the smallest and largest valid depth of
    its (2 width_px + 1)^2 window (the near and far side of the edge)."""

    width_px: int = Field(1, ge=0, le=16, description="half-width of window and band [px]")
    probability: float = Field(..., ge=0, le=1, description="chance a band pixel flies [1]")


class MissingBlobs(StrictModel):
    """Discs of no return (specular spots, absorbing materials, IR interference): a Poisson
    number of blobs with mean rate_per_mpx per megapixel per frame, centres uniform over the
    image, radius uniform in [0.5, 1.5] x radius_px."""

    rate_per_mpx: float = Field(..., ge=0, description="expected blobs per megapixel per frame")
    radius_px: float = Field(..., gt=0, description="mean blob radius [px]")


class DepthDistortion(StrictModel):
    """Systematic per-device depth error: z <- z (1 + e(u, v)), e a smooth zero-mean random
    field with std relative_std and correlation length cell_px (bicubic interpolation of
    Gaussian values on a grid of cell_px spacing, normalised to exactly that std over the
    image). Drawn from its own field_seed, not the frame's generator, so one sensor shows
    the same error in every frame."""

    relative_std: float = Field(..., ge=0, lt=1, description="std of e over the image [1]")
    cell_px: float = Field(..., ge=1, description="correlation length (grid spacing) [px]")
    field_seed: int = Field(0, ge=0, description="seed of the field: one value per device")


class OutputQuantization(StrictModel):
    """Output depth rounded to multiples of the sensor's depth unit (its uint16 step)."""

    unit_m: float = Field(..., gt=0, description="depth unit [m], e.g. 0.001")


_TERMS = (
    "range",
    "axial",
    "disparity",
    "lateral",
    "incidence_dropout",
    "edge_dropout",
    "flying_pixels",
    "missing_blobs",
    "distortion",
    "quantization",
)


class FittedValue(StrictModel):
    """How a calibration arrived at one value of the profile."""

    value: float = Field(..., description="the value written into the profile")
    std: float | None = Field(None, ge=0, description="bootstrap std over regions (same unit)")
    pixels: int = Field(0, ge=0, description="pixels of real data behind it")
    status: str = Field(
        ...,
        description="'fitted', 'base: <why the data could not fit it>', 'off: <why>', or in a "
        "preset 'data sheet: <source>' / 'assumption: <why>'",
    )


class FrameRecord(StrictModel):
    """A real frame named by its file and by a digest of its depth (so a renamed copy is
    still recognised)."""

    source: str = Field(..., description="the frame's file as given")
    digest: str = Field(..., description="sha1 of its depth in metres (float32), 16 hex digits")


class HoldoutRecord(StrictModel):
    """How a calibrated profile was judged out of sample (written by ``depth calibrate``):
    on frames it was not fitted to, or, with one frame, on planes it was not fitted to."""

    kind: str = Field(..., description="'frames', 'planes' (spatial hold-out) or 'none'")
    fit_frames: list[FrameRecord] = Field(..., description="frames the values were fitted to")
    heldout_frames: list[FrameRecord] = Field([], description="frames kept out of the fit")
    heldout_planes: dict[str, list[list[float]]] = Field(
        {}, description="frame digest -> planes kept out of the fit, as [nx, ny, nz, offset_m]"
    )
    base_profile: str = Field("", description="the profile the calibration started from")
    metrics: dict[str, float] = Field({}, description="gap of this profile on the held-out data")
    base_metrics: dict[str, float] = Field({}, description="gap of the base on the same data")
    targets_met: dict[str, bool] = Field({}, description="target name -> met on held-out data")
    summary: str = Field("", description="one line for people")


class NoiseProfile(StrictModel):
    """A depth sensor's noise model: provenance, emitter geometry and optional terms
    (None = off). Terms are applied by :func:`sim2real.sensors.noise.apply_noise` in a fixed
    order (see its docstring); each term's docstring gives its formula and source."""

    name: str = Field("custom", min_length=1, description="profile name, e.g. 'realsense-d435'")
    source: str = Field("", description="provenance: papers, data sheets, calibration runs")
    baseline_m: float = Field(
        0.0,
        ge=-1,
        le=1,
        description="signed emitter / second-camera offset along camera +x [m]; 0 = none "
        "(time of flight). The renderer uses it for the shadow pass; disparity uses |B|.",
    )
    emitter_shadow: bool = Field(
        True,
        description="whether pixels the emitter cannot see return nothing; false for sensors "
        "whose output fills its shadow (seen in some registered PrimeSense frames)",
    )

    @property
    def shadow_baseline_m(self) -> float:
        """The baseline the shadow pass uses: ``baseline_m``, or 0 when there is no shadow."""
        return self.baseline_m if self.emitter_shadow else 0.0

    range: RangeLimits | None = Field(None, description="working range")
    axial: AxialNoise | None = Field(None, description="Gaussian noise along the ray")
    disparity: DisparityNoise | None = Field(None, description="disparity noise and steps")
    lateral: LateralNoise | None = Field(None, description="ray jitter (renderer)")
    incidence_dropout: IncidenceDropout | None = Field(None, description="grazing dropouts")
    edge_dropout: EdgeDropout | None = Field(None, description="dropouts near depth edges")
    flying_pixels: FlyingPixels | None = Field(None, description="mixed depths at edges")
    missing_blobs: MissingBlobs | None = Field(None, description="discs of no return")
    distortion: DepthDistortion | None = Field(None, description="per-device depth error")
    quantization: OutputQuantization | None = Field(None, description="output depth unit")
    calibration: dict[str, FittedValue] | None = Field(
        None,
        description="term.field -> where the value comes from: 'data sheet' / 'assumption' "
        "in a preset; written by `depth calibrate`: fitted, or kept from the base and why",
    )
    validation: HoldoutRecord | None = Field(
        None, description="written by `depth calibrate`: the out-of-sample check"
    )

    @field_validator("disparity")
    @classmethod
    def _needs_baseline(
        cls, value: DisparityNoise | None, info: ValidationInfo
    ) -> DisparityNoise | None:
        baseline = info.data.get("baseline_m")
        if value is not None and baseline is not None and baseline == 0:
            raise ValueError("the disparity term needs a non-zero baseline_m")
        return value

    def active_terms(self) -> list[str]:
        """Names of the terms that are on, in declaration order."""
        return [t for t in _TERMS if getattr(self, t) is not None]


def profile_from_dict(
    data: Any, source: str | Path | None = None, prefix: str | None = None
) -> NoiseProfile:
    """Validate a mapping (parsed YAML) into a NoiseProfile. ``source`` names where the data
    came from (a file, a preset) and ``prefix`` the section inside it, for error messages;
    problems raise InputError(source, 'prefix.dotted.field', message)."""
    if not isinstance(data, dict):
        raise InputError(source, prefix, f"expected a mapping of profile fields, got {data!r}")
    try:
        return NoiseProfile.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, source, prefix, NoiseProfile) from None


def load_profile(path: str | Path) -> NoiseProfile:
    """Read a noise profile YAML. The file holds the profile's fields at the top level, or a
    sensor file's ``noise:`` section (with ``camera:`` beside it, ignored here); errors name the
    file and the dotted field, e.g. ``axial.a_m``."""
    data = read_yaml_mapping(path, "noise profile")
    if "noise" in data and set(data) <= {"noise", "camera"}:
        return profile_from_dict(data["noise"], path, "noise")
    return profile_from_dict(data, path)


def profile_to_dict(profile: NoiseProfile) -> dict[str, Any]:
    """Plain-data form (terms that are off are left out); profile_from_dict reads it back."""
    return profile.model_dump(mode="json", exclude_none=True)


def save_profile(profile: NoiseProfile, path: str | Path) -> None:
    """Write the profile as YAML, atomically; load_profile(path) == profile."""
    header = f"# sim2real noise profile '{profile.name}' (see docs/noise-profile.md)\n"
    body = yaml.safe_dump(profile_to_dict(profile), sort_keys=False, allow_unicode=True)
    write_text_atomic(path, header + body)
