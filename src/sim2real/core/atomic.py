"""Atomic writes: write to a temporary file beside the target, then rename.

A crash or a bad input half-way never leaves a half-written output behind.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from sim2real.core.errors import InputError


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


@contextlib.contextmanager
def atomic_path(target: str | Path) -> Iterator[Path]:
    """Yield a temporary path in the target's folder (same suffix); rename it onto ``target``
    when the block succeeds, delete it when the block raises. The file gets the mode any
    other file would (0o666 less the umask), not mkstemp's private 0o600."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=target.suffix, dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        tmp_path.chmod(0o666 & ~_umask())
        os.replace(tmp_path, target)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def write_text_atomic(target: str | Path, text: str) -> None:
    with atomic_path(target) as tmp:
        tmp.write_text(text)


def write_bytes_atomic(target: str | Path, data: bytes) -> None:
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)


def check_writable(target: str | Path, field: str | None = None, *, folder: bool = False) -> None:
    """Fail early, before any work, when ``target`` cannot be written: InputError naming it and
    its option ``field`` (an existing folder where a file goes or the reverse, a path under a
    file, a folder without write permission). Creates nothing."""
    target = Path(target)
    if target.exists():
        if folder and not target.is_dir():
            raise InputError(target, field, "exists and is not a folder")
        if not folder and target.is_dir():
            raise InputError(target, field, "is an existing folder, not a file")
    parent = target if folder and target.is_dir() else target.parent
    while not parent.exists():  # the nearest existing ancestor must be a writable folder
        parent = parent.parent
    if not parent.is_dir():
        raise InputError(target, field, f"cannot be created: {parent} is a file")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(target, field, f"cannot be written: no write permission in {parent}")
    try:  # what permissions do not tell: root under /proc, a read-only mount, a full disk
        fd, probe = tempfile.mkstemp(prefix=".sim2real-write-check.", dir=parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise InputError(target, field, f"cannot be written in {parent}: {why}") from None
    if target.exists() and not folder and not os.access(target, os.W_OK):
        raise InputError(target, field, "cannot be written: the file is read-only")


@contextlib.contextmanager
def atomic_folder(target: str | Path) -> Iterator[Path]:
    """Yield a temporary folder beside ``target``; when the block succeeds, rename it onto
    ``target`` (an existing folder there is replaced), when it raises (or is interrupted),
    delete it: a command that writes many files leaves all of them or none."""
    import shutil

    target = Path(target)
    check_writable(target, "--out", folder=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    umask = _umask()
    try:
        yield tmp
        for p in [tmp, *tmp.rglob("*")]:  # mkdtemp makes it private: ordinary modes
            p.chmod((0o777 if p.is_dir() else 0o666) & ~umask)
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
            os.replace(target, old / target.name)
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
