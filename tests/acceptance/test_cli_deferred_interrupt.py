"""Ctrl-C while the command line records a finished case waits for the record to be whole."""

from __future__ import annotations

import os
import signal
import time

import pytest

from gradekit.cli import _DeferredInterrupt


def test_a_real_sigint_inside_the_block_is_raised_when_the_block_ends():
    deferred = _DeferredInterrupt()
    steps = []
    with deferred.installed(), pytest.raises(KeyboardInterrupt):
        with deferred:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)  # the handler runs in here, and must not interrupt the block
            steps.append("recorded")
        steps.append("not reached")
    assert steps == ["recorded"]


def test_a_real_sigint_outside_the_block_is_raised_at_once_and_the_handler_is_restored():
    before = signal.getsignal(signal.SIGINT)
    deferred = _DeferredInterrupt()
    with deferred.installed(), pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)  # interrupted: the test does not wait this long
    assert signal.getsignal(signal.SIGINT) is before
