"""`dataset:` cases from a JSONL file, streamed one line at a time.

The file is never read whole: `cases()` reads a line, builds its case and yields it, so a run of
millions of lines holds one line at a time. A malformed line becomes an errored Case naming the
file and line, and the lines after it go on. Grader entries repeated on many lines are created
once and reused (cached by the entry as written).

Each line is checked as it streams by: strict JSON (`parse_line`) and its `attempt` index
(`DatasetAttempts`: each case name's attempts numbered 0, 1, 2 ... in file order; see
`gradekit.suite.load` for what attempts are).

The JSON is strict: no NaN or Infinity, no number too large for a float, no
key twice in an object, no value nested past the suite file's limit, no integer past Python's;
each refusal a message for an errored case, never an exception that ends the run.

Python's `json` module accepts `NaN`, reads `1e999` as infinity without a word and keeps the
last of two equal keys (JSON has none of these), and a line nested deep enough raises
RecursionError from the decoder itself.

Imports the core, `gradekit.registry.entries`, and `cases`, `located_yaml`, `model` and `parse`
of this package.
"""

from __future__ import annotations

import collections
import itertools
import json
import math
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

import attrs

from gradekit.core.errors import ConfigError, Problem, format_path
from gradekit.core.values import overflow_problem
from gradekit.registry.entries import GraderEntry, PeerWarnings
from gradekit.suite.cases import CaseBuilder, case_name
from gradekit.suite.located_yaml import MAX_DEPTH, MAX_INT_DIGITS, too_deep
from gradekit.suite.model import Case, EntryMaker, KeyPath, describe, json_error

__all__ = [
    "Dataset",
    "DatasetAttempts",
    "EntryCache",
    "FileCases",
    "LineError",
    "file_lines",
    "parse_line",
    "problem_text",
    "survey",
]

CHUNK: Final = 1 << 20
# Counting a bigger file before the run would cost a noticeable pass over it.
MAX_COUNTED_BYTES: Final = 1 << 30
CACHE_SIZE: Final = 1024


def survey(
    path: Path, label: str = "", taken: Mapping[str, str] | None = None
) -> tuple[int | None, bool, list[tuple[int, str]]]:
    """(the number of non-blank lines of `path` or None when too costly, whether some line may
    give `graders`, the lines that repeat a case's name): one pass over the bytes. A line that
    spells a key with an escape (`\\u...`) may give graders too.

    A name is repeated when it is one of `taken` (the suite file's cases: name -> where), or
    an earlier line's that gives no `attempt` (the attempts of one case share its name, each
    line giving its `attempt`; their numbering is checked as the lines are read). Each is
    (line number, message naming both places, `label:line`). A name is read from the line's
    text when it opens the line plainly (`{"name": "...",` as JSON writers put it), else
    from the parsed line; a line that does not parse is left to be an errored case."""
    try:
        if path.stat().st_size > MAX_COUNTED_BYTES:
            return None, True, []
        count = 0
        graded = False
        names = _Names(label, taken or {})
        number = 0  # the lines read so far
        rest = b""
        with path.open("rb") as file:
            while True:
                chunk = file.read(CHUNK)
                block = rest + chunk
                cut = block.rfind(b"\n") + 1 if chunk else len(block)
                block, rest = block[:cut], block[cut:]
                graded = graded or b"graders" in block or b"\\u" in block
                found = names.add_plain(block, number + 1)
                if found is None:
                    for line in file_lines(block):
                        number += 1
                        if not line.isspace():
                            count += 1
                            names.add(line, number)
                else:
                    count += found
                    number += found
                if not chunk:
                    break
        return count, graded, names.repeated
    except OSError:
        return None, True, []


def file_lines(blob: bytes) -> list[bytes]:
    """The lines of `blob` as a file's lines are read (split after each newline alone, each
    keeping its newline; the last one, if it has none, as it is)."""
    texts = blob.split(b"\n")
    lines = [text + b"\n" for text in texts[:-1]]
    if texts[-1]:
        lines.append(texts[-1])
    return lines


_PLAIN_NAME: Final = re.compile(rb'(?:\xef\xbb\xbf)?[ \t]*\{[ \t]*"name"[ \t]*:[ \t]*"([^"\\]+)"')
"""A line opening with its name, free of escapes (the first key of the line's object)."""

_PLAIN_NAMES: Final = re.compile(
    rb'^(?:\xef\xbb\xbf)?[ \t]*\{[ \t]*"name"[ \t]*:[ \t]*"([^"\\\n]+)"', re.MULTILINE
)
"""`_PLAIN_NAME` at the start of each line of a block of lines."""


class _Names:
    """The names of a dataset's lines as `survey` reads them, and those repeated."""

    def __init__(self, label: str, taken: Mapping[str, str]) -> None:
        self._label = label
        self._taken = taken
        self._first: dict[str, tuple[int, bool]] = {}  # name -> (first line, has attempts)
        self.repeated: list[tuple[int, str]] = []

    def add_plain(self, block: bytes, first: int) -> int | None:
        """Add the names of `block`, whole lines from line number `first`, all at once when
        every line opens plainly with its name (so none is blank) and none gives an attempt:
        the number of lines; else None (add them one by one)."""
        if not block:
            return 0
        lines = block.count(b"\n") + (not block.endswith(b"\n"))
        if b'"attempt"' in block:
            return None
        found = _PLAIN_NAMES.findall(block)  # at most one a line
        if len(found) != lines:
            return None
        try:  # no name holds a newline: one decoding for all
            names = b"\n".join(found).decode("utf-8").split("\n")
        except UnicodeDecodeError:
            names = []
        seen = self._first
        if (
            len(names) == lines
            and len(set(names)) == lines
            and seen.keys().isdisjoint(names)
            and self._taken.keys().isdisjoint(names)
        ):  # no name repeated: each noted at its line, none with attempts
            numbers = range(first, first + lines)
            seen.update(
                zip(names, zip(numbers, itertools.repeat(False, lines), strict=True), strict=True)
            )
            return lines
        for number, raw in enumerate(found, start=first):
            try:
                name = raw.decode("utf-8")
            except UnicodeDecodeError:
                continue  # an errored case, named by its line
            self._note(name, number, attempts=False)
        return lines

    def add(self, line: bytes, number: int) -> None:
        plain = _PLAIN_NAME.match(line)
        if plain is not None and b'"attempt"' not in line:
            try:
                name = plain.group(1).decode("utf-8")
            except UnicodeDecodeError:
                return  # an errored case, named by its line
            attempts = False
        else:
            try:
                raw = parse_line(line)
            except LineError:
                return
            if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
                return  # named by its line: unique
            name, attempts = case_name(raw, ""), "attempt" in raw
            if not name:
                return
        self._note(name, number, attempts=attempts)

    def _note(self, name: str, number: int, *, attempts: bool) -> None:
        also = self._taken.get(name)
        first = self._first.get(name)
        if also is None and first is not None and not first[1]:
            also = f"{self._label}:{first[0]}"
        if also is not None:
            self.repeated.append(
                (
                    number,
                    f"duplicate case name '{name}' (also at {also}); give each case its own "
                    "name (the lines of one case's attempts each give their 'attempt')",
                )
            )
        elif first is None:
            self._first[name] = (number, attempts)


def problem_text(problem: Problem) -> str:
    """`path: message`, naming the key's parent when the message names the key itself."""
    path = problem.path
    if problem.key and path and isinstance(path[-1], str):
        path = path[:-1]
    inside = format_path(path, "")
    return f"{inside}: {problem.message}" if inside else problem.message


class EntryCache:
    """Creates grader entries through `make_entry`, reusing one per distinct configuration.

    Keyed by the entry as written (its repr); failures are cached too, so a bad entry on a
    million lines is created once. Bounded: the least recently used configuration goes first.
    """

    def __init__(self, make_entry: EntryMaker, size: int = CACHE_SIZE) -> None:
        self._make_entry = make_entry
        self._size = size
        self._cache: collections.OrderedDict[str, GraderEntry | ConfigError | None] = (
            collections.OrderedDict()
        )

    def __call__(self, raw: Any, path: KeyPath) -> GraderEntry | None:
        """The entry for `raw` (found at `path`), created on first sight."""
        # repr is exact for JSON data (it tells 1, 1.0 and true apart) and much cheaper than
        # canonical JSON; the same entry written with its keys in another order only misses.
        key = repr(raw)
        if key in self._cache:
            self._cache.move_to_end(key)
            found = self._cache[key]
        else:
            try:
                found = self._make_entry(raw, path)
            except ConfigError as error:
                found = error
            self._cache[key] = found
            if len(self._cache) > self._size:
                self._cache.popitem(last=False)
        if isinstance(found, ConfigError):
            raise found
        return found


@attrs.frozen
class Dataset:
    """The JSONL file at `path`, written `label` in the suite (case names and errors use it)."""

    path: Path
    label: str
    builder: CaseBuilder
    taken: Mapping[str, str] = attrs.field(factory=dict)
    """YAML case names and their locations: a dataset case may not reuse one."""
    warnings: PeerWarnings = attrs.field(factory=PeerWarnings)
    """Where the peer frameworks' keys that lines use are first seen (see `_peers`)."""

    def cases(self) -> Iterator[Case]:
        """Every case of the file, in order, one line read at a time."""
        attempts = DatasetAttempts()
        try:
            file = self.path.open("rb")
        except OSError as error:
            message = f"{self.label}: cannot read the dataset: {os.strerror(error.errno or 0)}"
            yield Case(self.label, (), location=self.label, error=message)
            return
        with file:
            for number, line in enumerate(file, start=1):
                if not line.isspace():
                    yield self.case_at(line, number, attempts)

    def case_at(self, line: bytes, number: int, attempts: DatasetAttempts) -> Case:
        """The case of `line`, line `number` of the file (not blank), its attempt index
        checked by `attempts` (those of the lines before it in the same pass): what `cases()`
        gives for it. A Dask worker builds the lines it is sent with this too."""
        where = f"{self.label}:{number}"
        default = where
        try:
            raw = parse_line(line)
        except LineError as error:
            return _error(default, where, str(error))
        if not isinstance(raw, dict):
            shown = describe(raw)
            shown = shown if len(shown) <= 200 else shown[:199] + "…"
            message = f"a dataset line must be a JSON object (one case), got {shown}"
            return _error(default, where, message)
        name = case_name(raw, default)
        attempt, wrong = attempts.take(raw, name, where)
        if wrong is not None:
            return _error(name, where, wrong)
        if name in self.taken:
            message = (
                f"duplicate case name '{name}' (also at {self.taken[name]}); "
                "give each case its own name"
            )
            # Named by its line: under the YAML case's name, it would take that case's place
            # in `--resume` logs, baselines and comparisons.
            return _error(where, where, message, attempt)
        peers: list[Problem] = []
        case, problems = self.builder.build(raw, name=name, location=where, warnings=peers)
        for peer in peers:
            self.warnings.add(str(peer.path[-1]), f"{where}: {peer.message}")
        if case is None:
            return _error(name, where, "; ".join(problem_text(p) for p in problems), attempt)
        return case if attempt is None else attrs.evolve(case, attempt=attempt)


@attrs.frozen
class FileCases:
    """The cases of a suite file, in order (a loaded suite's `cases`): `before`, the YAML
    cases; then the lines of `dataset`; then `traces`' cases (`TraceCases`). A Dask run whose
    suite has a dataset and no traces sends the dataset's lines as they are, and its workers
    build their cases (`Dataset.case_at`)."""

    before: tuple[Case, ...]
    dataset: Dataset | None
    traces: Any = None

    def __call__(self) -> Iterator[Case]:
        yield from self.before
        if self.dataset is not None:
            yield from self.dataset.cases()
        if self.traces is not None:
            yield from self.traces.cases()


def _error(name: str, where: str, message: str, attempt: int | None = None) -> Case:
    return Case(name, (), location=where, error=f"{where}: {message}", attempt=attempt)


class LineError(ValueError):
    """The line is not a JSON value gradekit reads; the message says what to fix."""


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise LineError(f"the key {key!r} is written twice in one object; keep one")
            seen.add(key)
    return found


def _constant(name: str) -> Any:
    raise LineError(f"{name} is not JSON; write a number, null or a string")


class _Overflowed(Exception):
    """The line holds a number too large for a float: decoded again to find its key."""


def _float(text: str) -> float:
    number = float(text)
    if math.isinf(number):
        raise _Overflowed
    return number


class _Overflow(str):
    """A number too large for a float, as written, in the line decoded again to name its key."""


def _marked_float(text: str) -> Any:
    number = float(text)
    return _Overflow(text) if math.isinf(number) else number


_DECODER: Final = json.JSONDecoder(
    object_pairs_hook=_unique, parse_constant=_constant, parse_float=_float
)
_MARKING_DECODER: Final = json.JSONDecoder(
    object_pairs_hook=_unique, parse_constant=_constant, parse_float=_marked_float
)


def parse_line(line: bytes) -> Any:
    """The JSON value of `line`; LineError with what to fix when it is not one we read."""
    try:
        text = line.decode("utf-8").removeprefix("\ufeff")  # a BOM opens the first line
    except UnicodeDecodeError:
        raise LineError("the line is not UTF-8 text; save the file as UTF-8") from None
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as error:
        raise LineError(f"invalid JSON: {json_error(error)}; fix this line") from None
    except RecursionError:
        raise LineError(too_deep()) from None
    except LineError:
        raise
    except _Overflowed:
        raise _overflow_error(_MARKING_DECODER.decode(text)) from None
    except ValueError as error:  # Python 3.11+: an integer past its digit limit
        if "digits" in str(error):
            raise LineError(
                f"an integer of more than {MAX_INT_DIGITS} digits; write it as a string"
            ) from None
        raise LineError(f"invalid JSON: {error}; fix this line") from None
    # A line with few brackets cannot nest deeply: only count them exactly when it might.
    if line.count(b"[") + line.count(b"{") > MAX_DEPTH and _depth(value) > MAX_DEPTH:
        raise LineError(too_deep())
    return value


def _overflow_error(value: Any) -> LineError:
    """The error naming the key and the text of the first number of `value` (decoded by
    `_MARKING_DECODER`) too large for a float."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if isinstance(item, _Overflow):
            return LineError(
                f"{format_path(path)}: {overflow_problem(item)}; write a smaller number, or a "
                "string to keep it as text"
            )
        if isinstance(item, dict):
            children: list[tuple[Any, tuple[str | int, ...]]] = [
                (child, (*path, key)) for key, child in item.items()
            ]
        elif isinstance(item, list):
            children = [(child, (*path, index)) for index, child in enumerate(item)]
        else:
            continue
        stack.extend(reversed(children))
    return LineError(overflow_problem("in this line"))  # not reached: the decoder found one


def _depth(value: Any) -> int:
    """How many lists and objects deep `value` nests (iteratively: no recursion limit)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children)
    return deepest


@attrs.define
class DatasetAttempts:
    """The `attempt` indexes of one pass over a dataset: each case name's attempts must be
    numbered 0, 1, 2 ... in file order, and a name with attempts has one on every line."""

    _last: dict[str, tuple[int, str]] = attrs.field(factory=dict)

    def take(self, raw: dict[str, Any], name: str, where: str) -> tuple[int | None, str | None]:
        """Remove `attempt` from the line `raw` (at `where`, `file:line`) and return (its
        index, None), or (None, the message of what is wrong with it)."""
        if "attempt" not in raw:
            if name in self._last:
                return None, (
                    f"case '{name}' has attempts (the last at {self._last[name][1]}), so this "
                    "line must give its 'attempt' index too"
                )
            return None, None
        index = raw.pop("attempt")
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            return None, f"attempt: expected a whole number from 0, got {describe(index)}"
        last, at = self._last.get(name, (-1, ""))
        if index <= last:
            said = "also at" if index == last else f"after attempt {last} at"
            return None, (
                f"attempt: attempt {index} of case '{name}' is given twice or out of order "
                f"({said} {at}); number each case's attempts 0, 1, 2 ... in file order"
            )
        if index != last + 1:
            missing = f"attempt {last + 1}" if index == last + 2 else f"attempts {last + 1}-"
            missing += "" if index == last + 2 else str(index - 1)
            before = f"attempt {last} is at {at}" if last >= 0 else "it is the first"
            return None, (
                f"attempt: attempt {index} of case '{name}' leaves a gap: {missing} missing "
                f"({before}); number each case's attempts 0, 1, 2 ... in file order"
            )
        self._last[name] = (index, where)
        return index, None
