"""Calibration recovers a known sensor from frames simulated with it (the truth is known), and
the gap measure ranks profiles as it should."""

import numpy as np
import pytest
import trimesh
from scipy import ndimage

from sim2real.core.camera import CameraIntrinsics
from sim2real.core.mesh_io import validate_mesh
from sim2real.core.pose import make_pose, rpy_deg_to_matrix
from sim2real.sensors.calibrate import calibrate_profile
from sim2real.sensors.gap import measure_gap
from sim2real.sensors.noise import apply_noise
from sim2real.sensors.presets import get_preset
from sim2real.sensors.profile import (
    AxialNoise,
    EdgeDropout,
    MissingBlobs,
    NoiseProfile,
    OutputQuantization,
    load_profile,
    save_profile,
)
from sim2real.sensors.reference_frame import NO_REGION, ReferenceFrame, Region
from sim2real.sensors.render import DepthRenderer
from sim2real.sensors.scene import make_scene

CAMERA = CameraIntrinsics(fx=525, fy=525, cx=319.5, cy=239.5, width=640, height=480)
TRUTH = NoiseProfile(
    name="truth",
    baseline_m=0.075,
    axial=AxialNoise(a_m=0.0015, b_per_m=0.002, c_m=0.3, d_m_sqrt_m=0.0),
    edge_dropout=EdgeDropout(width_px=2, probability=0.3),
    missing_blobs=MissingBlobs(rate_per_mpx=3000, radius_px=1.0),
    quantization=OutputQuantization(unit_m=0.001),
)


def synthetic_room(view: int) -> tuple:
    """A floor seen from 0.6 to 3 m, a back wall and a box: the geometry of an ordinary scene."""
    floor = trimesh.Trimesh(
        [[-4, -1, 0], [4, -1, 0], [4, 6, 0], [-4, 6, 0]], [[0, 1, 2], [0, 2, 3]]
    )
    wall = trimesh.Trimesh([[-4, 4, 0], [4, 4, 0], [4, 4, 3], [-4, 4, 3]], [[0, 1, 2], [0, 2, 3]])
    box = trimesh.creation.box((0.4, 0.4, 0.5))
    meshes = [validate_mesh(m.vertices, m.faces, "synthetic") for m in (floor, wall, box)]
    # camera 1 m above the floor, looking ahead and down 30 deg (world: x right, y ahead, z up)
    R_world_cam = rpy_deg_to_matrix(-90 - 30, 0, 0)
    T_world_cam = make_pose(R_world_cam, [0.3 * view, 0, 1.0])
    T_cam_world = np.linalg.inv(T_world_cam)
    poses = [
        T_cam_world,
        T_cam_world,
        T_cam_world @ make_pose(np.eye(3), [0.2 - 0.3 * view, 2.0, 0.25]),
    ]
    return make_scene(meshes, poses)


def synthetic_reference(view: int, seed: int) -> ReferenceFrame:
    """A frame 'measured' by the TRUTH sensor, with its exact reference geometry."""
    frame = DepthRenderer(synthetic_room(view), CAMERA).render_ideal(baseline_m=TRUTH.baseline_m)
    real = apply_noise(frame, TRUTH, np.random.default_rng(seed))
    ideal = DepthRenderer(synthetic_room(view), CAMERA).render_ideal()
    region = ideal.object_id.copy()
    interior = np.zeros(region.shape, bool)
    for k in range(3):
        interior |= ndimage.binary_erosion(region == k, iterations=4)
    return ReferenceFrame(
        source=f"synthetic-{view}",
        camera=CAMERA,
        depth_m=real,
        ref_depth_m=ideal.depth_m,
        normal_cam=ideal.normal_cam,
        incidence_rad=ideal.incidence_rad,
        region_id=np.where(ideal.depth_m > 0, region, NO_REGION).astype(np.int32),
        edge=ideal.edge,
        edge_distance_px=ndimage.distance_transform_edt(~ideal.edge).astype(np.float32),
        interior=interior,
        regions=[
            Region("plane", n, int((region == k).sum()))
            for k, n in enumerate(("floor", "wall", "box"))
        ],
    )


@pytest.fixture(scope="module")
def calibrated():
    refs = [synthetic_reference(view, seed=view) for view in range(2)]
    return refs, calibrate_profile(refs, get_preset("kinect-v1").profile, bootstrap=5)


def sigma_at(p: AxialNoise, z: float, theta_deg: float) -> float:
    t = np.radians(theta_deg)
    return (
        p.a_m
        + p.b_per_m * (z - p.c_m) ** 2
        + p.d_m_sqrt_m / np.sqrt(z) * t**2 / (np.pi / 2 - t) ** 2
    )


def test_recovers_the_true_sensor(calibrated):
    _, result = calibrated
    p = result.profile
    # the emitter baseline from the shadow bands (true 0.075 m)
    assert p.baseline_m == pytest.approx(0.075, abs=0.01)
    # sigma(z, theta) within 10 % of the truth where the frames see surfaces: the floor from
    # 1.2 m (40 deg) to 3.5 m (75 deg), the wall at 3.8 m (15 deg)
    for z, theta in ((1.2, 40), (1.6, 55), (2.5, 68), (3.5, 75), (3.8, 15)):
        assert sigma_at(p.axial, z, theta) == pytest.approx(
            sigma_at(TRUTH.axial, z, theta), rel=0.10
        ), z
    assert p.disparity is None or p.disparity.step_px == 0  # the truth has no disparity steps
    assert p.quantization.unit_m == pytest.approx(0.001)
    # every value carries how it was obtained, and nothing is NaN
    assert p.calibration["axial.b_per_m"].status == "fitted"
    assert p.calibration["lateral.sigma_px"].status.startswith("base")
    assert all(np.isfinite(v.value) for v in p.calibration.values())


def test_calibrated_profile_round_trips_and_renders(calibrated, tmp_path):
    _, result = calibrated
    save_profile(result.profile, tmp_path / "cal.yaml")
    assert load_profile(tmp_path / "cal.yaml") == result.profile


def test_gap_ranks_calibrated_over_ideal_on_an_unseen_frame(calibrated):
    _, result = calibrated
    unseen = [synthetic_reference(view=2, seed=11)]
    gap = measure_gap(
        unseen, {"ideal": get_preset("ideal").profile, "calibrated": result.profile}, seeds=(0,)
    )
    ideal, cal = (g.metrics for g in gap.gaps)
    assert cal["w1_mm"] < ideal["w1_mm"]
    assert cal["valid_rate_pp"] < 5 < ideal["valid_rate_pp"] + 5
    assert cal["noise_spread_rel_max"] < 0.25
    assert cal["noise_spread_rel_max"] < ideal["noise_spread_rel_max"]
