"""A run in JSON: a plain value's text, a case's JSON, the JSON report and the `--resume`
results log (JSON Lines), written by one writer.

A plain value's JSON text, on one line: orjson's when it is installed (`gradekit[fast]`),
the standard library's otherwise.

Both write the same data. orjson writes no space after `:` and `,`, and floats' exponents
without padding (`1e-05` is `1e-5`); it is several times faster at a case's text, which is
most of what a streamed run writes (bench/RESULTS.md). A value orjson cannot write (an
integer beyond 64 bits, a mapping key that is not text) is written by the standard library,
which writes such keys as text. `GRADEKIT_JSON=stdlib` in the environment chooses the
standard library even where orjson is installed.

The JSON report of DESIGN.md, streamed case by case and written atomically.

The keys come in this order: `suite`, `cases`, then what only the end of a run knows
(`passed`, `complete`, `duration_ms`, `summary`, ...), so that a run can write its cases
into the report as they end (`gradekit.run.stream`) and the summary last.

The `--resume` log: one finished case a line, appended and made durable as each case ends.

A run killed at any point leaves every finished case in the file, and at worst one partial
last line (the kill landed mid-write). Opening the log again ignores and cuts that partial
line, so its case is graded again; every complete line is a case that is never graded again.
The cut is made only once every complete line has been read as a case and the partial one
starts as a case's line does: a file that is not a log is never modified.

One run at a time per log: a durable log holds an advisory lock (`flock`) on the file while it
is open, and a second opening raises WriteError saying another run holds it. Lines are strict
JSON (NaN and Infinity are refused, a UTF-8 BOM opening the file is skipped), nested within
what the decoder can read, and at most `MAX_CASE_BYTES` long (`gradekit.report.files`).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, BinaryIO, Final, NamedTuple, TypeAlias, cast

import attrs

from gradekit.core.errors import ConfigError, WriteError
from gradekit.core.values import utf8
from gradekit.report.files import MAX_CASE_BYTES, atomic_text, open_regular, too_long
from gradekit.report.model import CaseReport, Outcome, SuiteReport

__all__ = [
    "CHOICE_VARIABLE",
    "OUTCOME_LETTERS",
    "STDLIB_WRITER",
    "CaseLog",
    "CaseText",
    "CaseTexts",
    "FinishedCase",
    "case_json",
    "json_head",
    "json_tail",
    "json_text",
    "json_writer",
    "line_reader",
    "not_a_case",
    "read_case_forms",
    "read_cases",
    "write_json",
]


CHOICE_VARIABLE: Final = "GRADEKIT_JSON"
"""The environment variable that chooses the writer: `stdlib` for the standard library."""

STDLIB_WRITER: Final[Callable[[Any], str]] = json.JSONEncoder(ensure_ascii=False).encode
"""The standard library's writer (`json.dumps(value, ensure_ascii=False)`, one encoder)."""

_chosen: Callable[[Any], str] | None = None


def json_writer() -> Callable[[Any], str]:
    """The function that writes a value's JSON text: orjson's, or the standard library's.

    Chosen once, on the first call (orjson is imported only then)."""
    global _chosen  # noqa: PLW0603 - chosen once, read at every call
    if _chosen is None:
        _chosen = _choose()
    return _chosen


def _orjson() -> ModuleType | None:
    """orjson, where it is installed and `GRADEKIT_JSON=stdlib` does not set it aside."""
    if os.environ.get(CHOICE_VARIABLE) == "stdlib":
        return None
    try:
        import orjson
    except ImportError:
        return None
    return orjson


def _choose() -> Callable[[Any], str]:
    orjson = _orjson()
    if orjson is None:
        return STDLIB_WRITER
    dumps, refused = orjson.dumps, orjson.JSONEncodeError

    def orjson_text(value: Any) -> str:
        try:
            text: str = dumps(value).decode()
            return text
        except refused:
            return STDLIB_WRITER(value)

    return orjson_text


def line_reader() -> Callable[[str], Any] | None:
    """orjson's `loads` where orjson is installed and not set aside by `GRADEKIT_JSON=stdlib`,
    else None. It reads a report's one-line cases faster than the standard library
    (bench/RESULTS.md); `report_stream` gives the standard library's decoder what it
    refuses or would read otherwise."""
    orjson = _orjson()
    if orjson is None:
        return None
    loads: Callable[[str], Any] = orjson.loads
    return loads


def json_text(value: Any) -> str:
    """`value`'s JSON text on one line (see the module's docstring for which writer)."""
    return json_writer()(value)


def json_head(suite: str) -> str:
    """The report's text before its first case."""
    return '{"suite": ' + json.dumps(suite, ensure_ascii=False) + ', "cases": ['


def json_tail(report: SuiteReport) -> str:
    """The report's text after its last case: every key but `suite` and `cases`."""
    header = attrs.evolve(report, cases=(), stored_summary=report.summary).to_dict()
    del header["suite"], header["cases"]
    return "\n], " + json.dumps(header, ensure_ascii=False)[1:] + "\n"


def write_json(
    report: SuiteReport,
    path: str | os.PathLike[str],
    cases: Iterable[CaseReport | str] | None = None,
) -> None:
    """Write `report` as JSON to `path` (temp file in the same folder, fsync, rename).

    `cases` replaces `report.cases` when given: a huge run streams its cases from the JSONL
    log instead of holding them in memory; `report.summary` must then count those cases. An
    item may be the case's JSON text as the log holds it (`case_json`), written as it is.
    """
    with atomic_text(path) as out:
        out.write(json_head(report.suite))
        first = True
        marks = report.baseline  # each case with its mark against the baseline, if any
        for case in report.cases if cases is None else cases:
            out.write("\n  " if first else ",\n  ")
            text = case if isinstance(case, str) else case_json(case)
            out.write(text if marks is None else marks.mark_text(text))
            first = False
        out.write(json_tail(report))


def case_json(case: CaseReport) -> str:
    """The JSON text of one case, on one line: a line of the log, an item of the JSON report
    (`json_text(case.to_dict())`: orjson's text when it is installed). The one writer of a
    case's text."""
    return json_text(case.to_dict())


class CaseText(NamedTuple):
    """A finished case that comes as its text alone (`case_json` of its report, written where
    it was graded: a Dask worker), with its outcome and what a baseline matches it by (its
    name and attempt index)."""

    text: str
    outcome: Outcome
    name: str
    attempt: int | None

    def report(self) -> CaseReport:
        """The case's report, read back from its text (as `--resume` reads a log's line)."""
        data: Any = json.loads(self.text)
        return CaseReport.from_dict(data)


OUTCOME_LETTERS: Final[dict[str, Outcome]] = {"p": "pass", "f": "fail", "e": "error"}
"""The outcome of a case by its letter (`CaseTexts.outcomes`)."""


class CaseTexts(NamedTuple):
    """Finished cases, consecutive in the run, that come as one text, one case a line
    (`case_json` of each report, written where they were graded: a Dask worker), with their
    outcomes, a letter a case (`OUTCOME_LETTERS`). Handed over at the position of the first;
    the others follow it."""

    text: str
    outcomes: str

    def lines(self) -> list[str]:
        """Each case's text."""
        return self.text.split("\n")

    def reports(self) -> list[CaseReport]:
        """The cases' reports, read back from their texts."""
        return [CaseReport.from_dict(json.loads(line)) for line in self.lines()]


FinishedCase: TypeAlias = "CaseReport | CaseText | CaseTexts"
"""Finished cases as a run hands them over: a case's report, or only its text, or the texts
of several (`CaseTexts`)."""


def _parse(
    line: bytes, path: Path, number: int, loads: Callable[[str], Any] | None = None
) -> CaseReport:
    return _case_of(_parsed(line, path, number, loads), path, number)


def _case_of(data: dict[str, Any], path: Path, number: int) -> CaseReport:
    try:
        return CaseReport.from_dict(data)
    except (ValueError, TypeError, KeyError) as error:
        raise not_a_case(path, number, error) from error


_BOM: Final = b"\xef\xbb\xbf"
_LOCK_WAIT: Final = 2.0  # seconds a held lock is waited for (see `CaseLog._hold`)
_NOT_READ: Final = object()
_LINE_START: Final = b'{"name":'
"""How every line gradekit writes starts (`case_json`: the name is the first key)."""


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (a log gradekit writes never holds it)")


_STRICT: Final = json.JSONDecoder(parse_constant=_constant)


def _parsed(
    line: bytes, path: Path, number: int, loads: Callable[[str], Any] | None = None
) -> dict[str, Any]:
    """The JSON object of a log's line, strict; `loads`: orjson's (`line_reader()`), if any."""
    data: Any = _NOT_READ
    if loads is not None:
        # orjson refuses NaN, Infinity and nesting past 1,024 itself; what it refuses is read
        # again by the standard library, for its message (or a lone surrogate it accepts).
        try:  # noqa: SIM105 - a try costs less than a suppress() per line
            data = cast("Callable[[bytes], Any]", loads)(line)  # orjson reads bytes too
        except ValueError:
            pass
    if data is _NOT_READ:
        try:
            data = _STRICT.decode(line.decode("utf-8"))
        except RecursionError:
            deep = ValueError("nested too deep for a case (lists or objects inside each other)")
            raise not_a_case(path, number, deep) from None
        except ValueError as error:
            raise not_a_case(path, number, error) from error
    if not isinstance(data, dict):
        wrong = TypeError(f"expected a JSON object, got {type(data).__name__}")
        raise not_a_case(path, number, wrong)
    return data


def not_a_case(path: Path, number: int, error: Exception) -> ConfigError:
    """The error of line `number` of the log at `path`, which is not a finished case."""
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
    loads = line_reader()
    with open_regular(file) as stream:
        number = 0
        while line := stream.readline(MAX_CASE_BYTES + 1):
            number += 1
            if len(line) > MAX_CASE_BYTES:
                raise too_long(file, number)
            if not line.endswith(b"\n"):
                return
            start = offset
            offset += len(line)
            if start == 0 and line.startswith(_BOM):  # an editor's mark, not the case's text
                start, line = len(_BOM), line[len(_BOM) :]
            if line.strip():
                yield start, number, _parsed(line, file, number, loads)


def _partial_line(path: Path, start: int) -> bytes:
    """The partial last line of the log at `path`, from `start` (at most what tells it)."""
    with open(path, "rb") as stream:
        stream.seek(start)
        head = stream.read(len(_BOM) + len(_LINE_START))
    return head.removeprefix(_BOM) if start == 0 else head


def _a_cut_case(head: bytes) -> bool:
    """Whether a partial last line starting with `head` is a case's line cut short."""
    return head.startswith(_LINE_START) or _LINE_START.startswith(head)


def _newlines(path: Path, end: int) -> int:
    """How many newlines the first `end` bytes of `path` hold."""
    count = 0
    with open(path, "rb") as stream:
        while end > 0:
            chunk = stream.read(min(end, 1 << 20))
            if not chunk:
                break
            count += chunk.count(b"\n")
            end -= len(chunk)
    return count


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
        # Unbuffered: a line is in the file once `append` returns, and nothing of a line that
        # failed stays in a buffer to be written later.
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o666)
        try:
            if durable:
                self._hold()
            size = os.fstat(self._fd).st_size
            # Up to the last newline: a partial line after it is cut once the file is known
            # to be a log (`_settle`), never before.
            self._end = _complete_length(self.path) if size else 0
            self._settled = self._end == size
            self._in: BinaryIO = open(self.path, "rb")  # noqa: SIM115 (closed by close())
        except BaseException:
            os.close(self._fd)
            raise
        self._broken: WriteError | None = None
        self._syncer = _Syncer(self._fd) if durable else None
        self._loads = line_reader()

    def _hold(self) -> None:
        """Take the log's lock, or raise WriteError: another run holds it (still after
        `_LOCK_WAIT` seconds: a run killed with the command that supervised it, by a SIGKILL
        to their process group, may end a moment after the command)."""
        deadline = time.monotonic() + _LOCK_WAIT
        while True:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except OSError as error:
                if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                    return  # a file system without locks: the run goes on unguarded, as before
            if time.monotonic() >= deadline:
                raise WriteError(
                    str(self.path),
                    "another gradekit run is using it (it holds the log's lock)",
                    "wait for that run to end, or give this run another --resume file",
                    what="the results log",
                )
            time.sleep(0.02)

    def existing(self) -> Iterator[tuple[int, CaseReport]]:
        """`(offset, case)` for every case already in the file when it was opened; once
        they are all read, a partial last line is cut."""
        yield from read_cases(self.path)
        self._settle(checked=True)

    def existing_forms(self) -> Iterator[tuple[int, int, dict[str, Any]]]:
        """`(offset, line number, JSON form)` of every case already in the file (as
        `read_case_forms`); once they are all read, a partial last line is cut."""
        yield from read_case_forms(self.path)
        self._settle(checked=True)

    def _settle(self, *, checked: bool) -> None:
        """Cut the partial last line, once every complete line is known to be a case
        (`checked`: they were just read) and the partial one starts as a case's line does;
        ConfigError, the file untouched, when it does not."""
        if self._settled:
            return
        if not checked:
            for _ in read_case_forms(self.path):
                pass
        head = _partial_line(self.path, self._end)
        if not _a_cut_case(head):
            number = 1 + _newlines(self.path, self._end)
            raise not_a_case(
                self.path, number, ValueError("the last line is neither a case nor one cut short")
            )
        size = os.fstat(self._fd).st_size
        if size - self._end > MAX_CASE_BYTES:
            raise too_long(self.path, 1 + _newlines(self.path, self._end))
        os.ftruncate(self._fd, self._end)
        self._settled = True

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
            self._settle(checked=False)
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
        line = self.line_at(offset)
        try:
            return _parse(line, self.path, 0, self._loads)
        except ConfigError:  # named by its line, counted only now (offsets are what is kept)
            return _parse(line, self.path, 1 + _newlines(self.path, offset), self._loads)

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
