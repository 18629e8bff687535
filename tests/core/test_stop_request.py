"""Ctrl-C at a safe point: a first Ctrl-C asks, a second interrupts; errors cross processes."""

from __future__ import annotations

import os
import pickle
import signal

import pytest

from sim2real.core.errors import InputError
from sim2real.core.stop_request import StoppedError, ctrl_c_requests_stop, stop_requested


@pytest.fixture(params=["python", "default"])
def sigint_before(request):
    """Python's own handler, or SIG_DFL (what a library may leave: Ctrl-C would kill)."""
    saved = signal.getsignal(signal.SIGINT)
    handler = signal.default_int_handler if request.param == "python" else signal.SIG_DFL
    signal.signal(signal.SIGINT, handler)
    yield handler
    signal.signal(signal.SIGINT, saved)


def test_a_first_ctrl_c_asks_a_second_interrupts_and_the_handler_is_restored(sigint_before):
    with ctrl_c_requests_stop():
        assert not stop_requested()
        os.kill(os.getpid(), signal.SIGINT)  # delivered before the next bytecode
        assert stop_requested()
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            signal.sigtimedwait([], 0)  # a safe point for the handler
    assert signal.getsignal(signal.SIGINT) is sigint_before and not stop_requested()


def test_input_errors_cross_process_boundaries_whole():
    for err in (InputError("a.yaml", "mass", "must be > 0"), StoppedError("RUN", None, "stopped")):
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is type(err) and str(back) == str(err)
        assert (back.source, back.field, back.message) == (err.source, err.field, err.message)
