"""The child processes gradekit runs right now, so that a process about to exit at once (a
second Ctrl-C) can kill them first instead of leaving them running.

The sandbox registers each command's process group while it runs, process isolation each
grading child. Registering costs a dict operation; nothing here runs unless asked.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading

__all__ = ["ended", "kill_all", "started"]

_lock = threading.Lock()
_live: dict[int, bool] = {}  # pid -> whether it leads a process group of its own


def started(pid: int, *, group: bool) -> None:
    """Note a child that now runs; `group`: it leads its own process group (kill the group)."""
    with _lock:
        _live[pid] = group


def ended(pid: int) -> None:
    """Forget a child that has been reaped."""
    with _lock:
        _live.pop(pid, None)


def kill_all() -> None:
    """SIGKILL every child still registered (and the groups they lead). Safe in a signal
    handler: no lock is waited for."""
    if not _lock.acquire(timeout=0.1):
        return
    try:
        live = list(_live.items())
    finally:
        _lock.release()
    for pid, group in live:
        with contextlib.suppress(OSError):
            if group:
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
