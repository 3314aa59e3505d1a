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

`Marks` is the other thing the supervisor reads: a map shared with it where each thread of the
lane marks the grade it begins (which case, turn and grader, since when, its timeout). When
the run stops running Python code, the supervisor finds the thread using the CPU (`running`),
reads its mark, and abandons that grade once it is past its timeout: the grade's case is
recorded timed out (`gradekit.cli.supervise.stuck_case`) in the log the run goes on from (`gather`).
"""

from __future__ import annotations

import contextlib
import fcntl
import mmap
import os
import struct
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Final, NamedTuple

from gradekit.core.values import utf8
from gradekit.history.case_scores import key_of_data
from gradekit.registry.entries import GraderEntry, Isolation
from gradekit.registry.plugins import BUILTIN_KINDS
from gradekit.report.json import CaseText, FinishedCase, case_json
from gradekit.report.model import CaseReport
from gradekit.suite.model import Case, Suite

__all__ = [
    "CHUNK",
    "Mark",
    "Marks",
    "Rescue",
    "gather",
    "may_hold_the_gil",
    "running",
    "written_part",
]

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
    `written_part`. `marks`: the grades in progress, shared with the supervisor. Where the file
    cannot be mapped (`fd` not open for reading and writing),
    or its space not reserved, each text is written with `os.write`."""

    def __init__(self, fd: int, *, replace: bool = False, marks: Marks | None = None) -> None:
        self.fd = fd
        self.replace = replace
        self.marks = marks
        """Where the run's lane marks each grade it begins, for the supervisor (`Marks`)."""
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


_MARK: Final = struct.Struct("<qqqiidd")
"""A mark: the thread's native id, its case's name hash and attempt (-1: none), the turn's
and the grader's index, when the grade began (`time.monotonic`) and its timeout."""

_SLOTS: Final = 256
"""Threads that may mark at once (the lane's: one, and one per stalled grade, up to `jobs`)."""


class Mark(NamedTuple):
    """A grade in progress, as its thread marked it in `Marks` (see `_MARK`)."""

    thread: int
    name_hash: int
    attempt: int | None
    turn: int
    grader: int
    started: float
    seconds: float

    def of(self, case: Case) -> bool:
        """Whether this is a grade of `case` (its name's hash is this process's, and so the
        forked run's)."""
        return hash(case.name) == self.name_hash and case.attempt == self.attempt


class Marks:
    """A map shared with the processes forked after it is made, where each thread that
    grades cases of the lane marks the grade it begins (`begin`), one slot per thread: what
    the supervisor reads (`read`) when the run has stopped running Python code."""

    def __init__(self) -> None:
        self._map = mmap.mmap(-1, _SLOTS * _MARK.size)  # anonymous, shared with the children
        self._slots: dict[int, int] = {}  # a thread's native id -> its slot
        self._lock = threading.Lock()

    def begin(self, case: Case, turn: int, grader: int, seconds: float) -> None:
        """Mark the grade this thread begins: grader `grader` of turn `turn` of `case`."""
        thread = threading.get_native_id()
        slot = self._slots.get(thread)
        if slot is None:
            slot = self._claim(thread)
            if slot is None:
                return
        attempt = -1 if case.attempt is None else case.attempt
        _MARK.pack_into(
            self._map,
            slot * _MARK.size,
            thread,
            hash(case.name),
            attempt,
            turn,
            grader,
            time.monotonic(),
            seconds,
        )

    def _claim(self, thread: int) -> int | None:
        with self._lock:
            if len(self._slots) >= _SLOTS:  # the slots of threads that ended are free again
                alive = {other.native_id for other in threading.enumerate()}
                for gone in [tid for tid in self._slots if tid not in alive]:
                    start = self._slots.pop(gone) * _MARK.size
                    self._map[start : start + _MARK.size] = bytes(_MARK.size)
            used = set(self._slots.values())
            slot = next((n for n in range(_SLOTS) if n not in used), None)
            if slot is not None:
                self._slots[thread] = slot
            return slot

    def read(self) -> list[Mark]:
        """The grades marked (each thread's last)."""
        marks = []
        for slot in range(_SLOTS):
            thread, name_hash, attempt, *rest = _MARK.unpack_from(self._map, slot * _MARK.size)
            if thread:
                marks.append(Mark(thread, name_hash, None if attempt < 0 else attempt, *rest))
        return marks

    def clear(self) -> None:
        """Forget every mark (before the next run is forked)."""
        self._map[:] = bytes(len(self._map))


def running(pid: int, *, seconds: float = 0.2) -> set[int]:
    """The thread of process `pid` that ran the most in the next `seconds` (its CPU time),
    when it ran a tenth of them at least, and any that ran half as much: a thread looping in
    C holding the GIL, the others waiting for it use none (Linux: empty elsewhere)."""
    before = _cpu_times(pid)
    time.sleep(seconds)
    after = _cpu_times(pid)
    gained = {thread: after[thread] - before[thread] for thread in after if thread in before}
    most = max(gained.values(), default=0)
    if most < seconds * os.sysconf("SC_CLK_TCK") / 10:
        return set()
    return {thread for thread, ticks in gained.items() if ticks * 2 >= most}


def _cpu_times(pid: int) -> dict[int, int]:
    """The CPU time (clock ticks, user and system) of each thread of process `pid`."""
    times = {}
    with contextlib.suppress(OSError):
        for name in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                with open(f"/proc/{pid}/task/{name}/stat", "rb") as file:
                    stat = file.read()
                fields = stat[stat.rindex(b")") + 2 :].split()  # after the name: the state on
                times[int(name)] = int(fields[11]) + int(fields[12])  # utime, stime
    return times


Key = tuple[str, int | None]


def logged(path: str) -> Iterator[tuple[Key, bytes]]:
    """The `(name, attempt)` and the text of each whole line of the log at `path`, read as
    they are asked for (a killed run's file: a line it did not finish, and the zeros a
    `Rescue` reserved past its last text, are no lines)."""
    import json

    with contextlib.suppress(OSError), open(path, "rb") as file:
        for line in file:
            if not line.endswith(b"\n"):
                continue
            with contextlib.suppress(ValueError, KeyError, TypeError, AttributeError):
                yield key_of_data(json.loads(line)), line


def gather(rescued: str, log: str, stuck: CaseReport | None = None) -> None:
    """Append to the log at `log` the cases of the `Rescue` file `rescued` (of a killed run,
    cut by `written_part`; it may be the log itself) it lacks, then `stuck` unless it holds
    it: the log then holds every case that finished, to resume from. A line the killed run
    left unfinished is cut first."""
    keys = {key for key, _ in logged(log)}
    with contextlib.suppress(OSError), open(log, "r+b") as file:
        end = file.seek(0, os.SEEK_END)
        while end:  # back to the last newline
            start = max(0, end - 4096)
            file.seek(start)
            block = file.read(end - start)
            newline = block.rfind(b"\n")
            if newline >= 0:
                end = start + newline + 1
                break
            end = start
        file.truncate(end)
        file.seek(end)
        if rescued != log:
            for key, line in logged(rescued):
                if key not in keys:
                    keys.add(key)
                    file.write(line)
        if stuck is not None and (stuck.name, stuck.attempt) not in keys:
            file.write(utf8(case_json(stuck) + "\n"))
