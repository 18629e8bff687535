"""Running the ``sim2real`` command as a user does, and checking its one-line errors (shared by
the CLI tests; ``tests/`` is on pytest's ``pythonpath``)."""

from __future__ import annotations

import subprocess
import sys


def run_cli(*args, cwd=None, timeout: float = 600, figure_log=None) -> subprocess.CompletedProcess:
    """``sim2real ARGS...`` in a fresh interpreter; stdout and stderr captured as text.
    ``figure_log``: the file its figures log what they draw to (``figures_drawn``)."""
    import os

    env = None
    if figure_log is not None:
        from sim2real.core.report import FIGURE_LOG_ENV

        env = {**os.environ, FIGURE_LOG_ENV: str(figure_log)}
    return subprocess.run(
        [sys.executable, "-m", "sim2real.cli.main", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        env=env,
    )


def assert_one_line_error(proc, *needles, warnings_ok: bool = False) -> str:
    """Exit code 2 and exactly one ``error: ...`` line on stderr (no traceback) that contains
    every needle; ``warnings_ok`` lets ``warning: ...`` lines stand beside it. Returns it."""
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    if warnings_ok:
        lines = [line for line in lines if not line.startswith("warning:")]
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def figures_drawn(log) -> dict[str, dict]:
    """What each saved figure drew, by file name (the last save of a name wins), from the log
    that ``SIM2REAL_FIGURE_LOG`` pointed the commands at (``core.report.describe_figure``)."""
    import json
    from pathlib import Path

    path = Path(log)
    if not path.is_file():
        return {}
    out = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        out[record.pop("file")] = record
    return out
