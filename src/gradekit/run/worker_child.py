"""The main of a warm worker: a long-lived child that grades one request after another.

Started by `gradekit.run.workers` (forked from the fork server, or a fresh Python in
bubblewrap). It receives `(key, payload or None, sample)` on its connection, answers
`(result, healthy)`, and ends when the connection closes. Between two grades it puts back what
it can (see `_Baseline`); when it cannot (threads the grader left running, children that will
not die, a MemoryError), it answers `healthy=False` and exits, and the parent starts a fresh
worker for the next grade.

Put back before every grade: a fresh grader object (unpickled, or created again, from the
payload sent once per worker), the working folder, `os.environ`, `sys.path`, an empty private
temp folder (`TMPDIR`), no pending `alarm`, and no process the grader started (the worker is
a child subreaper: even a process that left its group comes back to it and is killed). Not put
back: module globals, class attributes and caches of imported modules, files left open,
`sys.modules`, resource limits the grader lowered.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import Any, Final

from gradekit._types import GradeResult, error_text
from gradekit.run.isolation import _detach_stdin, _grade, _limit_memory, _memory_error, _names

__all__ = ["READY", "serve"]

READY: Final = "ready"
"""What a worker sends once it is ready to grade."""

_PR_SET_CHILD_SUBREAPER: Final = 36
_KILL_ROUNDS: Final = 20
_PAYLOADS_KEPT: Final = 256


def serve(connection: Any, memory_limit_mb: int | None, paths: list[str], tmp: str | None) -> None:
    """Grade requests from `connection` until it closes (see the module). `tmp`: the worker's
    private temp folder, emptied after each grade; None: make one in the temp folder (in
    bubblewrap: the sandbox's own /tmp)."""
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
    connection.send(READY)  # the grades' timeouts count from here, not from the start
    while True:
        try:
            key, payload, sample = connection.recv()
        except (EOFError, OSError):
            return
        if payload is not None:
            if len(payloads) >= _PAYLOADS_KEPT:
                payloads.clear()
            payloads[key] = payload
        result, healthy = _grade_one(payloads[key], sample, memory_limit_mb)
        healthy = baseline.restore() and healthy
        try:
            connection.send((result, healthy))
        except Exception as error:
            text = f"{error_text(error)} (sending the result)"
            connection.send((GradeResult.of_error(*_names(payload or payloads[key]), text), False))
        if not healthy:
            return


def _grade_one(
    payload: tuple[str, Any], sample: Any, memory_limit_mb: int | None
) -> tuple[GradeResult, bool]:
    healthy = True
    try:
        result = _grade(payload, sample)
    except MemoryError:
        result, healthy = GradeResult.of_error(*_names(payload), "MemoryError"), False
    if result.error is not None and result.error.split(":")[0] == "MemoryError":
        result, healthy = _memory_error(result, memory_limit_mb), False
    return result, healthy


class _Baseline:
    """What the worker was before its first grade, and putting it back after each one."""

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
            return False  # a thread the grader started: it could change the next grade
        return _kill_descendants(self.pid, tasks)


def _empty(folder: str) -> None:
    """Remove what a grade left in the worker's own temp folder (only ever that folder)."""
    try:
        with os.scandir(folder) as entries:
            left = [entry.path for entry in entries]
    except OSError:
        return
    if not left:
        return
    from pathlib import Path

    from gradekit._scratch import remove_tree

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
    """Kill every process the grader started: a subreaper's orphaned descendants come back to
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
    """The worker's main in bubblewrap: its settings, then requests, on the connection `fd`."""
    from multiprocessing.connection import Connection

    connection = Connection(fd)
    memory_limit_mb, paths = connection.recv()
    serve(connection, memory_limit_mb, paths, None)
