"""Watching a call for I/O through Python's audit events (PEP 578).

An inline grader runs on the runner's own thread, in batches: a file, socket or child process
opened there stalls every grade in the batch, and is a side effect the runner does not expect
when it grades the same sample again. `watching()` records the audit events that mean I/O
while its block runs, in this thread only.

The audit hook is added once per process and cannot be removed (Python offers no way); outside
a `watching()` block it returns at once.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator
from typing import Any, Final

__all__ = ["watching"]

# Events that mean the call reached outside the process (or its file system).
_IO_EVENTS: Final = frozenset(
    {
        "open",
        "os.remove",
        "os.rename",
        "os.mkdir",
        "os.rmdir",
        "os.system",
        "os.exec",
        "os.fork",
        "os.forkpty",
        "os.posix_spawn",
        "os.spawn",
        "os.startfile",
        "shutil.rmtree",
        "socket.connect",
        "socket.bind",
        "socket.sendto",
        "socket.getaddrinfo",
        "subprocess.Popen",
        "urllib.Request",
        "ctypes.dlopen",
    }
)
# Reading Python's own modules is an import, not the grader's I/O.
_MODULE_SUFFIXES: Final = (".py", ".pyc", ".so", ".pyd", ".pth")

_local = threading.local()
_install_lock = threading.Lock()
_installed: list[bool] = []  # one True once the hook is added


def _hook(event: str, args: tuple[Any, ...]) -> None:
    seen: list[str] | None = getattr(_local, "seen", None)
    if seen is None or event not in _IO_EVENTS:
        return
    if event == "open" and args and str(args[0]).endswith(_MODULE_SUFFIXES):
        return
    shown = ", ".join(repr(arg) for arg in args[:2])
    seen.append(f"{event}({shown:.160})")


def _install() -> None:
    with _install_lock:
        if not _installed:
            sys.addaudithook(_hook)
            _installed.append(True)


@contextlib.contextmanager
def watching() -> Iterator[list[str]]:
    """Record, in the yielded list, every I/O audit event raised in this thread meanwhile."""
    _install()
    seen: list[str] = []
    previous = getattr(_local, "seen", None)
    _local.seen = seen
    try:
        yield seen
    finally:
        _local.seen = previous
