"""Between a suite and its run: which cases to grade, and the finished cases in suite order.

`Collector` filters the suite's cases by name (globs), skips the cases already in the results
log (`--resume`), appends each finished case to the log, counts everything into one summary,
and afterwards streams every case of the run (resumed and new) back in suite order. It keeps
one offset per case and never the cases themselves, so a run of millions of cases stays
small in memory.
"""

from __future__ import annotations

import bisect
import threading
from array import array
from collections.abc import Callable, Iterator, Sequence
from fnmatch import fnmatchcase

import attrs

from gradekit.report.jsonl import CaseLog
from gradekit.report.model import CaseReport, Summary, SummaryBuilder
from gradekit.suite.model import Case, Suite

__all__ = ["Collector"]


class Collector:
    """Feeds one run of `suite` and gathers what it produces.

    `log` is the results log (None: keep nothing but the summary); `patterns` are name globs,
    a case is graded when it matches any (none: every case); `on_progress(n)` is told each
    time `n` more cases are done, resumed ones included; the first `keep_failing` cases that
    did not pass are kept for the console.
    """

    def __init__(
        self,
        suite: Suite,
        log: CaseLog | None = None,
        *,
        patterns: Sequence[str] = (),
        on_progress: Callable[[int], None] | None = None,
        keep_failing: int = 20,
    ) -> None:
        self._suite = suite
        self._log = log
        self._patterns = tuple(patterns)
        self._on_progress = on_progress
        self._keep_failing = keep_failing
        self._lock = threading.Lock()
        # Cases already in the log when the run starts: name -> offset of its line.
        self._done: dict[str, int] = {}
        if log is not None:
            for offset, case in log.existing():
                self._done.setdefault(case.name, offset)
        self._offsets = array("q")  # per selected case, in suite order: its line, or -1
        self._pending: dict[str, list[int]] = {}  # name -> ordinals being graded
        self._summary = SummaryBuilder()
        self.selected = 0
        """Cases of the suite that matched the patterns (graded or resumed)."""
        self.resumed = 0
        """Cases taken from the log instead of being graded again."""
        self._failing: list[tuple[int, CaseReport]] = []
        self.more_failing = 0
        """How many more cases did not pass."""

    def suite(self) -> Suite:
        """The suite to run: the same, with only the cases still to grade."""
        narrowed = bool(self._patterns) or bool(self._done)
        return attrs.evolve(
            self._suite,
            cases=self._cases,
            case_count=None if narrowed else self._suite.case_count,
        )

    def _selected(self, case: Case) -> bool:
        return not self._patterns or any(fnmatchcase(case.name, p) for p in self._patterns)

    def _cases(self) -> Iterator[Case]:
        for case in self._suite.cases():
            if not self._selected(case):
                continue
            with self._lock:
                ordinal = len(self._offsets)
                self.selected += 1
                offset = self._done.pop(case.name, None)
                if offset is not None and self._log is not None:
                    self._offsets.append(offset)
                    self.resumed += 1
                    self._count(self._log.read_at(offset), ordinal)
                else:
                    self._offsets.append(-1)
                    self._pending.setdefault(case.name, []).append(ordinal)
                    offset = None
            if offset is None:
                yield case
            elif self._on_progress is not None:
                self._on_progress(1)

    def on_case(self, case: CaseReport) -> None:
        """Record a finished case: append it to the log and count it."""
        offset = self._log.append(case) if self._log is not None else -1
        with self._lock:
            ordinals = self._pending.get(case.name)
            ordinal = len(self._offsets)
            if ordinals:
                ordinal = ordinals.pop(0)
                self._offsets[ordinal] = offset
                if not ordinals:
                    del self._pending[case.name]
            self._count(case, ordinal)
        if self._on_progress is not None:
            self._on_progress(1)

    def _count(self, case: CaseReport, ordinal: int) -> None:
        self._summary.add(case)
        if case.outcome != "pass":
            # Keep the first failing cases in suite order, whatever order they finish in.
            bisect.insort(self._failing, (ordinal, case), key=lambda item: item[0])
            if len(self._failing) > self._keep_failing:
                self._failing.pop()
                self.more_failing += 1

    @property
    def failing(self) -> list[CaseReport]:
        """The first cases (in suite order) that did not pass, at most `keep_failing`."""
        with self._lock:
            return [case for _, case in self._failing]

    def summary(self) -> Summary:
        """The summary of every case of the run so far, resumed ones included."""
        with self._lock:
            return self._summary.build()

    def cases(self) -> Iterator[CaseReport]:
        """Every finished case of the run, in suite order, read back from the log."""
        for log, offset in self._finished():
            yield log.read_at(offset)

    def case_texts(self) -> Iterator[str]:
        """The JSON text of every finished case (as `cases`, without parsing the log's lines:
        for the JSON report, which writes them as they are)."""
        for log, offset in self._finished():
            yield log.line_at(offset).decode().rstrip("\n")

    def _finished(self) -> Iterator[tuple[CaseLog, int]]:
        """The log and the offset of every finished case's line, in suite order."""
        log = self._log
        if log is not None:
            for offset in self._offsets:
                if offset >= 0:
                    yield log, offset
