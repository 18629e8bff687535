"""Running the ``sim2real`` command as a user does, and checking its one-line errors (shared by
the CLI tests; ``tests/`` is on pytest's ``pythonpath``)."""

from __future__ import annotations

import subprocess
import sys


def run_cli(*args, cwd=None, timeout: float = 600, figure_log=None) -> subprocess.CompletedProcess:
    """``sim2real ARGS...`` in a fresh interpreter; stdout and stderr captured as text.
    ``figure_log``: the file its figures log what they draw to (``figures_drawn``). Past
    ``timeout`` the command and every process it started (pool workers, a local Ray's) are
    killed and the test fails: a child left holding the pipes would make the wait endless."""
    import os
    import signal

    env = None
    if figure_log is not None:
        from sim2real.core.report import FIGURE_LOG_ENV

        env = {**os.environ, FIGURE_LOG_ENV: str(figure_log)}
    cmd = [sys.executable, "-m", "sim2real.cli.main", *map(str, args)]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          cwd=cwd, env=env, start_new_session=True) as proc:  # fmt: skip
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            try:
                stderr = proc.communicate(timeout=30)[1]
            except subprocess.TimeoutExpired:  # a process that left the group holds the pipes
                stderr = "(unread)"
            raise AssertionError(
                f"sim2real {' '.join(cmd[3:])}: still running after {timeout} s; stderr "
                f"ended: {stderr[-2000:]}"
            ) from None
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


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
