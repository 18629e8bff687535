"""The commands' transient progress bars (rich), drawn live on a terminal only: piped or
redirected, a bar has no line to redraw (rich would leave an empty one on stdout, before the
command's own output or alone above its error), so the same columns go to stderr as a plain
line every half-minute (``core.log_progress``)."""

from __future__ import annotations

from typing import Any


def transient_progress(*columns: Any):
    """A ``rich.progress.Progress`` of these columns that clears itself when done; where stdout
    is not a terminal, one that logs its rows on stderr instead."""
    from sim2real.core.log_progress import progress_for

    return progress_for(*columns, transient=True)
