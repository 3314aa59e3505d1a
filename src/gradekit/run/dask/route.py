"""The cases a Dask run's driver sends, read from the suite (`CaseSource`): built cases, or
a dataset's lines as the file holds them (`LineBatch`), which the workers build.

A run that grades every case of a suite file into texts alone (`gradekit run -o`, see
`gradekit.run.executor.Routed`) reads its dataset here as bytes: lines are counted (each line
not blank is a case, its position the next one) and sent in blobs, never parsed; each worker
builds the cases of its lines with the suite loader's own `Dataset.case_at`. The suite
file's own cases, before the dataset, are sent built, as every case of any other run is.

The one thing a line's case depends on beyond the line is its `attempt` index, checked
against the lines before it of the same name (`DatasetAttempts`). From the first blob that may
give one (`attempt` in its bytes, or an escaped ASCII letter, which could spell it), the rest
of the file is built here and sent built: until then no line gave an attempt, so the check
starts from nothing, as it does in a local run.

Imports `gradekit.suite`, `gradekit.run.executor` (`Routed`), `collect` (`entry_kinds`) and
`pack` of this package.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import IO, Final, NamedTuple

from gradekit.run.collect import entry_kinds
from gradekit.run.executor import Routed
from gradekit.suite.dataset import Dataset, DatasetAttempts, file_lines
from gradekit.suite.model import Case, Suite

__all__ = ["CaseSource", "LineBatch", "line_cases"]

_MAY_ATTEMPT: Final = re.compile(rb"attempt|\\u00[67]")
"""Bytes of a blob whose lines may give an `attempt` (the key plainly, or a letter escaped)."""


class LineBatch(NamedTuple):
    """Dataset lines sent as the file holds them: `lines` from line number `first` (blank
    lines included), holding `total` cases, the first at position `start` of the run."""

    start: int
    total: int
    first: int
    lines: bytes


def line_cases(
    dataset: Dataset, first: int, lines: bytes, attempts: DatasetAttempts | None = None
) -> list[Case]:
    """The cases of the dataset's `lines` (as the file holds them, from line number `first`),
    built as `Dataset.cases()` builds them, their attempts checked by `attempts` (a batch
    sent as lines gives none): what a worker builds of a `LineBatch`."""
    checked = DatasetAttempts() if attempts is None else attempts
    numbered = enumerate(file_lines(lines), start=first)
    return [dataset.case_at(line, n, checked) for n, line in numbered if not line.isspace()]


class CaseSource:
    """The cases of `suite` to send, in order, `size` at a time (`take`): built (with their
    positions), or, with `routed`, the dataset's lines (`LineBatch`) where they can be."""

    def __init__(self, suite: Suite, routed: Routed | None) -> None:
        self._routed = routed
        self._cases: Iterator[Case] | None = iter(
            suite.cases() if routed is None else routed.cases.before
        )
        self._position = 0
        self._file: IO[bytes] | None = None
        self._number = 0  # the line number of the last line read
        self._attempts: DatasetAttempts | None = None  # once lines are built here
        self._opened = False  # the dataset was opened (or found unreadable)

    def take(self, size: int) -> list[tuple[int, Case]] | LineBatch | None:
        """Up to `size` cases: built, or a batch of lines; None once there are no more."""
        while True:
            if self._cases is not None:
                cases = self._built(self._cases, size)
                if cases:
                    return cases
                self._cases = None
                if self._opened or not self._open():
                    return None
                if self._cases is not None:  # the dataset could not be read: its case
                    continue
            assert self._routed is not None and self._routed.cases.dataset is not None
            batch = self._lines(size)
            if batch is None:
                return None
            if self._attempts is None and _MAY_ATTEMPT.search(batch.lines) is None:
                self._routed.reserve(batch.total)
                self._position += batch.total
                return batch
            return self._built_lines(self._routed.cases.dataset, batch)

    def close(self) -> None:
        """Close the dataset file (if open)."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def _built(self, cases: Iterator[Case], size: int) -> list[tuple[int, Case]]:
        found: list[tuple[int, Case]] = []
        for case in cases:
            found.append((self._position, case))
            self._position += 1
            if len(found) >= size:
                break
        if self._routed is not None:  # cases built here: their kinds noted here
            self._routed.reserve(len(found))
            kinds: set[str] = set()
            for _, case in found:
                for turn in case.turns:
                    entry_kinds(turn.graders, kinds)
            self._routed.note_kinds(kinds)
        return found

    def _open(self) -> bool:
        """Open the dataset after the suite file's cases; False without one. A file that
        cannot be read gives the loader's errored case for it."""
        dataset = None if self._routed is None else self._routed.cases.dataset
        if dataset is None:
            return False
        self._opened = True
        try:
            self._file = dataset.path.open("rb")
        except OSError:
            self._cases = dataset.cases()  # the loader's one case saying why, and no more
        return True

    def _lines(self, size: int) -> LineBatch | None:
        file = self._file
        if file is None:
            return None
        lines = []
        count = 0
        first = self._number + 1
        for line in file:
            lines.append(line)
            if not line.isspace():
                count += 1
                if count >= size:
                    break
        self._number += len(lines)
        if not count:
            self.close()
            return None
        return LineBatch(self._position, count, first, b"".join(lines))

    def _built_lines(self, dataset: Dataset, batch: LineBatch) -> list[tuple[int, Case]]:
        if self._attempts is None:
            self._attempts = DatasetAttempts()
        cases = line_cases(dataset, batch.first, batch.lines, self._attempts)
        return self._built(iter(cases), len(cases))
