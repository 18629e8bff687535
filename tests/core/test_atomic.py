"""Atomic writes (``core.atomic``): all or nothing, nothing temporary left behind, and the
early check that an output can be written at all."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sim2real.core.atomic import (
    atomic_folder,
    atomic_path,
    check_writable,
    write_bytes_atomic,
    write_text_atomic,
)
from sim2real.core.errors import InputError

needs_permissions = pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0, reason="root ignores write permissions"
)


def test_a_write_replaces_the_target_and_leaves_nothing_else(tmp_path):
    target = tmp_path / "out" / "result.yaml"  # the folder is created
    write_text_atomic(target, "a: 1\n")
    write_text_atomic(target, "a: 2\n")
    assert target.read_text() == "a: 2\n"
    write_bytes_atomic(tmp_path / "blob.bin", b"\x00\x01")
    assert (tmp_path / "blob.bin").read_bytes() == b"\x00\x01"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["blob.bin", "out", "result.yaml"]


def test_a_failing_write_keeps_the_old_file_and_removes_the_temporary(tmp_path):
    target = tmp_path / "poses.jsonl"
    target.write_text("old\n")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        assert tmp.parent == tmp_path and tmp.suffix == ".jsonl" and tmp != target
        tmp.write_text("half")
        raise RuntimeError("interrupted")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["poses.jsonl"]


def test_a_folder_is_written_whole_or_not_at_all(tmp_path):
    target = tmp_path / "report"
    with atomic_folder(target) as tmp:
        (tmp / "index.html").write_text("<html/>")
        (tmp / "fig").mkdir()
        (tmp / "fig" / "a.png").write_bytes(b"png")
        assert not target.exists()  # nothing visible until the block ends
    assert (target / "fig" / "a.png").read_bytes() == b"png"
    # a second run replaces it; an interrupted third leaves the second untouched
    with atomic_folder(target) as tmp:
        (tmp / "index.html").write_text("second")
    with pytest.raises(KeyboardInterrupt), atomic_folder(target) as tmp:
        (tmp / "index.html").write_text("third")
        raise KeyboardInterrupt
    assert (target / "index.html").read_text() == "second"
    assert not (target / "fig").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["report"]


def test_written_files_get_ordinary_modes(tmp_path):
    # mkdtemp makes a private (0700) folder: the result has the umask's modes instead
    umask = os.umask(0o022)
    try:
        with atomic_folder(tmp_path / "out") as tmp:
            (tmp / "a.txt").write_text("x")
    finally:
        os.umask(umask)
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "out" / "a.txt").stat().st_mode & 0o777 == 0o644


def test_atomic_files_get_the_umasks_mode_not_mkstemps_private_one(tmp_path):
    # mkstemp creates 0600: policy.onnx, replay CSVs, eval.json were unreadable to the group
    umask = os.umask(0o027)
    try:
        write_text_atomic(tmp_path / "a.csv", "x\n")
        write_bytes_atomic(tmp_path / "b.onnx", b"x")
        with atomic_path(tmp_path / "c.json") as tmp:
            tmp.write_text("{}")
    finally:
        os.umask(umask)
    for name in ("a.csv", "b.onnx", "c.json"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o640  # 0o666 & ~0o027


def test_check_writable_names_the_reason(tmp_path):
    folder = tmp_path / "existing"
    folder.mkdir()
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    check_writable(tmp_path / "new" / "deeper" / "out.csv", "--out")  # creatable: fine
    check_writable(folder, "--out", folder=True)
    with pytest.raises(InputError, match="--out: is an existing folder"):
        check_writable(folder, "--out")
    with pytest.raises(InputError, match="exists and is not a folder"):
        check_writable(a_file, "--out", folder=True)
    with pytest.raises(InputError, match="is a file"):
        check_writable(a_file / "under" / "out.csv", "--out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["existing", "file.txt"]  # created none


@needs_permissions
def test_check_writable_sees_missing_permissions(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "ro.txt").write_text("x")
    (locked / "ro.txt").chmod(0o444)
    try:
        with pytest.raises(InputError, match="read-only"):
            check_writable(locked / "ro.txt")
        locked.chmod(0o555)
        with pytest.raises(InputError, match="no write permission"):
            check_writable(locked / "new.txt", "--report")
    finally:
        locked.chmod(0o755)


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_check_writable_tries_a_write_where_permissions_say_yes():
    # root passes every permission check, but nothing can be created under /proc: the early
    # check must say so, not the end of the run with a traceback
    with pytest.raises(InputError, match=r"/proc/out\.png: --out: cannot be written in /proc"):
        check_writable("/proc/out.png", "--out")
