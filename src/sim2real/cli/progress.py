"""The commands' transient progress bars (rich), drawn live on a terminal only: piped or
redirected, a bar has no line to redraw (rich would leave an empty one on stdout, before the
command's own output or alone above its error), so the same columns go to stderr as a plain
line every half-minute (``core.log_progress``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


def transient_progress(*columns: Any):
    """A ``rich.progress.Progress`` of these columns that clears itself when done; where stdout
    is not a terminal, one that logs its rows on stderr instead."""
    from sim2real.core.log_progress import progress_for

    return progress_for(*columns, transient=True)


@contextmanager
def frames_progress(quiet: bool) -> Iterator[Callable[[int, int, str], None] | None]:
    """``update(done, total, outcome)`` after each frame of a recording: the frames done and
    how many ended each way so far (``lost 23, tracking 8``); None when ``quiet``."""
    if quiet:
        yield None
        return
    from rich.progress import BarColumn, TextColumn, TimeRemainingColumn

    outcomes: Counter = Counter()
    with transient_progress(
        TextColumn("frames"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
        TimeRemainingColumn(), TextColumn("{task.fields[outcomes]}"),
    ) as bar:  # fmt: skip
        task = bar.add_task("frames", total=None, outcomes="")

        def update(done: int, total: int, outcome: str) -> None:
            outcomes[outcome] += 1
            counts = ", ".join(f"{name} {n}" for name, n in sorted(outcomes.items()))
            bar.update(task, completed=done, total=total, outcomes=counts)

        yield update


@contextmanager
def share_progress(quiet: bool, name: str) -> Iterator[Callable[[float, float, str], None] | None]:
    """``update(done, total, where="")`` of a long job: its share done, the time left and
    where it is (``seed-0: bench-span``), after ``name``; None when ``quiet``."""
    if quiet:
        yield None
        return
    from rich.progress import BarColumn, TaskProgressColumn, TextColumn, TimeRemainingColumn

    with transient_progress(
        TextColumn(name), BarColumn(), TaskProgressColumn(), TimeRemainingColumn(),
        TextColumn("{task.fields[where]}"),
    ) as bar:  # fmt: skip
        task = bar.add_task(name, total=None, where="")

        def update(done: float, total: float, where: str = "") -> None:
            bar.update(task, completed=done, total=total, where=where)

        yield update
