"""The one error type for bad input: it names the file and the field."""

from __future__ import annotations

from pathlib import Path


class InputError(ValueError):
    """Bad user input. The CLI prints ``str(err)`` as one line and exits with code 2.

    ``source`` is the file (or the command-line option) the bad value came from, ``field``
    the name of the value inside it; both end up in the message.
    """

    def __init__(self, source: str | Path | None, field: str | None, message: str):
        self.source = str(source) if source is not None else None
        self.field = field
        self.message = message
        super().__init__(self._format())

    def __reduce__(self):  # rebuilt from its parts in another process (a pool's worker)
        return type(self), (self.source, self.field, self.message)

    def _format(self) -> str:
        where = ": ".join(p for p in (self.source, self.field) if p)
        text = " ".join(self.message.split())  # one line, whatever the cause said
        return f"{where}: {text}" if where else text
