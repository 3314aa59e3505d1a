"""What a grader raises becomes its error result, KeyboardInterrupt and SystemExit included;
only the user's Ctrl-C stops a run.

A real Ctrl-C is a KeyboardInterrupt raised in the main thread by Python's SIGINT handler.
Graders run in worker threads (and process-isolated ones in children that ignore SIGINT), so
a KeyboardInterrupt anywhere else was raised by the grader itself, as was every SystemExit.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Awaitable
from typing import Final, TypeVar

__all__ = ["GRADER_RAISES", "Raised", "contained", "is_ctrl_c"]

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
