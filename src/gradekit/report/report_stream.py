"""A JSON report read a case at a time: its top-level object key by key, its `cases` list
one item at a time, in chunks of the file.

Reading a report whole (`json.loads` of its text) holds the text and every case's objects at
once, several times the file's size, and most of the time goes to allocating them
(bench/RESULTS.md, "A run against its baseline at scale"). Here only the chunk in hand and
the case being decoded are held, whatever the report's size, and any JSON layout is read
(one case a line as gradekit writes it, indented, or all on one line; keys in any order).
Each value is decoded by the standard library's decoder, so the values are those
`json.loads` gives.

Opened `fast`, where orjson is installed (`json_text.line_reader`), a case that fills the rest
of its line, as gradekit writes them, is read by orjson instead, faster: a JSON
object is self-delimiting, so if that text is one object, it is the object the standard
library would read there. A line orjson refuses (`NaN`, a lone surrogate) is read by the
standard library. One value differs: orjson reads an integer past 64 bits as a float. So
`fast` is for readers of what such an integer never is (a case's name, outcome and scores:
`--baseline`, `--rerun-failed`, `compare`), not for reading whole cases back.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, Final, NoReturn

from gradekit.core.errors import ConfigError
from gradekit.report.files import MAX_CASE_BYTES, open_regular
from gradekit.report.json import line_reader, read_case_forms

__all__ = ["CHUNK", "JsonReport", "case_forms", "open_report"]

CHUNK: Final = 1 << 20
"""Characters read from the file at a time (more when one value is longer)."""

_SPACE: Final = re.compile(r"[ \t\n\r]*")
_DECODE: Final = json.JSONDecoder().raw_decode
_NUMBERS: Final = (int, float)
_IN_NUMBERS: Final = frozenset("0123456789.eE+-")
_NO_VALUE: Final = object()


class _NotAReport(Exception):
    """The file is not a JSON object with a `cases` list (a results log, say)."""


class JsonReport:
    """A JSON report open for reading (see `open_report`): `head` holds its top-level keys
    but `cases`: those before the cases from the start, every one once `cases()` has been
    read to its end."""

    def __init__(
        self,
        path: Path,
        file: IO[str],
        chunk: int = CHUNK,
        line_loads: Callable[[str], Any] | None = None,
    ) -> None:
        self.path: Final = path
        self._line_loads = line_loads
        self.head: dict[str, Any] = {}
        self._file = file
        self._chunk = chunk
        self._text = ""
        self._at = 0  # position in `_text`
        self._line = 1  # the line `_text` starts on
        self._column = 0  # characters of that line before `_text`
        self._ended = False  # the file has no more to read
        self._started = False
        self._slow_until = 0  # no case before this position in `_text` fills its line
        self._read_head()

    def cases(self) -> Iterator[Any]:
        """Each item of the report's `cases` list, in order; then the rest of the report is
        read into `head`. A report cut short or damaged is a ConfigError naming the place."""
        if self._started:
            raise RuntimeError("a report's cases can be read once")
        self._started = True
        if self._skip_space() == "]":
            self._at += 1
        else:
            loads = self._line_loads
            while True:
                found = _NO_VALUE if loads is None else self._whole_line(loads)
                yield self._value() if found is _NO_VALUE else found
                after = self._next()
                if after == "]":
                    break
                if after != ",":
                    self._fail("expected ',' or ']' after a case", self._at - 1)
        after = self._next()
        if after == ",":
            self._pairs(until_cases=False)
        elif after != "}":
            self._fail("expected ',' or '}' after the cases", self._at - 1)
        if self._skip_space() != "":
            self._fail("text after the end of the report")

    def _read_head(self) -> None:
        """Up to the first item of `cases`; _NotAReport when the file is not a report. A
        file whose first key is `suite`, as gradekit writes a report, is one: its damage is
        an error naming the place."""
        if self._next() != "{" or self._skip_space() == "}":
            raise _NotAReport
        try:
            found = self._pairs(until_cases=True)
        except ConfigError:
            if next(iter(self.head), None) == "suite":
                raise
            raise _NotAReport from None
        if not found:  # the object ended without a `cases` list
            raise _NotAReport

    def _pairs(self, *, until_cases: bool) -> bool:
        """The object's key-value pairs into `head`, up to its `}` (False), or up to the `[`
        of `cases` when `until_cases` (True)."""
        while True:
            if self._skip_space() != '"':
                self._fail("expected a key")
            key = self._value()
            if self._next() != ":":
                self._fail("expected ':' after a key", self._at - 1)
            if until_cases and key == "cases" and self._skip_space() == "[":
                self._at += 1
                return True
            self.head[key] = self._value()
            after = self._next()
            if after == "}":
                return False
            if after != ",":
                self._fail("expected ',' or '}' after a value", self._at - 1)

    def _next(self) -> str:
        """The next character but whitespace, taken ("" at the end of the file)."""
        found = self._skip_space()
        self._at += 1
        return found

    def _value(self) -> Any:
        """The JSON value at the position (after whitespace), read in as many chunks as it
        takes."""
        self._skip_space()
        while True:
            text, at = self._text, self._at
            try:
                value, end = _DECODE(text, at)
            except json.JSONDecodeError as error:
                if self._ended:
                    self._fail(error.msg, error.pos)
                if len(text) - at > MAX_CASE_BYTES:
                    self._fail(f"a value longer than {MAX_CASE_BYTES >> 20} MiB")
                self._more()
                continue
            except RecursionError:
                self._fail("a value nested too deep (lists or objects inside each other)")
            # A number may go on in the next chunk ("10" of "10.5", "1" of "1e-3"): read on
            # until a character that cannot be part of it follows (or the file ends).
            if (
                not self._ended
                and type(value) in _NUMBERS
                and (end == len(text) or text[end] in _IN_NUMBERS)
            ):
                self._more()
                continue
            self._at = end
            return value

    def _whole_line(self, loads: Callable[[str], Any]) -> Any:
        """The object at the position read by `loads` when it fills the rest of its line
        (but a `,` after it); _NO_VALUE when it does not, or `loads` refuses it."""
        if self._skip_space() != "{" or self._at < self._slow_until:
            return _NO_VALUE
        text, at = self._text, self._at
        end = text.find("\n", at)
        if end < 0:  # the line goes on past this chunk: not looked for again before then
            self._slow_until = len(text)
            return _NO_VALUE
        while text[end - 1] in " \t\r":
            end -= 1
        if text[end - 1] == ",":
            end -= 1
        try:
            value = loads(text[at:end])
        except ValueError:  # not one case (several on the line, say): the rest of it slowly
            self._slow_until = end
            return _NO_VALUE
        self._at = end
        return value

    def _skip_space(self) -> str:
        """Skip whitespace; the next character ("" at the end of the file)."""
        while True:
            self._at = _SPACE.match(self._text, self._at).end()  # type: ignore[union-attr]
            if self._at < len(self._text):
                return self._text[self._at]
            if self._ended:
                return ""
            self._more()

    def _more(self) -> None:
        """Read the next chunk (at least as long as what is held: a long value is read in
        a few reads, not one per chunk)."""
        wanted = max(self._chunk, len(self._text) - self._at)
        try:
            more = self._file.read(wanted)
        except UnicodeDecodeError as error:
            self._fail(f"not UTF-8 text: {error.reason} at byte {error.start} of a chunk")
        if not more:
            self._ended = True
            return
        done = self._at
        self._line, column = self._where(done)
        self._column = column - 1
        self._text = self._text[done:] + more
        self._at = 0
        self._slow_until = max(0, self._slow_until - done)

    def _where(self, at: int) -> tuple[int, int]:
        """The line and column (from 1) in the file of position `at` of `_text`."""
        text = self._text
        newline = text.rfind("\n", 0, at)
        line = self._line + text.count("\n", 0, at)
        return line, at - newline if newline >= 0 else self._column + at + 1

    def _fail(self, problem: str, at: int | None = None) -> NoReturn:
        line, column = self._where(self._at if at is None else at)
        raise ConfigError(
            f"{self.path}:{line}:{column}: not a complete JSON report ({problem}); give a "
            "JSON report (gradekit run -o) or a results log (--resume), whole"
        )


@contextlib.contextmanager
def open_report(
    path: str | Path, chunk: int = CHUNK, *, fast: bool = False
) -> Iterator[JsonReport | None]:
    """In a `with`: the JSON report at `path` open for reading a case at a time, or None
    when the file is not a JSON object holding a `cases` list (a results log, say). A file
    that cannot be read is a ConfigError naming it. `fast`: read a case on a line of its own
    with orjson where it is installed, an integer past 64 bits then read as a float (see the
    module's docstring)."""
    where = Path(path)
    # Only a regular file (a FIFO, a device, a folder: ConfigError naming it); a BOM is skipped.
    file = io.TextIOWrapper(open_regular(where), encoding="utf-8-sig")
    with file:
        try:
            report: JsonReport | None = JsonReport(
                where, file, chunk, line_reader() if fast else None
            )
        except _NotAReport:
            report = None
        yield report


def case_forms(
    path: str | Path, heads: list[Mapping[str, Any]] | None = None, *, fast: bool = False
) -> Iterator[Any]:
    """The JSON forms of the cases of a run's file, one at a time: the items of a JSON report
    (`open_report`) or the complete lines of a results log. Once every case is read, a JSON
    report's other keys (`environment`, ...) are appended to `heads` when given. `fast`: as
    `open_report`'s."""
    with open_report(path, fast=fast) as report:
        if report is not None:
            yield from report.cases()
            if heads is not None:
                heads.append(report.head)
            return
    for _, _, data in read_case_forms(path):
        yield data
