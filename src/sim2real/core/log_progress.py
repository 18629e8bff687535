"""Progress of a long command as plain lines in a log. A rich bar redraws one terminal line; piped,
redirected, in a cluster job's log or from a worker process beside others there is no such line,
and a bar drawn there shows nothing until the command ends (a 10-minute training, a sweep of five
seeds for half an hour). :class:`LoggedProgress` takes the same columns and calls as the bar and
writes each task's row as one line on stderr (stdout stays the command's own output): every
``every_s`` seconds while it moves, and once more when it ends well.

    seed 3: train 2,097,152/10,000,000 steps 21,034 steps/s 0:06:15 return 41.2 success 37 %
"""

from __future__ import annotations

import io
import sys
from typing import Any, TextIO

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, SpinnerColumn, TaskID

LOG_EVERY_S = 30.0
"""Seconds between a task's lines: 20 lines for a 10-minute training, not one per iteration."""

_DRAWN_ONLY = (BarColumn, SpinnerColumn)  # a bar or a spinner says nothing in one line of text


class LoggedProgress(Progress):
    """A ``rich.progress.Progress`` that draws nothing live and logs its tasks' rows instead.
    ``label`` prefixes each line (the seed of one of several trainings side by side)."""

    def __init__(
        self,
        *columns: str | ProgressColumn,
        every_s: float = LOG_EVERY_S,
        label: str | None = None,
        stream: TextIO | None = None,
        get_time: Any = None,
    ):
        text = [c for c in columns if not isinstance(c, _DRAWN_ONLY)]
        super().__init__(*text, disable=True, get_time=get_time)
        self.every_s = every_s
        self.label = label
        self.stream = stream
        self._logged: dict[TaskID, tuple[float, float]] = {}  # task -> (time, completed) logged

    def add_task(self, description: str, *args: Any, **kwargs: Any) -> TaskID:
        task_id = super().add_task(description, *args, **kwargs)
        self._logged[task_id] = (self.get_time(), self._tasks[task_id].completed)
        return task_id

    def update(self, task_id: TaskID, **kwargs: Any) -> None:
        super().update(task_id, **kwargs)
        task = self._tasks[task_id]
        logged_at, logged_completed = self._logged[task_id]
        if task.completed == logged_completed:
            return  # nothing moved since its last line (a finished task updated again)
        if task.finished or self.get_time() - logged_at >= self.every_s:
            self._log(task_id)

    def advance(self, task_id: TaskID, advance: float = 1) -> None:
        self.update(task_id, advance=advance)

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        """On a clean exit, the last state of every task that moved since its last line (on an
        error, the error's own line comes last)."""
        if exc_type is None:
            for task_id, task in list(self._tasks.items()):
                if task.completed != self._logged[task_id][1]:
                    self._log(task_id)
        super().__exit__(exc_type, *exc)

    def _log(self, task_id: TaskID) -> None:
        task = self._tasks[task_id]
        self._logged[task_id] = (self.get_time(), task.completed)
        buffer = io.StringIO()
        # wide and colourless: one line whatever the log's width, no escape codes in a file
        Console(file=buffer, width=1000, color_system=None, soft_wrap=True).print(
            self.make_tasks_table([task])
        )
        line = " ".join(buffer.getvalue().split())
        stream = self.stream or sys.stderr
        stream.write(f"{self.label}: {line}\n" if self.label else f"{line}\n")
        stream.flush()


def progress_for(
    *columns: str | ProgressColumn, transient: bool = False, label: str | None = None
) -> Progress:
    """A live bar of ``columns`` on a terminal or in a notebook (rich draws there too); on
    anything else (or with a ``label``: one of several side by side), a :class:`LoggedProgress`
    of the same columns."""
    from rich import get_console

    console = get_console()
    if (console.is_terminal or console.is_jupyter) and label is None:
        return Progress(*columns, console=console, transient=transient)
    return LoggedProgress(*columns, label=label)
