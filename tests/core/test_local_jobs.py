"""Local worker processes start fresh (a fork server's children, not copies of the caller): a
fork of a process whose other threads hold locks (torch's, a Ray driver's, pytest-xdist's
channel reader) can leave the copy waiting on one forever."""

from __future__ import annotations

from functools import partial

from sim2real.core.local_jobs import local_runner

_CALLER = {"changed": False}  # set by the test in this process only


def _sees_callers_change(k: int) -> tuple[int, bool]:
    return k, _CALLER["changed"]


def test_workers_start_fresh_not_as_copies_of_the_caller(monkeypatch):
    monkeypatch.setitem(_CALLER, "changed", True)
    jobs = [partial(_sees_callers_change, k) for k in range(3)]
    assert local_runner(1)(jobs) == [(0, True), (1, True), (2, True)]  # here: the change seen
    assert local_runner(2)(jobs) == [(0, False), (1, False), (2, False)]  # a fresh import each


def _a_quarter_then_wait(seconds: float) -> int:
    import time

    from sim2real.core.local_jobs import report_share

    report_share(0.25)
    time.sleep(seconds)
    return 1


def test_progress_moves_with_the_shares_running_jobs_report():
    seen: list[float] = []
    jobs = [partial(_a_quarter_then_wait, 3.0), partial(_a_quarter_then_wait, 3.0)]
    assert local_runner(2, lambda done, total: seen.append(done))(jobs) == [1, 1]
    assert any(0.0 < d < 2.0 and d % 1.0 for d in seen), seen  # shares seen before the ends
    assert seen[-1] == 2.0
