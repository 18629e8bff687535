"""The one poses.jsonl schema: read back what was written, and every malformed line named."""

import json

import numpy as np
import pytest

from sim2real.core.errors import InputError
from sim2real.core.pose_records import (
    PoseRecord,
    last_pose_record,
    read_pose_records,
    write_pose_records,
)


def test_read_pose_records_and_its_errors(tmp_path):
    good = {
        "frame": 0,
        "status": "tracking",
        "score": 0.8,
        "T_cam_part": np.eye(4).tolist(),
        "ms": 3,
    }
    path = tmp_path / "poses.jsonl"
    path.write_text(
        json.dumps(good)
        + "\n\n"
        + json.dumps({"frame": 1, "status": "lost", "T_cam_part": None})
        + "\n"
    )
    recs = read_pose_records(path)
    assert len(recs) == 2 and recs[0].T_cam_part.shape == (4, 4) and recs[1].T_cam_part is None
    second = {**good, "frame": 1}
    cases = [
        ("{not json", "not valid JSON"),
        (json.dumps({**second, "status": "fine"}), "status"),
        (json.dumps({**second, "frame": -1}), "frame"),
        (json.dumps({**second, "T_cam_part": (2 * np.eye(4)).tolist()}), "T_cam_part"),
        (json.dumps({**second, "T_cam_part": None}), "T_cam_part"),
        (json.dumps({**second, "score": "high"}), "score"),
        (json.dumps(good), "appears twice"),
    ]
    for line, needle in cases:
        path.write_text(json.dumps(good) + "\n" + line + "\n")
        with pytest.raises(InputError, match=needle) as err:
            read_pose_records(path)
        assert err.value.field.startswith("line 2") and str(path) in str(err.value)
    path.write_text("\n")
    with pytest.raises(InputError, match="no pose records"):
        read_pose_records(path)


def test_written_records_read_back_equal(tmp_path):
    T = np.array([[0, -1, 0, 0.1], [1, 0, 0, -0.2], [0, 0, 1, 0.7], [0, 0, 0, 1.0]])
    records = [
        PoseRecord(frame=0, status="tracking", score=0.91, T_cam_part=T, ms=4.2, noise_mm=4.97),
        PoseRecord(frame=3, status="lost", score=None, T_cam_part=None, ms=None),
        PoseRecord(frame=4, status="lost", score=1.0, T_cam_part=T, refused=("pose_spread",)),
    ]
    path = tmp_path / "poses.jsonl"
    write_pose_records(path, records)
    lines = path.read_text().splitlines()
    assert '"refused"' not in lines[0] and '"refused": ["pose_spread"]' in lines[2]
    assert '"noise_mm": 4.97' in lines[0] and '"noise_mm"' not in lines[1]
    back = read_pose_records(path)
    assert [r.model_dump(exclude={"T_cam_part"}) for r in back] == [
        r.model_dump(exclude={"T_cam_part"}) for r in records
    ]
    assert np.array_equal(back[0].T_cam_part, T) and back[1].T_cam_part is None
    last, line = last_pose_record(path)
    assert line == 3 and last.frame == 4 and not last.found


def test_nan_score_reads_as_no_value_and_a_score_above_one_is_refused(tmp_path):
    path = tmp_path / "poses.jsonl"
    line = {"frame": 0, "status": "lost", "score": float("nan"), "T_cam_part": None}
    path.write_text(json.dumps(line) + "\n")  # json writes NaN for a float nan
    assert read_pose_records(path)[0].score is None
    path.write_text(json.dumps({**line, "score": 1.5}) + "\n")
    with pytest.raises(InputError, match="line 1, score"):
        read_pose_records(path)


@pytest.mark.parametrize("last_frame", [7, 5])
def test_a_last_frame_not_after_the_one_before_is_refused(tmp_path, last_frame):
    """Two trackers appending to one file (or a new track appended to an old one): the last
    line may be the other track's, so adapting from it is refused (found by probing adapt)."""
    rec = {"status": "tracking", "score": 0.9, "T_cam_part": np.eye(4).tolist()}
    path = tmp_path / "poses.jsonl"
    lines = [json.dumps({**rec, "frame": f}) for f in (6, 7, last_frame)]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=f"frame {last_frame} follows frame 7") as err:
        last_pose_record(path)
    assert err.value.field == "line 3, frame"
    path.write_text("\n".join(lines[:2]) + "\n")
    assert last_pose_record(path)[0].frame == 7
