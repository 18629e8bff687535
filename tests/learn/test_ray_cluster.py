"""Joining Ray (learn/distributed/cluster.py) and the user's mistakes with ``policy train
--workers/--address``: each a one-line error, exit 2, nothing written, and within 30 s where
Ray itself retries an absent head for minutes. No Ray instance is started here: an address
that nobody answers at is a closed local port, or a port that accepts and stays silent."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time

import pytest
from cli_helpers import assert_one_line_error, run_cli

from sim2real.core.errors import InputError
from sim2real.learn.distributed.cluster import check_workers, parse_address

ENV = "sim2real/PendulumSwingup-v0"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed when the block ends: connections are refused


def test_addresses_and_worker_counts():
    assert parse_address("10.0.0.5:6379") == ("10.0.0.5", 6379)
    assert parse_address("ray://head.lan:10001") == ("head.lan", 10001)
    assert parse_address("auto") is None
    for bad in ("10.0.0.5", "head:", "head:99999", ":6379", "head:port"):
        with pytest.raises(InputError, match="HOST:PORT"):
            parse_address(bad)
    assert check_workers(3) == 3
    for bad in (0, -2, 1.5, True):
        with pytest.raises(InputError, match=">= 1"):
            check_workers(bad)


def test_unreachable_address_is_one_line_within_30_s(tmp_path):
    port = _closed_port()
    out = tmp_path / "run"
    start = time.monotonic()
    proc = run_cli("policy", "train", ENV, "--out", out, "--address", f"127.0.0.1:{port}",
                   "--quiet", timeout=60)  # fmt: skip
    elapsed = time.monotonic() - start
    assert_one_line_error(proc, "--address", f"127.0.0.1:{port}", "ray start --head")
    assert elapsed < 30, elapsed  # the bound (Ray alone retries for minutes)
    assert not out.exists()


def test_a_silent_port_gives_up_after_the_connect_timeout():
    # something accepts TCP there but never speaks Ray's protocol: ray.init would retry for
    # minutes; connect() gives up after CONNECT_TIMEOUT_S (3 s here, in a fresh interpreter so
    # the abandoned ray.init thread dies with it)
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    accepted: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                accepted.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    port = server.getsockname()[1]
    code = (
        "import sim2real.learn.distributed.cluster as c\n"
        "c.CONNECT_TIMEOUT_S = 3.0\n"
        "try:\n"
        f"    c.connect('127.0.0.1:{port}')\n"
        "except c.InputError as err:\n"
        "    print(err)\n"
    )
    try:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=60)  # fmt: skip
    finally:
        server.close()
    assert proc.stdout.strip() == (
        f"--address: no Ray answered at 127.0.0.1:{port} within 3 s (a cluster with token "
        "authentication needs RAY_AUTH_MODE=token and its token here; see docs/cluster.md)"
    ), proc.stderr


def test_workers_zero_is_one_line(tmp_path):
    proc = run_cli("policy", "train", ENV, "--out", tmp_path / "run", "--workers", 0)
    assert_one_line_error(proc, "--workers")
    assert not (tmp_path / "run").exists()


def test_workers_without_ray_says_how_to_install(tmp_path):
    # ray made unimportable in the command's interpreter, as on a default install
    out = tmp_path / "run"
    code = (
        "import sys\n"
        "sys.modules['ray'] = None\n"
        f"sys.argv = ['sim2real', 'policy', 'train', {ENV!r}, '--out', {str(out)!r}, "
        "'--workers', '2']\n"
        "from sim2real.cli.main import main\n"
        "main()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert_one_line_error(proc, "--workers", "pip install 'sim2real[cluster]'")
    assert not out.exists()
