"""Ctrl-C at a safe point. A long loop (a training's iterations) asks ``stop_requested()``
between steps and, when asked, saves its state whole and stops with ``StoppedError``: a
KeyboardInterrupt lands anywhere, and a state saved there would not resume exactly. Within
``ctrl_c_requests_stop()`` a first Ctrl-C only asks; a second interrupts at once. A pool's
worker processes ignore Ctrl-C and follow the stop event their parent sets
(``follow_parent_stop``, the pool's initializer)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from sim2real.core.errors import InputError

_asked = threading.Event()
_parent_stop = None  # in a pool's worker: the parent's stop event (a multiprocessing Event)


class StoppedError(InputError):
    """A loop stopped on request, its state saved: the message says how to continue."""


def stop_requested() -> bool:
    return _asked.is_set() or (_parent_stop is not None and _parent_stop.is_set())


@contextmanager
def ctrl_c_requests_stop() -> Iterator[None]:
    """Within: a first Ctrl-C asks the loop to stop (``stop_requested``), a second raises
    KeyboardInterrupt. Off the main thread, or where Ctrl-C is ignored (a pool's worker), it
    changes nothing."""
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or previous is signal.SIG_IGN:
        yield
        return

    def ask(signum, frame) -> None:
        _asked.set()
        signal.signal(signal.SIGINT, signal.default_int_handler)  # the second: at once

    _asked.clear()
    signal.signal(signal.SIGINT, ask)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        _asked.clear()


def ignore_ctrl_c() -> None:
    """A pool's initializer: this worker ignores Ctrl-C, which its parent takes (and then ends
    the pool): no traceback from each worker."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def follow_parent_stop(stop) -> None:
    """A pool's initializer: this worker ignores Ctrl-C (its parent takes it and sets ``stop``,
    a multiprocessing Event) and stops its loops when ``stop`` is set."""
    global _parent_stop
    ignore_ctrl_c()
    _parent_stop = stop
