"""Log reading and validation with small hand-made CSV and JSON files."""

import json
import warnings

import numpy as np
import pytest

from sim2real.core.errors import InputError
from sim2real.sim.logs import despike, read_log, refuse_repeated_logs, resample_log
from sim2real.sim.mapping import LogMapping, load_mapping, mapping_from_dict

MAPPING = LogMapping(
    time="t",
    joints={"j": {"position": "q", "velocity": "qd"}},
    actuators={"j": {"column": "tau"}},
)


def write_csv(path, rows, header="t,q,qd,tau"):
    path.write_text(header + "\n" + "\n".join(",".join(str(x) for x in r) for r in rows) + "\n")
    return path


def ramp_rows(n=50, dt=0.01):
    # q = 0.5 t, qd = 0.5, tau = t
    return [[i * dt, 0.5 * i * dt, 0.5, i * dt] for i in range(n)]


def test_clean_csv_reads_in_mapping_order(tmp_path):
    # columns in another order than the mapping's: never assume column order
    rows = [[r[3], r[0], r[2], r[1]] for r in ramp_rows()]
    log = read_log(write_csv(tmp_path / "a.csv", rows, "tau,t,qd,q"), MAPPING)
    assert log.qpos.shape == (50, 1) and log.ctrl.shape == (50, 1)
    assert np.allclose(log.qpos[:, 0], 0.5 * log.time_s)
    assert np.allclose(log.ctrl[:, 0], log.time_s)


def test_nan_rows_are_an_error_or_dropped_and_reported(tmp_path):
    rows = ramp_rows()
    rows[10][1] = "nan"
    rows[20][3] = ""
    path = write_csv(tmp_path / "a.csv", rows)
    with pytest.raises(InputError, match="2 rows with NaN") as err:
        read_log(path, MAPPING)  # by default: the file and its first bad row named
    assert err.value.field == "row 11" and "the first in q " in str(err.value)
    log = read_log(path, MAPPING.model_copy(update={"bad_rows": "drop"}))
    assert log.time_s.size == 48
    assert any("dropped 2 rows" in n and "row 11" in n for n in log.notes)


def test_duplicated_and_decreasing_time_sorted_or_rejected(tmp_path):
    rows = ramp_rows()
    rows[5], rows[6] = rows[6], rows[5]  # decreasing
    rows[30] = list(rows[29])  # duplicated
    path = write_csv(tmp_path / "a.csv", rows)
    with pytest.raises(InputError, match="not strictly increasing"):
        read_log(path, MAPPING)  # by default: an error
    log = read_log(path, MAPPING.model_copy(update={"time_order": "sort"}))
    assert log.time_s.size == 49 and (np.diff(log.time_s) > 0).all()
    assert any("1 duplicated and 1 decreasing" in n for n in log.notes)


def test_spreadsheet_exports_read_like_the_plain_csv(tmp_path):
    plain = read_log(write_csv(tmp_path / "a.csv", ramp_rows()), MAPPING)
    text = (tmp_path / "a.csv").read_text()
    variants = {
        "bom.csv": ("\ufeff" + text, "utf-8"),  # Excel's "CSV UTF-8"
        "semicolon.csv": (text.replace(",", ";"), "utf-8"),
        "tab.csv": (text.replace(",", "\t"), "utf-8"),
    }
    for name, (body, encoding) in variants.items():
        (tmp_path / name).write_text(body, encoding=encoding)
        log = read_log(tmp_path / name, MAPPING)
        assert np.array_equal(log.qpos, plain.qpos) and np.array_equal(log.ctrl, plain.ctrl), name


def test_a_mapped_column_given_twice_is_refused(tmp_path):
    rows = [[*r, 0.0] for r in ramp_rows()]  # a second, all-zero q: which one is meant?
    path = write_csv(tmp_path / "a.csv", rows, "t,q,qd,tau,q")
    with pytest.raises(InputError, match="names this column twice") as err:
        read_log(path, MAPPING)
    assert err.value.field == "q"
    read_log(write_csv(tmp_path / "b.csv", rows, "t,q,qd,tau,note"), MAPPING)  # unmapped: fine
    rows = [[*r, 0.0, 1.0] for r in ramp_rows()]
    read_log(write_csv(tmp_path / "c.csv", rows, "t,q,qd,tau,note,note"), MAPPING)


def test_time_in_milliseconds_is_refused_naming_the_mapping_field(tmp_path):
    rows = [[r[0] * 1000.0, *r[1:]] for r in ramp_rows()]
    with pytest.raises(InputError, match="time in milliseconds") as err:
        read_log(write_csv(tmp_path / "a.csv", rows), MAPPING)
    assert err.value.field == "t"
    log = read_log(tmp_path / "a.csv", MAPPING.model_copy(update={"time_scale_s": 0.001}))
    assert np.isclose(log.time_s[-1], 0.49)


def ros2_rows(n=500, dt=0.002, start_s=1_700_000_000):
    # a ROS 2 export: stamp split in whole seconds and nanoseconds; q = 0.5 t, qd = 0.5
    rows = []
    for i in range(n):
        sec, nanosec = divmod(round(i * dt * 1e9), 10**9)
        rows.append([start_s + sec, nanosec, 0.5 * i * dt, 0.5, 0.0])
    return rows


def test_ros2_time_as_seconds_and_nanoseconds_columns(tmp_path):
    """Mapping the seconds column alone read '500 duplicated timestamps' (a probe)."""
    path = write_csv(tmp_path / "ros2.csv", ros2_rows(), "header.stamp.sec,header.stamp.nanosec,"
                     "position,velocity,effort")  # fmt: skip
    joints = {"j": {"position": "position", "velocity": "velocity"}}
    pair = LogMapping(time=["header.stamp.sec", "header.stamp.nanosec"], joints=joints)
    log = read_log(path, pair)
    # 0.998 s after a 1.7e9 s epoch: float64 of the absolute time would be off by ~1e-7 s
    assert np.allclose(log.time_s, 0.002 * np.arange(500), rtol=0, atol=1e-12)
    found = read_log(path, LogMapping(joints=joints))  # no time mapped: the pair is found
    assert np.array_equal(found.time_s, log.time_s)
    assert any("header.stamp.sec + header.stamp.nanosec x 1e-9" in n for n in found.notes)
    with pytest.raises(InputError, match=r"give time: \[header.stamp.sec, header.stamp.nanosec"):
        read_log(path, LogMapping(time="header.stamp.sec", joints=joints))
    with pytest.raises(InputError, match="one column, or two"):
        mapping_from_dict({"time": ["sec"], "joints": joints}, "map.yaml")


def test_several_stamp_pairs_are_refused_naming_them(tmp_path):
    rows = [[*r[:2], *r] for r in ros2_rows()]
    path = write_csv(tmp_path / "ros2.csv", rows, "goal.sec,goal.nanosec,sec,nanosec,q,qd,tau")
    with pytest.raises(InputError, match=r"goal\.sec, goal\.nanosec; sec, nanosec"):
        read_log(path, LogMapping(joints={"j": {"position": "q"}}))


def test_missing_column_names_it_with_close_matches(tmp_path):
    path = write_csv(tmp_path / "a.csv", ramp_rows(), "t,q,qd,torque")
    with pytest.raises(InputError) as err:
        read_log(path, MAPPING)
    text = str(err.value)
    assert "tau" in text and "actuators.j.column" in text and "torque" in text


def test_gap_is_reported_and_masked_after_resampling(tmp_path):
    rows = ramp_rows(60)
    rows = rows[:30] + [[r[0] + 0.5, *r[1:]] for r in rows[30:]]  # 0.5 s hole after 0.29 s
    log = read_log(write_csv(tmp_path / "a.csv", rows), MAPPING)
    assert any("gap of 0.510 s at t = 0.290 s" in n for n in log.notes)
    res = resample_log(log, 0.002)
    inside = (res.time_s > 0.29) & (res.time_s < 0.8)
    assert not res.valid[inside].any() and res.valid[~inside].all()


def test_resampling_interpolates_linearly(tmp_path):
    rows = ramp_rows(11, 0.1)  # 0..1 s at 10 Hz, with 3 ms jitter on one sample
    rows[4][0] = 0.403
    log = resample_log(read_log(write_csv(tmp_path / "a.csv", rows), MAPPING), 0.05)
    assert log.time_s.size == 21 and log.dt_s == 0.05
    # between samples 3 (t=0.3, tau=0.3) and 4 (t=0.403, tau=0.4): tau(0.35) by hand
    assert log.ctrl[7, 0] == pytest.approx(0.3 + 0.1 * 0.05 / 0.103)
    zoh = resample_log(read_log(write_csv(tmp_path / "a.csv", rows), MAPPING), 0.05, "zoh")
    assert zoh.ctrl[7, 0] == pytest.approx(0.3)


def test_degrees_are_warned_about(tmp_path):
    t = np.arange(200) * 0.01
    q_deg = np.degrees(np.sin(t))
    rows = [[a, b, np.cos(a), 0.0] for a, b in zip(t, q_deg, strict=True)]  # qd in rad/s
    with pytest.warns(UserWarning, match="looks like degrees"):
        read_log(write_csv(tmp_path / "a.csv", rows), MAPPING)
    deg = MAPPING.model_copy(update={"position_unit": "deg"})
    rows = [[a, b, np.degrees(np.cos(a)), 0.0] for a, b in zip(t, q_deg, strict=True)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        log = read_log(write_csv(tmp_path / "b.csv", rows), deg)
    assert np.allclose(log.qpos[:, 0], np.sin(t))
    # both in degrees, under 126 deg (7,200 rad... not reached): the speed gives them away
    swing = 2.0 * np.sin(2 * np.pi * t)
    rows = [[a, b, c, 0.0] for a, b, c in
            zip(t, np.degrees(swing), np.degrees(np.gradient(swing, t)), strict=True)]  # fmt: skip
    with pytest.warns(UserWarning, match="both in degrees"):
        read_log(write_csv(tmp_path / "c.csv", rows), MAPPING)


def test_one_recording_given_twice_is_refused(tmp_path):
    t = np.arange(300) * 0.01
    rows = [[a, np.sin(a), np.cos(a), 0.1] for a in t]
    a = read_log(write_csv(tmp_path / "a.csv", rows), MAPPING)
    shifted = read_log(
        write_csv(tmp_path / "b.csv", [[r[0] + 12.0, *r[1:]] for r in rows]), MAPPING
    )
    other = read_log(
        write_csv(tmp_path / "c.csv", [[r[0], 2 * r[1], *r[2:]] for r in rows]), MAPPING
    )
    refuse_repeated_logs([a, other])
    with pytest.raises(InputError, match=r"same recording as .*a\.csv: held out and fitted"):
        refuse_repeated_logs([a, other, shifted], held_out=1)
    with pytest.raises(InputError, match="given twice"):
        refuse_repeated_logs([a, shifted, other], held_out=1)
    # a copy with its first samples dropped (a probe relabelled one so as a hold-out)
    trimmed = read_log(write_csv(tmp_path / "d.csv", rows[3:]), MAPPING)
    with pytest.raises(InputError, match="held out and fitted"):
        refuse_repeated_logs([a, other, trimmed], held_out=1)


def test_json_records_valid_if_and_despike(tmp_path):
    entries = [
        {"timestamp": i * 0.005, "position": 0.01 * i, "speed": 2.0, "goal_position": 0.3,
         "torque_enable": i < 30}
        for i in range(60)
    ]  # fmt: skip
    entries[10]["goal_position"] = 9.0  # a spike
    path = tmp_path / "log.json"
    path.write_text(json.dumps({"kp": 200, "entries": entries}))
    mp = tmp_path / "map.yaml"
    mp.write_text(
        "time: timestamp\nrecords: entries\nvalid_if: torque_enable\n"
        "joints: {horn: {position: position, velocity: speed}}\n"
        "actuators: {horn: {column: goal_position, despike: true}}\n"
    )
    log = read_log(path, load_mapping(mp))
    assert log.meta["kp"] == 200
    assert log.valid.tolist() == [True] * 30 + [False] * 30
    assert np.allclose(log.ctrl[:, 0], 0.3)
    assert any("1 spikes" in n for n in log.notes)


def test_despike_keeps_a_smooth_signal():
    x = np.sin(np.linspace(0, 6, 300))
    y, n = despike(x)
    assert n == 0 and np.array_equal(x, y)


def test_bad_mapping_and_missing_file(tmp_path):
    mp = tmp_path / "map.yaml"
    mp.write_text("time: t\njoints: {j: {positon: q}}\n")
    with pytest.raises(InputError, match="positon"):
        load_mapping(mp)
    with pytest.raises(InputError, match="log not found"):
        read_log(tmp_path / "nope.csv", MAPPING)


def test_comment_lines_above_the_header_are_skipped(tmp_path):
    """Another lab's export: '# units: ...' above the header was read as the header (a probe)."""
    rows = ramp_rows()
    plain = read_log(write_csv(tmp_path / "plain.csv", rows), MAPPING)
    noted = write_csv(
        tmp_path / "noted.csv", rows, "# units: q rad, qd rad/s, tau N m\n#\nt,q,qd,tau"
    )
    assert np.array_equal(read_log(noted, MAPPING).qpos, plain.qpos)
    semicolons = tmp_path / "semi.csv"
    semicolons.write_text("# exported; by a spreadsheet\n" + noted.read_text().split("\n", 2)[2]
                          .replace(",", ";"))  # fmt: skip
    assert np.array_equal(read_log(semicolons, MAPPING).qpos, plain.qpos)
    # a '#' header right above the numbers is the header (its names keep the '#')
    hashed = write_csv(tmp_path / "hashed.csv", rows, "#t,q,qd,tau")
    with pytest.raises(InputError, match="close matches: #t"):
        read_log(hashed, MAPPING)
