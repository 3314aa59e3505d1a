"""The main of a warm worker: a long-lived child that works one request after another.

Started by `gradekit.process.workers` (forked from the fork server, or a fresh Python in
bubblewrap). It receives `(key, payload or None, item)` on its connection, calls the work
function it was started with, `work(payload, item) -> (answer, healthy)`, answers
`(answer, healthy, None)` (or `(None, False, why)` when the answer cannot be sent), and ends
when the connection closes. Between two requests it puts back what it can (see `_Baseline`);
when it cannot (threads the work left running, children that will not die, or the work said
`healthy=False`: a MemoryError), it exits after answering, and the parent starts a fresh
worker for the next request.

Put back before every request (with process isolation's work, which also makes a fresh grader
object from the payload sent once per worker): the working folder, `os.environ`, `sys.path`,
an empty private temp folder (`TMPDIR`), no pending `alarm`, and no process the work started
(the worker is a child subreaper: even a process that left its group comes back to it and is
killed). Not put back: module globals, class attributes and caches of imported modules, files
left open, `sys.modules`, resource limits the work lowered.

Kept apart from `workers` so that the child imports only this module and the work's.
Imports: the core only (`gradekit.core.types`' `error_text`, `gradekit.core.scratch`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable
from typing import Any, Final

from gradekit.core.types import error_text

__all__ = ["READY", "main", "serve"]

READY: Final = "ready"
"""What a worker sends once it is ready to work."""

_PR_SET_CHILD_SUBREAPER: Final = 36
_KILL_ROUNDS: Final = 20
_PAYLOADS_KEPT: Final = 256


def serve(
    connection: Any,
    work: Callable[[Any, Any], tuple[Any, bool]],
    memory_limit_mb: int | None,
    paths: list[str],
    tmp: str | None,
) -> None:
    """Work requests from `connection` with `work` until it closes (see the module), under
    an address-space limit of `memory_limit_mb` MiB. `tmp`: the worker's private temp folder,
    emptied after each request; None: make one in the temp folder (in bubblewrap: the
    sandbox's own /tmp)."""
    with contextlib.suppress(OSError):
        os.setsid()  # in bubblewrap the worker leads a session already
    _detach_stdin()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if memory_limit_mb is not None:
        _limit_memory(memory_limit_mb)
    sys.path[:] = [*paths, *(p for p in sys.path if p not in paths)]
    import tempfile

    if tmp is None:
        try:
            tmp = tempfile.mkdtemp(prefix="gradekit-worker-")
        except OSError:
            tmp = None  # no temp folder it may write: nothing to empty either
    if tmp is not None:
        os.environ["TMPDIR"] = tmp
        tempfile.tempdir = tmp
    _become_subreaper()
    baseline = _Baseline(tmp)
    payloads: dict[int, tuple[str, Any]] = {}
    connection.send(READY)  # the requests' timeouts count from here, not from the start
    while True:
        try:
            key, payload, item = connection.recv()
        except (EOFError, OSError):
            return
        if payload is not None:
            if len(payloads) >= _PAYLOADS_KEPT:
                payloads.clear()
            payloads[key] = payload
        answer, healthy = work(payloads[key], item)
        healthy = baseline.restore() and healthy
        try:
            connection.send((answer, healthy, None))
        except Exception as error:
            connection.send((None, False, f"{error_text(error)} (sending the result)"))
        if not healthy:
            return


def _detach_stdin() -> None:
    """/dev/null as the worker's stdin, for Python and for the processes it starts."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the process's stdin, for its life


def _limit_memory(megabytes: int) -> None:
    import resource

    limit = megabytes * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


class _Baseline:
    """What the worker was before its first request, and putting it back after each one."""

    def __init__(self, tmp: str | None) -> None:
        self.cwd = os.getcwd()
        self.environ = dict(os.environ)
        self.path = list(sys.path)
        self.tmp = tmp
        self.pid = os.getpid()

    def restore(self) -> bool:
        """Put the worker back; False when it cannot be trusted with another grade."""
        signal.alarm(0)
        if os.getcwd() != self.cwd:
            os.chdir(self.cwd)
        if os.environ != self.environ:
            os.environ.clear()
            os.environ.update(self.environ)
        if sys.path != self.path:
            sys.path[:] = self.path
        if self.tmp is not None:
            _empty(self.tmp)
        tasks = _tasks(self.pid)
        if len(tasks) > 1:
            return False  # a thread the work started: it could change the next request
        return _kill_descendants(self.pid, tasks)


def _empty(folder: str) -> None:
    """Remove what a request left in the worker's own temp folder (only ever that folder)."""
    try:
        with os.scandir(folder) as entries:
            left = [entry.path for entry in entries]
    except OSError:
        return
    if not left:
        return
    from pathlib import Path

    from gradekit.core.scratch import remove_tree

    for path in left:
        if os.path.isdir(path) and not os.path.islink(path):
            remove_tree(Path(path))
        else:
            with contextlib.suppress(OSError):
                os.unlink(path)


def _tasks(pid: int) -> list[str]:
    try:
        return os.listdir(f"/proc/{pid}/task")
    except OSError:
        return [str(pid)]


def _children(pid: int, tasks: list[str]) -> list[int]:
    found: list[int] = []
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as file:
                found += [int(part) for part in file.read().split()]
        except OSError:
            continue
    return found


def _kill_descendants(pid: int, tasks: list[str]) -> bool:
    """Kill every process the work started: a subreaper's orphaned descendants come back to
    it as children, so killing children until none is left gets them all."""
    for _ in range(_KILL_ROUNDS):
        children = _children(pid, tasks)
        if not children:
            return True
        for child in children:
            with contextlib.suppress(OSError):
                os.killpg(child, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.kill(child, signal.SIGKILL)
        for child in children:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(child, 0)
    return not _children(pid, tasks)


def _become_subreaper() -> None:
    """Orphaned descendants of the worker become its children (Linux), not init's."""
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def main(fd: int) -> None:  # pragma: no cover - runs in the sandbox
    """The worker's main in bubblewrap: its work and settings, then requests, on the
    connection `fd`."""
    from multiprocessing.connection import Connection

    connection = Connection(fd)
    work, memory_limit_mb, paths = connection.recv()
    serve(connection, work, memory_limit_mb, paths, None)
