"""Interrupts: what a grader raises, and the signals that stop a run.

What a grader raises becomes its error result, KeyboardInterrupt and SystemExit included;
only the user's Ctrl-C stops a run.

A real Ctrl-C is a KeyboardInterrupt raised in the main thread by Python's SIGINT handler.
Graders run in worker threads (and process-isolated ones in children that ignore SIGINT), so
a KeyboardInterrupt anywhere else was raised by the grader itself, as was every SystemExit.

Signals that stop a run: Ctrl-C (SIGINT) and, for the command line, SIGTERM and SIGHUP.

While `stopping_on(...)` is in effect (main thread only), each of those signals raises
`Interrupted` (a KeyboardInterrupt, so everything that stops cleanly on Ctrl-C stops cleanly on
SIGTERM too) in the main thread, except inside a `RECORDING` block: recording a finished case
(its log line, its place in the report, its count) is one step that a signal does not cut in
two; the signal is raised when the block ends. With `exit_on_second`, a second signal during
the shutdown that the first one began ends the process at once, quietly (for a command line:
the user asked twice); child processes still registered are killed first.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Awaitable, Iterator
from types import FrameType
from typing import Final, TypeVar

from gradekit.run.exits import real_exit

__all__ = [
    "GRADER_RAISES",
    "RECORDING",
    "Interrupted",
    "Raised",
    "contained",
    "first_signal",
    "is_ctrl_c",
    "stopping_on",
]


T = TypeVar("T")

GRADER_RAISES: Final = (Exception, SystemExit, KeyboardInterrupt)
"""What a grader may raise that becomes its error result (unless `is_ctrl_c`)."""


def is_ctrl_c(error: BaseException) -> bool:
    """True for a KeyboardInterrupt that may be the user's Ctrl-C: raised in the main thread
    of a process that handles SIGINT. Re-raise it; anything else is the grader's own."""
    return (
        isinstance(error, KeyboardInterrupt)
        and threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is not signal.SIG_IGN
    )


class Raised:
    """A KeyboardInterrupt or SystemExit an async grader raised, carried out as a value: an
    event loop lets neither pass through a task, it stops the loop instead."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


async def contained(awaitable: Awaitable[T]) -> T | Raised:
    """Await `awaitable`; its KeyboardInterrupt or SystemExit comes back as `Raised`."""
    try:
        return await awaitable
    except (KeyboardInterrupt, SystemExit) as error:
        if is_ctrl_c(error):
            raise
        return Raised(error)


class Interrupted(KeyboardInterrupt):
    """A signal that stops the run arrived: `signum` says which."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class _State:
    def __init__(self) -> None:
        self.depth = 0  # RECORDING blocks open
        self.pending: int | None = None  # a signal that arrived inside one
        self.first: int | None = None  # the first signal since handlers were installed
        self.exit_on_second = False


_state = _State()


class _Recording:
    """`with RECORDING:`: a signal arriving inside is raised when the block ends (in the main
    thread, where signals are handled; elsewhere the block changes nothing)."""

    def __enter__(self) -> None:
        if threading.get_ident() == _MAIN:
            _state.depth += 1

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        if threading.get_ident() != _MAIN:
            return
        _state.depth -= 1
        pending = _state.pending
        if pending is not None and _state.depth == 0:
            _state.pending = None
            if kind is None:  # else what ended the block stops the run already
                raise Interrupted(pending)


_MAIN = threading.main_thread().ident


RECORDING = _Recording()


def first_signal() -> int | None:
    """The first stopping signal received while `stopping_on` is in effect, if any."""
    return _state.first


def _handler(signum: int, frame: FrameType | None) -> None:
    if _state.first is not None and _state.exit_on_second:
        # No import in a signal handler: children are registered only by process.commands,
        # so when it was never loaded there are none to kill.
        commands = sys.modules.get("gradekit.process.commands")
        if commands is not None:
            commands.kill_children()
        with contextlib.suppress(OSError):
            os.write(2, b"gradekit: stopped at once (second interrupt)\n")
        real_exit(128 + _state.first)
    if _state.first is None:
        _state.first = signum
    if _state.depth:
        _state.pending = signum
        return
    raise Interrupted(signum)


@contextlib.contextmanager
def stopping_on(
    *signals: signal.Signals, exit_on_second: bool = False, only_if_default: bool = False
) -> Iterator[None]:
    """Make `signals` stop the run (see the module) while the block runs; the previous
    handlers come back after. Outside the main thread, or with `only_if_default` when a
    handler other than Python's default is in place (a caller chose its own), nothing
    changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if only_if_default and any(not _is_default(s) for s in signals):
        yield
        return
    previous = {s: signal.signal(s, _handler) for s in signals}
    outer = (_state.first, _state.exit_on_second)
    _state.first, _state.exit_on_second = None, exit_on_second
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        _state.first, _state.exit_on_second = outer


def _is_default(signum: signal.Signals) -> bool:
    handler = signal.getsignal(signum)
    return handler is signal.default_int_handler or handler == signal.SIG_DFL
