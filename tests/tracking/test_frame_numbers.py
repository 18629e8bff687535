"""Frame numbers from file names and their ranges in messages (``tracking.frame_numbers``)."""

from __future__ import annotations

from pathlib import Path

from sim2real.tracking.frame_numbers import frame_number, numbered, ranges


def test_ranges_group_consecutive_numbers():
    assert ranges([3, 5, 6, 7, 12]) == "3, 5-7, 12"
    assert ranges([4]) == "4"
    assert ranges([1, 2]) == "1-2"
    # at most ``limit`` groups, then how many numbers there are in all
    assert ranges([1, 2, 3, 5, 7], limit=2) == "1-3, 5, ... (5 in all)"
    assert ranges([1, 3, 5], limit=3) == "1, 3, 5"


def test_the_last_number_in_a_name_is_the_frame():
    assert frame_number(Path("cam2/depth_000123.png")) == 123
    assert frame_number(Path("run3_frame_0042.tiff")) == 42
    assert frame_number(Path("depth.png")) is None


def test_numbered_sorts_by_the_number_in_each_name():
    paths = [Path("f_10.png"), Path("f_9.png"), Path("f_100.png")]  # not in name order
    ids, ordered, from_names = numbered(paths)
    assert ids == [9, 10, 100] and from_names
    assert ordered == [Path("f_9.png"), Path("f_10.png"), Path("f_100.png")]
    # a name without a number, or two with the same one: the given order, numbered 0, 1, ...
    for paths in ([Path("a.png"), Path("f_2.png")], [Path("a_1.png"), Path("b_1.png")]):
        ids, ordered, from_names = numbered(paths)
        assert ids == [0, 1] and ordered == paths and not from_names
