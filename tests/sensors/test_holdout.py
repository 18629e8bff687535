"""Hold-out by construction: which frames or planes a calibration is fitted to and judged on,
and how depth gap finds, from a profile's record, the data it was not fitted to."""

import numpy as np
import pytest

from sim2real.core.camera import CameraIntrinsics
from sim2real.sensors.holdout import evaluation_refs, holdout_record, split_holdout
from sim2real.sensors.profile import NoiseProfile
from sim2real.sensors.reference_frame import NO_REGION, ReferenceFrame, Region

CAM = CameraIntrinsics(fx=100, fy=100, cx=31.5, cy=23.5, width=64, height=48)


def frame(name: str, value: float, planes: int = 4) -> ReferenceFrame:
    """A 64x48 frame split into ``planes`` vertical bands, each a plane facing the camera at
    its own depth (``value`` makes frames differ)."""
    depth = np.zeros((48, 64), np.float32)
    region = np.full((48, 64), NO_REGION, np.int32)
    width = 64 // planes
    regions = []
    for k in range(planes):
        band = slice(k * width, (k + 1) * width)
        depth[:, band] = value + 0.1 * k
        region[:, band] = k
        info = {"normal_cam": [0.0, 0.0, -1.0], "offset_m": value + 0.1 * k}
        regions.append(Region("plane", f"plane_{k}", 48 * width, info))
    normals = np.zeros((48, 64, 3), np.float32)
    normals[..., 2] = -1
    interior = np.zeros((48, 64), bool)
    for k in range(planes):
        interior[4:-4, k * width + 4 : (k + 1) * width - 4] = True
    return ReferenceFrame(
        source=name,
        camera=CAM,
        depth_m=depth,
        ref_depth_m=depth.copy(),
        normal_cam=normals,
        incidence_rad=np.zeros((48, 64), np.float32),
        region_id=region,
        edge=np.zeros((48, 64), bool),
        edge_distance_px=np.full((48, 64), 50, np.float32),
        interior=interior,
        regions=regions,
    )


@pytest.fixture(autouse=True)
def small_planes_count(monkeypatch):
    # these 64x48 planes have 40 x 8 interior pixels each
    monkeypatch.setattr("sim2real.sensors.holdout.MIN_USABLE_INTERIOR_PX", 100)


@pytest.mark.parametrize(
    ("n", "every", "held"),
    [(2, 3, [1]), (3, 3, [2]), (5, 3, [2]), (6, 3, [2, 5]), (5, 2, [1, 3]), (4, 0, [])],
)
def test_every_kth_frame_is_held_out_by_default(n, every, held):
    refs = [frame(f"f{i}", 1.0 + 0.01 * i) for i in range(n)]
    split = split_holdout(refs, every)
    assert [r.source for r in split.held] == [f"f{i}" for i in held]
    assert [r.source for r in split.fit] == [f"f{i}" for i in range(n) if i not in held]
    assert split.kind == ("none" if every == 0 else "frames")
    assert {f.digest for f in split.fit_frames}.isdisjoint({f.digest for f in split.heldout_frames})


def test_one_frame_holds_out_every_second_plane():
    ref = frame("only", 1.0, planes=4)
    split = split_holdout([ref])
    assert split.kind == "planes" and "no held-out frame" in split.description
    (fit,), (held,) = split.fit, split.held
    assert [r.name for r in fit.regions] == ["plane_0", "plane_2"]
    assert [r.name for r in held.regions] == ["plane_1", "plane_3"]
    # the held-out planes' pixels are withheld from the fit, and no region of the fit is there
    band1 = np.zeros((48, 64), bool)
    band1[:, 16:32] = True
    assert fit.withheld[band1].all() and not fit.withheld[:, :16].any()
    assert (fit.region_id[band1] == NO_REGION).all() and not fit.interior[band1].any()
    assert (held.region_id[:, 16:32] == 0).all() and held.ref_depth_m[0, 20] == pytest.approx(1.1)


def test_depth_gap_judges_a_profile_on_what_it_was_not_fitted_to():
    refs = [frame(f"f{i}", 1.0 + 0.01 * i) for i in range(3)]
    split = split_holdout(refs)
    record = holdout_record(split, "base", {"w1_mm": 1.0}, {}, {})
    profile = NoiseProfile(name="cal", validation=record)
    chosen, label = evaluation_refs(refs, profile)
    assert [r.source for r in chosen] == ["f2"] and label == "1 unseen frame(s)"
    # the digest, not the file name, identifies a frame: a renamed copy is still in-sample
    renamed = [frame("copy-of-f0", 1.0)]
    chosen, label = evaluation_refs(renamed, profile)
    assert label.startswith("IN-SAMPLE") and chosen == renamed
    # a preset (no record) is judged on every frame
    assert evaluation_refs(refs, NoiseProfile(name="preset"))[0] == refs


def test_a_spatial_record_finds_its_planes_again():
    ref = frame("only", 1.0, planes=4)
    record = holdout_record(split_holdout([ref]), "base", {}, {}, {})
    chosen, label = evaluation_refs([ref], NoiseProfile(name="cal", validation=record))
    assert label == "held-out planes of 1 frame(s)"
    assert [r.name for r in chosen[0].regions] == ["plane_1", "plane_3"]
