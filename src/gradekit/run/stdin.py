"""Graders never read gradekit's stdin: during a run, `sys.stdin` reads from /dev/null.

A thread-isolated grader that calls `input()` then gets EOFError at once (its error result)
instead of waiting on the terminal or a pipe, and no abandoned grader thread is left blocked
in the interpreter's stdin buffer at exit (which aborts the process: "Fatal Python error:
_enter_buffered_busy"). `sys.stdin` is restored when the last run in progress returns.
Commands and process-isolated children get /dev/null as their file descriptor 0 themselves.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

__all__ = ["detach_stdin"]

_lock = threading.Lock()
_runs = 0
_saved: Any = None
_null: IO[str] | None = None


def detach_stdin() -> Callable[[], None]:
    """Make `sys.stdin` a /dev/null reader until the returned function is called (runs may
    overlap: the first to start swaps it, the last to end puts it back)."""
    global _runs, _saved, _null  # noqa: PLW0603 - sys.stdin is process-wide state
    with _lock:
        if _runs == 0:
            if _null is None:
                _null = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - kept for the process
            _saved, sys.stdin = sys.stdin, _null
        _runs += 1
    done = False

    def restore() -> None:
        global _runs, _saved  # noqa: PLW0603
        nonlocal done
        with _lock:
            if done:
                return
            done = True
            _runs -= 1
            if _runs == 0:
                if sys.stdin is _null:  # unless someone replaced it meanwhile
                    sys.stdin = _saved
                _saved = None

    return restore
