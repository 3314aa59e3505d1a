"""What a run keeps for the process that may have to end it: which of a suite's graders may
hold the GIL in a thread, and each finished case's text written out at once.

A thread-isolated grader looping inside a C call that holds the GIL (Python's `re`
backtracking, a C extension's loop) stops every Python thread of its process for as long as
the call lasts: the runner's watch, its signal handlers, the thread that writes the reports.
Only another process can act then (`gradekit.cli.supervise`), and it can only write the cases
that reached a file. gradekit's own kinds never hold the GIL long (their patterns are matched
by `regex`, which releases it; their commands and judges wait without it), so only a suite
with a grader of user code run in a thread needs this (`may_hold_the_gil`).

`Rescue` is that file, appended to by the thread that finishes each case, before that thread
grades anything else: a case finished in a batch of the lane is written before the batch's
next grade starts, so the cases of the very batch of a grade that sticks are there too. Each
line is the case's JSON text (`case_json`, a line of the `--resume` log: the file reads back
as a results log). The text is made once: the case goes on as its text (`CaseText`) to the
log or the stream that would have encoded it, when nothing else needs its report.
"""

from __future__ import annotations

import contextlib
import fcntl
import mmap
import os
import threading
from collections.abc import Sequence
from typing import Final

from gradekit.core.values import utf8
from gradekit.registry.entries import GraderEntry, Isolation
from gradekit.registry.plugins import BUILTIN_KINDS
from gradekit.report.json import CaseText, FinishedCase, case_json
from gradekit.report.model import CaseReport
from gradekit.suite.model import Suite

__all__ = ["CHUNK", "Rescue", "may_hold_the_gil", "written_part"]

_OWN: str = "gradekit."
"""Where gradekit's own graders are defined (a kind's class in another package is a pack's)."""

CHUNK: Final = 1 << 24
"""Bytes of the file reserved and mapped at a time (16 MiB)."""


def may_hold_the_gil(suite: Suite, isolation: Isolation | None) -> tuple[str, ...]:
    """The names of the suite's entries that run user code in a thread of the run (`code`, a
    pack's kind, a composite holding one), with `isolation` the run's default; `("*",)` when
    the suite's entries are not all known before its cases are read (`Suite.entries`)."""
    if suite.entries is None:
        return ("*",)
    names: dict[str, None] = {}
    for entry in suite.entries:
        if _may_hold(entry, isolation):
            names[entry.name] = None
    return tuple(names)


def _may_hold(entry: GraderEntry, isolation: Isolation | None) -> bool:
    if (entry.isolation or isolation or "thread") == "process":
        return False  # graded in a child process killed at its timeout
    grader = entry.grader
    children: Sequence[GraderEntry] = getattr(grader, "children", ())
    if entry.kind not in BUILTIN_KINDS or entry.kind == "code":
        return True
    if not type(grader).__module__.startswith(_OWN):
        return True
    return any(_may_hold(child, isolation) for child in children)


class Rescue:
    """The finished cases' texts appended to the file open at `fd` (see the module).

    `replace`: the cases go on as their texts (`CaseText`) rather than their reports, when
    nothing but the log or the stream reads them (`Collection.encode`).

    The texts are copied into the file through a shared memory map, `CHUNK` bytes reserved
    (`posix_fallocate`: a full disk is an error here, never a SIGBUS later) and mapped at a
    time: no system call per case (each would release the GIL; bench/RESULTS.md, "The
    supervisor of a run stuck in C code", measured no clear difference either way on a
    trivial `code` grader, within the noise of a shared machine). What a killed process copied there
    is in the file (the page cache outlives it); the rest of the file is zeros, cut by
    `written_part`. Where the file cannot be mapped (`fd` not open for reading and writing),
    or its space not reserved, each text is written with `os.write`."""

    def __init__(self, fd: int, *, replace: bool = False) -> None:
        self.fd = fd
        self.replace = replace
        self._lock = threading.Lock()
        self._map: mmap.mmap | None = None
        self._end = 0  # where the next text goes in the map
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        # False: os.write from now on (a map needs the file open for reading and writing).
        self._mapping = flags & os.O_ACCMODE == os.O_RDWR and not flags & os.O_APPEND

    def secure(self, items: Sequence[tuple[int, FinishedCase]]) -> list[tuple[int, FinishedCase]]:
        """Write these finished cases out in one write; the items as they go on."""
        kept: list[tuple[int, FinishedCase]] = []
        texts: list[str] = []
        replace = self.replace
        for position, finished in items:
            if isinstance(finished, CaseReport):
                text = case_json(finished)
                if replace:
                    kept.append(
                        (
                            position,
                            CaseText(text, finished.outcome, finished.name, finished.attempt),
                        )
                    )
                else:
                    kept.append((position, finished))
            else:
                text = finished.text
                kept.append((position, finished))
            texts.append(text)
        if texts:
            self._write(utf8("\n".join(texts) + "\n"))
        return kept

    def _write(self, data: bytes) -> None:
        with self._lock:
            if self._mapping:
                end = self._end + len(data)
                if (self._map is not None and end <= len(self._map)) or self._grow(end):
                    assert self._map is not None
                    self._map[self._end : end] = data
                    self._end = end
                    return
            self._append(data)

    def _grow(self, end: int) -> bool:
        """Reserve and map the file up to past `end`; False (writes from now on) if not."""
        size = (end // CHUNK + 1) * CHUNK
        try:
            os.posix_fallocate(self.fd, 0, size)
            if self._map is None:
                self._map = mmap.mmap(self.fd, size)
            else:
                self._map.resize(size)
        except (OSError, ValueError, AttributeError):
            self._mapping = False
            with contextlib.suppress(OSError, ValueError):  # the texts copied stay: after them
                if self._map is not None:
                    self._map.flush()
                os.ftruncate(self.fd, self._end)
                os.lseek(self.fd, self._end, os.SEEK_SET)
            return False
        return True

    def _append(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                written = os.write(self.fd, view)
            except OSError:
                return  # a full disk: the supervisor writes what reached the file
            view = view[written:]


def written_part(path: str) -> None:
    """Cut the file a `Rescue` wrote at `path` after its last text (the zeros reserved past
    it, and a text a killed process had begun copying, are gone)."""
    with contextlib.suppress(OSError), open(path, "r+b") as file:
        data = file.read()
        end = data.find(b"\0")
        end = len(data) if end < 0 else end
        end = data.rfind(b"\n", 0, end) + 1
        file.truncate(end)
