"""The commands' transient progress bars (rich), drawn on a terminal only: piped or redirected,
rich has no line to clear and leaves an empty one on stdout, before the command's own output
or alone above its error."""

from __future__ import annotations

from typing import Any


def transient_progress(*columns: Any):
    """A ``rich.progress.Progress`` of these columns that clears itself when done, disabled
    (draws nothing) when stdout is not a terminal."""
    from rich import get_console
    from rich.progress import Progress

    console = get_console()
    return Progress(*columns, console=console, transient=True, disable=not console.is_terminal)
