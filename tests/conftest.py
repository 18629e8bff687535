"""Shared fixtures: the real recordings under ``<data root>/real`` (see docs on
SIM2REAL_DATA), and Python's Ctrl-C handler pinned for a test."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim2real.core.data import data_root


@pytest.fixture(scope="session")
def real_data() -> Path:
    """Path of the ``real/`` folder; skips the test when the real data is not available."""
    root = data_root()
    if root is None or not (root / "real").is_dir():
        pytest.skip(
            "real data not found: set SIM2REAL_DATA to the folder that holds real/ "
            "(default: ../shared/data beside the repository)"
        )
    return root / "real"


@pytest.fixture
def figure_log(tmp_path, monkeypatch):
    """A file every figure saved in this test (by this process or a command it starts) logs
    what it draws to; read it with ``cli_helpers.figures_drawn``."""
    from sim2real.core.report import FIGURE_LOG_ENV

    path = tmp_path / "figures.jsonl"
    monkeypatch.setenv(FIGURE_LOG_ENV, str(path))
    return path


@pytest.fixture
def python_sigint():
    """Python's own Ctrl-C handler for the test (a library may have left SIG_DFL in this
    process, where a Ctrl-C kills it), the process's own restored after."""
    import signal

    saved = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    yield signal.default_int_handler
    signal.signal(signal.SIGINT, saved)
