"""The PCL milk carton: a real scan made into a model, found with no initial pose in a real
organised scene (issue #5, section 6)."""

import numpy as np
import pytest


@pytest.mark.slow
def test_scanned_carton_is_found_in_the_real_scene_without_an_initial_pose(real_data, tmp_path):
    from sim2real.models.prepare import PrepareConfig, prepare_model
    from sim2real.tracking.run import part_residual, track_sequence
    from sim2real.tracking.sequence import load_sequence
    from sim2real.tracking.tracker import TrackerConfig

    pcl = real_data / "depth-pcl"
    prepared = prepare_model(pcl / "milk.pcd", PrepareConfig(views=200, view_grid=48))
    mesh = prepared.mesh
    sequence = load_sequence([pcl / "milk_cartoon_all_small_clorox.pcd"])
    assert (sequence.camera.width, sequence.camera.height) == (640, 480)
    run = track_sequence(mesh, sequence, None, TrackerConfig(views=400))
    record = run.records[0]
    assert record.status == "recovered", record.status
    T = record.T_cam_part
    # the scan was cut out of this very scene (its points are in the scene camera's frame):
    # its own frame, moved to its bounding-box centre by prepare, is where the carton stands
    T_scan = np.asarray(prepared.source.T_source_part)
    assert np.linalg.norm(T[:3, 3] - T_scan[:3, 3]) < 0.005
    cos = (np.trace(T[:3, :3].T @ T_scan[:3, :3]) - 1) / 2
    assert np.degrees(np.arccos(np.clip(cos, -1, 1))) < 3
    residual = part_residual(mesh, sequence.camera, sequence.read(0), T)
    assert residual.pixels > 0.8 * residual.part_pixels
    assert residual.median_abs_mm < 2.0 and residual.within_share > 0.9, residual
