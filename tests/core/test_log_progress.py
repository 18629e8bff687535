"""Progress in a log: plain lines on the stream, at most one per interval, the last state at
the end, the columns' text and no bar characters."""

import io

from rich.progress import BarColumn, TextColumn

from sim2real.core.log_progress import LoggedProgress


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def _progress(stream, clock, **kw):
    return LoggedProgress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed:,}/{task.total:,} steps"),
        TextColumn("{task.fields[info]}"),
        every_s=30.0,
        stream=stream,
        get_time=clock,
        **kw,
    )


def test_one_line_per_interval_and_the_last_state_at_the_end():
    stream, clock = io.StringIO(), Clock()
    with _progress(stream, clock) as progress:
        task = progress.add_task("train", total=10_000, info="")
        for step in range(1, 9):  # every 10 s: lines at 30 s and 60 s by the interval
            clock.t = 10.0 * step
            progress.update(task, completed=1000 * step, info=f"return {step}")
    lines = stream.getvalue().splitlines()
    assert lines == [
        "train 3,000/10,000 steps return 3",
        "train 6,000/10,000 steps return 6",
        "train 8,000/10,000 steps return 8",  # the end: what moved since the last line
    ]


def test_a_finished_task_logs_at_once_and_not_again_at_the_end():
    stream, clock = io.StringIO(), Clock()
    with _progress(stream, clock, label="seed 3") as progress:
        task = progress.add_task("train", total=100, info="")
        clock.t = 1.0
        progress.update(task, completed=100, info="done")
        clock.t = 100.0
        progress.update(task, completed=100, info="done")  # finished, updated again: no line
    assert stream.getvalue().splitlines() == ["seed 3: train 100/100 steps done"]


def test_nothing_when_nothing_moved():
    stream, clock = io.StringIO(), Clock()
    with _progress(stream, clock) as progress:
        progress.add_task("train", total=100, info="")
        clock.t = 100.0
    assert stream.getvalue() == ""


def test_an_error_is_the_last_line():
    stream, clock = io.StringIO(), Clock()
    try:
        with _progress(stream, clock) as progress:
            task = progress.add_task("train", total=100, info="")
            clock.t = 1.0
            progress.update(task, completed=50, info="")
            raise ValueError("bad frame")
    except ValueError:
        pass
    assert stream.getvalue() == ""  # moved, but not logged after the error


def test_a_bar_where_rich_can_draw_one_a_log_elsewhere(monkeypatch):
    from rich import get_console
    from rich.progress import Progress

    from sim2real.core.log_progress import progress_for

    console = get_console()
    for terminal, jupyter, logged in ((True, False, False), (False, True, False),
                                      (False, False, True)):  # fmt: skip
        monkeypatch.setattr(type(console), "is_terminal", property(lambda self, t=terminal: t))
        monkeypatch.setattr(console, "is_jupyter", jupyter)
        bar = progress_for(TextColumn("{task.description}"))
        assert isinstance(bar, LoggedProgress) == logged and isinstance(bar, Progress)
    monkeypatch.setattr(type(console), "is_terminal", property(lambda self: True))
    labelled = progress_for(TextColumn("{task.description}"), label="seed 1")
    assert isinstance(labelled, LoggedProgress)  # side by side: lines even on a terminal
