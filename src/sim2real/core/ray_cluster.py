"""Joining Ray: a local instance, or an existing cluster at ``--address``, with the user's
mistakes (ray missing, a bad worker count, an address nobody answers at) as one-line
:class:`InputError`\\ s within seconds instead of Ray's retries (minutes).

``ray`` is the optional extra ``sim2real[cluster]``; nothing here imports it before it is
needed."""

from __future__ import annotations

import io
import os
import socket
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sim2real.core.cores import usable_cores
from sim2real.core.errors import InputError

CONNECT_TIMEOUT_S = 20.0  # the whole connection, probe included (the issue: an error within 30 s)
PROBE_TIMEOUT_S = 5.0  # TCP connect to the head's GCS port


def require_ray(option: str = "--workers") -> Any:
    """The ``ray`` module, or a one-line error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise InputError(
            option, None, "needs Ray: pip install 'sim2real[cluster]' (or pip install ray)"
        ) from None
    return ray


def check_workers(workers: int, option: str = "--workers") -> int:
    """``workers`` as an int >= 1, else a one-line error."""
    if isinstance(workers, bool) or int(workers) != workers or workers < 1:
        raise InputError(option, None, f"{workers}: give a number of Ray workers >= 1")
    return int(workers)


def parse_address(address: str) -> tuple[str, int] | None:
    """``host:port`` (or ``ray://host:port``) -> (host, port); ``"auto"`` -> None (Ray finds
    the cluster started on this machine by ``ray start``)."""
    text = address.strip()
    if text == "auto":
        return None
    host, sep, port = text.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InputError("--address", None, f"{address!r}: give HOST:PORT of the Ray head, or auto")
    return host.strip("[]"), int(port)


# HTTP/2's client preface and an empty SETTINGS frame: a gRPC server (Ray's head) answers with
# a SETTINGS frame of its own (RFC 9113, 3.4); a web page, a database or nobody does not
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
SETTINGS_FRAME = 0x04


def probe(address: str, timeout_s: float = PROBE_TIMEOUT_S) -> None:
    """Raise InputError unless a gRPC server (what Ray's head is) answers at ``address``
    within ``timeout_s``: nobody listening, a timeout, or another kind of server (the
    dashboard's port instead of the head's, say). No Ray call: Ray itself retries such an
    address for minutes."""
    where = parse_address(address)
    if where is None:
        return
    try:
        with socket.create_connection(where, timeout=timeout_s) as conn:
            conn.sendall(HTTP2_PREFACE)
            reply = _read(conn, 9)
    except OSError as err:
        reason = "timed out" if isinstance(err, TimeoutError) else (err.strerror or str(err))
        raise InputError(
            "--address", None, f"no Ray head at {address} ({reason}); start one with ray start "
            "--head",
        ) from None  # fmt: skip
    if len(reply) < 9 or reply[3] != SETTINGS_FRAME:
        raise InputError(
            "--address", None, f"{address} answers, but not as a Ray head (no gRPC): give the "
            "head's GCS port (6379 unless ray start --head --port said otherwise)",
        )  # fmt: skip


def _read(conn: socket.socket, n: int) -> bytes:
    """Up to ``n`` bytes (fewer when the peer closes first)."""
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    return data


@dataclass
class RaySession:
    """A connection to Ray; ``owned``: this process started the instance and shuts it down."""

    address: str | None
    owned: bool
    cpus: float

    def shutdown(self) -> None:
        if self.owned:
            import ray

            ray.shutdown()


def connect(address: str | None = None, *, workers: int = 1) -> RaySession:
    """Join the Ray cluster at ``address``, or start a local instance (``address`` None) with
    room for ``workers`` actors of one CPU each. Reuses a connection already made in this
    process. Errors (ray missing, nobody at the address, no answer within
    :data:`CONNECT_TIMEOUT_S`) are one-line InputErrors."""
    ray = require_ray("--address" if address else "--workers")
    workers = check_workers(workers)
    if ray.is_initialized():
        return RaySession(address, False, float(ray.cluster_resources().get("CPU", 0)))
    if address:
        probe(address)
        _init_within(ray, address, CONNECT_TIMEOUT_S, log_to_driver=False)
    else:  # in this thread: Ray's processes die with the thread that started them
        # a worker per CPU at least; more workers than cores share them (the OS schedules)
        cpus = max(usable_cores(), workers)
        # "local": a new instance even where `ray start` runs a cluster on this machine
        ray.init(address="local", num_cpus=cpus, include_dashboard=False, log_to_driver=False)
    cpus = float(ray.cluster_resources().get("CPU", 0))
    return RaySession(address, address is None, cpus)


@contextmanager
def _held_stderr() -> Iterator[io.BytesIO]:
    """File descriptor 2 (Python's and Ray's C++ logging alike) into a buffer for the block;
    the buffer holds what was written when the block ends."""
    held = io.BytesIO()
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield held
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            held.write(sink.read())


def _init_within(ray: Any, address: str, timeout_s: float, **kwargs: Any) -> None:
    """``ray.init(**kwargs)`` joining an existing cluster (no local processes started), or
    InputError when it has not returned after ``timeout_s`` (Ray retries a head that accepts
    TCP but does not answer for minutes)."""
    outcome: dict[str, BaseException | None] = {}

    def target() -> None:
        try:
            ray.init(address=address, **kwargs)
            outcome["error"] = None
        except BaseException as err:  # reported in the caller's thread
            outcome["error"] = err

    thread = threading.Thread(target=target, daemon=True, name="ray-init")
    with _held_stderr() as held:  # Ray's retries log a line a second on fd 2 (C++)
        thread.start()
        thread.join(timeout_s)
    if outcome.get("error", True) is None:  # joined: let its usual lines through
        os.write(2, held.getvalue())
    if "error" not in outcome:
        raise InputError(
            "--address", None, f"no Ray answered at {address} within {timeout_s:.0f} s (a "
            "cluster with token authentication needs RAY_AUTH_MODE=token and its token here; "
            "see docs/cluster.md)",
        )  # fmt: skip
    err = outcome["error"]
    if err is not None:
        text = str(err).strip().splitlines()
        reason = text[-1] if text else type(err).__name__
        raise InputError("--address", None, f"could not join Ray at {address}: {reason}") from None


def unwrap_remote_error(err: BaseException) -> BaseException:
    """The error raised inside a Ray task or actor where Ray kept it (an InputError there is
    an InputError here, one line: it pickles whole), else ``err`` itself."""
    cause = getattr(err, "cause", None)
    return cause if isinstance(cause, BaseException) else err
