"""`dataset:` cases from a JSONL file, streamed one line at a time.

The file is never read whole: `cases()` reads a line, builds its case and yields it, so a run of
millions of lines holds one line at a time. A malformed line becomes an errored Case naming the
file and line, and the lines after it go on. Grader entries repeated on many lines are created
once and reused (cached by the entry as written).
"""

from __future__ import annotations

import collections
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

import attrs

from gradekit.core.errors import ConfigError, Problem, format_path
from gradekit.registry.entries import GraderEntry
from gradekit.registry.peers import PeerWarnings
from gradekit.suite.cases import CaseBuilder, case_name
from gradekit.suite.jsonline import DatasetAttempts, LineError, parse_line
from gradekit.suite.model import Case
from gradekit.suite.parse import EntryMaker, KeyPath, describe

__all__ = ["Dataset", "EntryCache", "problem_text", "survey"]

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
        with path.open("rb") as file:
            for number, line in enumerate(file, start=1):
                if not line.isspace():
                    count += 1
                    graded = graded or b"graders" in line or b"\\u" in line
                    names.add(line, number)
        return count, graded, names.repeated
    except OSError:
        return None, True, []


_PLAIN_NAME: Final = re.compile(rb'(?:\xef\xbb\xbf)?[ \t]*\{[ \t]*"name"[ \t]*:[ \t]*"([^"\\]+)"')
"""A line opening with its name, free of escapes (the first key of the line's object)."""


class _Names:
    """The names of a dataset's lines as `survey` reads them, and those repeated."""

    def __init__(self, label: str, taken: Mapping[str, str]) -> None:
        self._label = label
        self._taken = taken
        self._first: dict[str, tuple[int, bool]] = {}  # name -> (first line, has attempts)
        self.repeated: list[tuple[int, str]] = []

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
                    yield self._case(line, number, attempts)

    def _case(self, line: bytes, number: int, attempts: DatasetAttempts) -> Case:
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


def _error(name: str, where: str, message: str, attempt: int | None = None) -> Case:
    return Case(name, (), location=where, error=f"{where}: {message}", attempt=attempt)
