"""The `--resume` log: one finished case a line, appended and made durable as each case ends.

A run killed at any point leaves every finished case in the file, and at worst one partial
last line (the kill landed mid-write). Opening the log again ignores and cuts that partial
line, so its case is graded again; every complete line is a case that is never graded again.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from gradekit._errors import ConfigError, WriteError
from gradekit._utf8 import utf8
from gradekit.report.json_text import json_text
from gradekit.report.model import CaseReport

__all__ = ["CaseLog", "case_json", "read_case_forms", "read_cases"]


def case_json(case: CaseReport) -> str:
    """The JSON text of one case, on one line: a line of the log, an item of the JSON report
    (`json_text(case.to_dict())`: orjson's text when it is installed)."""
    return json_text(case.to_dict())


def _parse(line: bytes, path: Path, number: int) -> CaseReport:
    return _case_of(_parsed(line, path, number), path, number)


def _case_of(data: dict[str, Any], path: Path, number: int) -> CaseReport:
    try:
        return CaseReport.from_dict(data)
    except (ValueError, TypeError, KeyError) as error:
        raise _not_a_case(path, number, error) from error


def _parsed(line: bytes, path: Path, number: int) -> dict[str, Any]:
    try:
        data: Any = json.loads(line)
    except ValueError as error:
        raise _not_a_case(path, number, error) from error
    if not isinstance(data, dict):
        wrong = TypeError(f"expected a JSON object, got {type(data).__name__}")
        raise _not_a_case(path, number, wrong)
    return data


def _not_a_case(path: Path, number: int, error: Exception) -> ConfigError:
    return ConfigError(
        f"{path}:{number}: not a finished case ({type(error).__name__}: {error}); "
        "this file is not a gradekit results log, or was edited: delete the line (its "
        "case is graded again) or give another --resume file"
    )


def read_cases(path: str | os.PathLike[str]) -> Iterator[tuple[int, CaseReport]]:
    """Yield `(byte offset, case)` for every complete line of the log at `path`.

    A last line without its newline is a write cut short by a kill: it is ignored. Any other
    line that is not a case report raises ConfigError naming the file and line.
    """
    file = Path(path)
    for offset, number, data in read_case_forms(file):
        yield offset, _case_of(data, file, number)


def read_case_forms(path: str | os.PathLike[str]) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """`(byte offset, line number, JSON form)` of every complete line of the log at `path`,
    as `read_cases` reads them, the forms not made into case reports."""
    file = Path(path)
    offset = 0
    with open(file, "rb") as stream:
        for number, line in enumerate(stream, start=1):
            if not line.endswith(b"\n"):
                return
            if line.strip():
                yield offset, number, _parsed(line, file, number)
            offset += len(line)


def _complete_length(path: Path) -> int:
    """The length of the file up to and including its last newline."""
    with open(path, "rb") as stream:
        size = stream.seek(0, os.SEEK_END)
        position = size
        while position > 0:
            step = min(65536, position)
            position -= step
            stream.seek(position)
            chunk = stream.read(step)
            newline = chunk.rfind(b"\n")
            if newline >= 0:
                return position + newline + 1
        return 0


class _Syncer:
    """fsyncs a file in the background as soon as new lines are written.

    Every finished case is on disk within one fsync of its end, without making the run wait
    for the disk after each case (an fsync costs about as much as grading a simple case).
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._dirty = threading.Event()
        self._stop = False
        self._thread = threading.Thread(target=self._loop, name="gradekit-fsync", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while True:
            self._dirty.wait()
            self._dirty.clear()
            self._sync()
            if self._stop:
                return

    def _sync(self) -> None:
        # A pipe or a character device cannot be synced; there is nothing to do for them.
        with contextlib.suppress(OSError):
            os.fsync(self._fd)

    def mark(self) -> None:
        """Ask for an fsync of everything written so far."""
        self._dirty.set()

    def close(self) -> None:
        """Sync what is left and stop the thread."""
        self._stop = True
        self._dirty.set()
        self._thread.join()
        self._sync()


class CaseLog:
    """An append-only JSONL file of finished cases (`CaseReport.to_dict()`, one a line).

    Opening cuts a partial last line. `existing()` reads the cases already there;
    `append(case)` writes one line (`append_many(cases)` one line each, in one write), has
    it fsynced in the background, and returns its offset; `read_at(offset)` reads a case
    back, so a huge run keeps offsets, not cases, in memory.
    `durable=False` skips fsync (for a scratch log that is deleted after the run).

    A line that cannot be written whole (a full disk) is taken back: the file is cut to the
    lines before it, so it stays a log to resume from, and `append` raises WriteError, then
    and for every later line.
    """

    def __init__(self, path: str | os.PathLike[str], *, durable: bool = True) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists():
            length = _complete_length(self.path)
            if length != self.path.stat().st_size:
                os.truncate(self.path, length)
        # Unbuffered: a line is in the file once `append` returns, and nothing of a line that
        # failed stays in a buffer to be written later.
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o666)
        self._end = os.fstat(self._fd).st_size
        self._broken: WriteError | None = None
        self._in: BinaryIO = open(self.path, "rb")  # noqa: SIM115 (closed by close())
        self._syncer = _Syncer(self._fd) if durable else None

    def existing(self) -> Iterator[tuple[int, CaseReport]]:
        """`(offset, case)` for every case already in the file when it was opened."""
        return read_cases(self.path)

    def append(self, case: CaseReport) -> int:
        """Write `case` as one line; return the offset where the line starts."""
        offsets = self.append_lines([utf8(case_json(case)) + b"\n"])
        if not offsets:
            assert self._broken is not None
            raise self._broken
        return offsets[0]

    def append_many(self, cases: Sequence[CaseReport]) -> list[int]:
        """Write `cases` as one line each, in one write; the offsets of the lines written
        (see `append_lines`)."""
        return self.append_lines([utf8(case_json(case)) + b"\n" for case in cases])

    def append_lines(self, lines: Sequence[bytes]) -> list[int]:
        """Write `lines` (each a case's JSON text and a newline) in one write, fsynced in the
        background; the offset where each starts.

        When the write fails (a full disk) it is taken back and the lines are written one at
        a time, as many as fit: their offsets are returned, fewer than the lines, the file
        ends with the last whole line, and the log is broken from then on (`broken`). Raises
        the WriteError when the log was broken already."""
        with self._lock:
            if self._broken is not None:
                raise self._broken
            start = self._end
            offsets = []
            offset = start
            for line in lines:
                offsets.append(offset)
                offset += len(line)
            try:
                self._write(b"".join(lines))
            except OSError:
                with contextlib.suppress(OSError):
                    os.ftruncate(self._fd, start)
                offsets = self._one_by_one(lines, start)
            else:
                self._end = offset
        if self._syncer is not None:
            self._syncer.mark()
        return offsets

    def _one_by_one(self, lines: Sequence[bytes], start: int) -> list[int]:
        offsets: list[int] = []
        offset = start
        for line in lines:
            try:
                self._write(line)
            except OSError as error:
                with contextlib.suppress(OSError):
                    os.ftruncate(self._fd, offset)
                self._broken = WriteError(
                    str(self.path), error.strerror or str(error), "check the disk"
                )
                break
            offsets.append(offset)
            offset += len(line)
        self._end = offset
        return offsets

    def _write(self, data: bytes) -> None:
        written = os.write(self._fd, data)
        while written < len(data):
            written += os.write(self._fd, data[written:])

    @property
    def broken(self) -> WriteError | None:
        """Why a line could not be written, once one could not (no line is written after)."""
        return self._broken

    def read_at(self, offset: int) -> CaseReport:
        """The case whose line starts at `offset`."""
        return _parse(self.line_at(offset), self.path, 0)

    def line_at(self, offset: int) -> bytes:
        """The line that starts at `offset`, with its newline (the case's JSON text)."""
        with self._lock:
            self._in.seek(offset)
            return self._in.readline()

    def close(self) -> None:
        """fsync and close the file."""
        if self._syncer is not None:
            self._syncer.close()
        with contextlib.suppress(OSError):
            os.close(self._fd)
        self._in.close()

    def __enter__(self) -> CaseLog:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
