"""The whole pipeline on the kinds of parts real trackers fail on, built here: model preparation,
the stored viewpoint model, first-frame acceptance at the true pose, loss when the part is
gone and the search when it is back. A figurine whose thin features the sensor loses; a shiny
part whose specular spots return nothing or a wrong, far depth."""

import numpy as np
import pytest
from rgbd_scenes import depth_of, figurine, part_mask, without_thin_features

from sim2real.core.pose import invert_pose, look_at, make_pose
from sim2real.models.part import load_part
from sim2real.models.prepare import PrepareConfig, prepare_model
from sim2real.sensors.presets import get_preset
from sim2real.tracking.config import TrackerConfig
from sim2real.tracking.tracker import Tracker

pytestmark = pytest.mark.slow
D435 = get_preset("realsense-d435")
CAM = D435.camera


def shiny(depth: np.ndarray, mask: np.ndarray, seed: int) -> np.ndarray:
    """Specular spots on the part (about a fifth of its pixels, in blobs): three in four of them
    return nothing (the highlight saturates the sensor), one in four a far, wrong depth (the
    reflection of the room)."""
    from scipy import ndimage

    rng = np.random.default_rng(seed)
    spots = ndimage.binary_dilation(mask & (rng.random(mask.shape) < 0.01), iterations=3) & mask
    out = depth.copy()
    far = spots & (rng.random(mask.shape) < 0.25)
    out[spots & ~far] = 0.0
    out[far] = depth[far] + rng.uniform(0.05, 0.4, far.sum())
    return out


def test_prepared_figurine_and_shiny_figurine_are_found_lost_and_found_again(tmp_path):
    mesh_file = tmp_path / "figurine.stl"
    import trimesh

    fig = figurine()
    trimesh.Trimesh(fig.vertices, fig.faces).export(mesh_file)
    prepared = prepare_model(mesh_file, PrepareConfig(unit="m", views=400))
    folder = prepared.write(tmp_path / "figurine_model", report=False)
    part = load_part(folder)
    assert part.stored_views is not None and part.stored_views.edge_distance_m is not None
    T_a = invert_pose(look_at([0.1, -0.4, 0.3], [0.0, 0.0, 0.04]))
    T_b = make_pose(np.eye(3), [0.06, -0.02, 0.0]) @ T_a  # where it is put back
    for finish in ("matte", "shiny"):
        tracker = Tracker(part, CAM, TrackerConfig())
        tracker.initialize(T_a)

        def frame(T, seed, finish=finish):
            depth = without_thin_features(
                part.mesh, T, CAM, depth_of(part.mesh, T, CAM, D435.profile, seed)
            )
            return shiny(depth, part_mask(part.mesh, T, CAM), seed) if finish == "shiny" else depth

        first = tracker.update(frame(T_a, 0))
        assert first.status == "tracking", (finish, first.details)
        assert tracker.update(frame(T_a, 1)).status == "tracking"
        away = make_pose(np.eye(3), [0.0, 0.0, 50.0]) @ T_a  # taken out of view: the table stays
        assert [tracker.update(frame(away, s)).status for s in (2, 3)] == ["lost", "lost"]
        statuses = [tracker.update(frame(T_b, s)).status for s in range(4, 10)]
        assert "recovered" in statuses, (finish, statuses)
        found = statuses.index("recovered")
        assert all(s in ("recovered", "tracking") for s in statuses[found:]), statuses
        assert np.linalg.norm(tracker.T[:3, 3] - T_b[:3, 3]) < 0.005, finish
