"""Signals that stop a run: a finished case is recorded whole, SIGTERM stops like Ctrl-C, and the
handlers come back after (real signals sent to this process)."""

from __future__ import annotations

import os
import signal
import time

import pytest

from gradekit.run.exits import RECORDING, Interrupted, first_signal, stopping_on


def test_a_real_sigint_inside_a_recording_is_raised_when_the_recording_ends():
    steps = []
    with stopping_on(signal.SIGINT), pytest.raises(KeyboardInterrupt):
        with RECORDING:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)  # the handler runs in here, and must not interrupt the block
            steps.append("recorded")
        steps.append("not reached")
    assert steps == ["recorded"]


def test_a_real_sigint_outside_is_raised_at_once_and_the_handler_is_restored():
    before = signal.getsignal(signal.SIGINT)
    with stopping_on(signal.SIGINT), pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)  # interrupted: the test does not wait this long
    assert signal.getsignal(signal.SIGINT) is before


def test_sigterm_stops_like_ctrl_c_and_says_which_signal_it_was():
    before = signal.getsignal(signal.SIGTERM)
    with stopping_on(signal.SIGINT, signal.SIGTERM):
        with pytest.raises(KeyboardInterrupt) as raised:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        assert isinstance(raised.value, Interrupted)
        assert raised.value.signum == signal.SIGTERM
        assert first_signal() == signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) is before
    assert first_signal() is None


def test_a_handler_the_caller_chose_is_left_alone():
    def mine(signum, frame):
        raise RuntimeError("the caller's own")

    before = signal.signal(signal.SIGINT, mine)
    try:
        with stopping_on(signal.SIGINT, only_if_default=True):
            assert signal.getsignal(signal.SIGINT) is mine
    finally:
        signal.signal(signal.SIGINT, before)
