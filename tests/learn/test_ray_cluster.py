"""Joining Ray (core/ray_cluster.py) and the user's mistakes with ``policy train
--workers/--address``: each a one-line error, exit 2, nothing written, and within 30 s where
Ray itself retries an absent head for minutes. No Ray instance is started here: an address
that nobody answers at is a closed local port, a port that accepts and stays silent, a web
server, or a peer that speaks HTTP/2 (as a Ray head does) and then nothing."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time

import pytest
from cli_helpers import assert_one_line_error, run_cli

from sim2real.core.errors import InputError
from sim2real.core.ray_cluster import _init_within, check_workers, parse_address, probe

SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"  # an empty HTTP/2 SETTINGS frame

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
    pytest.importorskip("ray")  # without it the command stops earlier: "needs Ray"
    port = _closed_port()
    out = tmp_path / "run"
    start = time.monotonic()
    proc = run_cli("policy", "train", ENV, "--out", out, "--address", f"127.0.0.1:{port}",
                   "--quiet", timeout=60)  # fmt: skip
    elapsed = time.monotonic() - start
    assert_one_line_error(proc, "--address", f"127.0.0.1:{port}", "ray start --head")
    assert elapsed < 30, elapsed  # the bound (Ray alone retries for minutes)
    assert not out.exists()


@contextlib.contextmanager
def _server(reply: bytes | None):
    """A local TCP server that answers every connection with ``reply`` (None: stays silent)
    and keeps it open; yields its port."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    accepted: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                conn = server.accept()[0]
            except OSError:
                return
            accepted.append(conn)
            if reply is not None:
                conn.sendall(reply)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield server.getsockname()[1]
    finally:
        server.close()
        for conn in accepted:
            conn.close()


def test_a_port_that_is_not_a_ray_head_is_told_apart_quickly():
    silent = r"no Ray head at 127\.0\.0\.1:\d+ \(timed out\)"
    with _server(None) as port, pytest.raises(InputError, match=silent):  # accepts, never answers
        probe(f"127.0.0.1:{port}", timeout_s=1.0)
    web = b"HTTP/1.1 400 Bad Request\r\n\r\n"  # a web server, not gRPC
    with _server(web) as port, pytest.raises(InputError, match="answers, but not as a Ray head"):
        probe(f"127.0.0.1:{port}", timeout_s=5.0)


def test_a_grpc_peer_that_never_answers_as_ray_gives_up_after_the_connect_timeout():
    # answers HTTP/2's preface with a SETTINGS frame (the probe passes), then says nothing:
    # ray.init would retry for minutes; connect() gives up after CONNECT_TIMEOUT_S (3 s here,
    # in a fresh interpreter so the abandoned ray.init thread dies with it)
    pytest.importorskip("ray")
    with _server(SETTINGS) as port:
        code = (
            "import sim2real.core.ray_cluster as c\n"
            "c.CONNECT_TIMEOUT_S = 3.0\n"
            "try:\n"
            f"    c.connect('127.0.0.1:{port}')\n"
            "except c.InputError as err:\n"
            "    print(err)\n"
        )
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=60)  # fmt: skip
    assert proc.stdout.strip() == (
        f"--address: no Ray answered at 127.0.0.1:{port} within 3 s (a cluster with token "
        "authentication needs RAY_AUTH_MODE=token and its token here; see docs/cluster.md)"
    ), proc.stderr
    # Ray's own lines of the attempt (its Python logger, its C++ retries) are not shown
    assert "worker.py" not in proc.stderr and "gcs_client" not in proc.stderr, proc.stderr


class _FakeRay:
    """ray.init writing on file descriptor 2 as Ray's C++ logger does, then joining or not."""

    def __init__(self, joins: bool):
        self.joins = joins

    def init(self, **kwargs):
        os.write(2, b"gcs_client.cc: Failed to get cluster ID\n")
        if not self.joins:
            time.sleep(5.0)


def test_ray_lines_of_a_failed_join_are_held_back_and_of_a_join_shown(capfd):
    with pytest.raises(InputError, match="no Ray answered"):
        _init_within(_FakeRay(joins=False), "127.0.0.1:1", 0.5)
    assert "gcs_client" not in capfd.readouterr().err
    _init_within(_FakeRay(joins=True), "127.0.0.1:1", 5.0)
    assert "gcs_client.cc: Failed to get cluster ID" in capfd.readouterr().err


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
