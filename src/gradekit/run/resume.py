"""Resume: the results log a run skips finished cases from and appends each new one to.

`ResultsLog` is the JSONL log of finished cases (DESIGN.md's `--resume` stream). A run through
it (`run_suite(suite, resume=log)`) takes the cases already in it instead of grading them
again, appends each case it grades as the case ends, and afterwards streams every case of the
run (resumed and new) back in suite order. Per case of the run it keeps an offset and an
outcome (9 bytes), never the case itself, so a run of millions of cases stays small.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import tempfile
import threading
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Final

import attrs

from gradekit.core.errors import WriteError
from gradekit.core.scratch import scratch_prefix, sweep
from gradekit.core.values import utf8
from gradekit.history.case_scores import ReadWatch, key_of_data, outcome_of_data
from gradekit.report.files import target
from gradekit.report.json import (
    OUTCOME_LETTERS,
    CaseLog,
    CaseText,
    CaseTexts,
    FinishedCase,
    case_json,
    not_a_case,
)
from gradekit.report.model import CaseReport
from gradekit.report.summary import SummaryBuilder
from gradekit.suite.model import Case, Suite
from gradekit.suite.selection import Selection

__all__ = ["ResultsLog", "RunIndex"]

_OUTCOMES: Final = {"pass": 1, "fail": 2, "error": 3}
_PENDING: Final = 0


def _no_tick() -> None:
    """A read that shows no progress."""


class ResultsLog:
    """The results log at `path` (JSONL, one finished case a line), opened for runs to resume
    from and append to; `ResultsLog()` is a scratch log in the temp folder, deleted by
    `close()`, for streaming a huge run's cases to reports without holding them in memory
    (`scratch=True` makes the log at `path` one: not fsynced, deleted by `close()`).

    After `run_suite(suite, resume=log)`, `cases()`, `case_texts()` and `failing()` stream
    that run's cases in suite order (resumed ones included), read back from the file.
    `on_resumed(case)` is called with each case taken from the log instead of being graded,
    as the run reaches it, from the thread that reads the suite's cases (keep it quick).

    Raises WriteError when `path` cannot hold a log (a folder, a device, a FIFO; a folder that
    cannot be created), or when another run has it open: one run at a time per log (it holds
    the file's `flock` until `close()`). A file that is not a log raises ConfigError when a
    run starts (`start`), and is left as it was.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        on_resumed: Callable[[CaseReport], object] | None = None,
        scratch: bool = False,
    ) -> None:
        self.on_resumed = on_resumed
        self.only_logged = False
        """True: a run through the log grades nothing; it takes the cases already in the log
        and leaves the others out (the reports of a run ended from outside, written by
        `gradekit.cli.supervise`)."""
        self.on_recorded: Callable[[str], object] | None = None
        """Called with the outcome of each case the run appends, in the thread that appends
        it (the command's progress: it needs no report object)."""
        self.watch: ReadWatch | None = None
        """The progress of reading the cases already in the log, before the run grades
        (`ReportsProgress.reading`); None: silent."""
        self.scratch = path is None or scratch
        if path is None:
            sweep()
            try:
                fd, name = tempfile.mkstemp(prefix=scratch_prefix("log"), suffix=".jsonl")
            except OSError as error:
                raise WriteError(
                    tempfile.gettempdir(),
                    error.strerror or str(error),
                    "point TMPDIR at a folder you can write to",
                    what="a scratch results log in",
                ) from error
            os.close(fd)
            path = name
        target(path)  # a regular file, or none yet (appends go through a symlink)
        try:
            self._log = CaseLog(path, durable=not self.scratch)
        except WriteError:  # another run holds it: said already
            raise
        except OSError as error:
            raise WriteError(
                str(path), error.strerror or str(error), "check the path of the results log"
            ) from error
        self.path: Path = Path(path)
        self._run: RunIndex | None = None

    def start(self, suite: Suite, selection: Selection | None) -> RunIndex:
        """Begin a run of `suite` through this log (`run_suite` calls this)."""
        self._run = RunIndex(suite, selection, self)
        return self._run

    @property
    def case_log(self) -> CaseLog:
        """The file underneath: append, read back."""
        return self._log

    @property
    def resumed(self) -> int:
        """Cases the last run took from the log instead of grading them."""
        return 0 if self._run is None else self._run.resumed

    def cases(self) -> Iterator[CaseReport]:
        """Every finished case of the last run, in suite order, read back from the log."""
        for offset, _ in self._finished():
            yield self._log.read_at(offset)

    def case_texts(self) -> Iterator[str]:
        """The JSON text of every finished case (as `cases`, without parsing the log's lines:
        for the JSON report, which writes them as they are)."""
        for offset, _ in self._finished():
            yield self._log.line_at(offset).decode().rstrip("\n")

    def failing(self) -> Iterator[CaseReport]:
        """The finished cases of the last run that did not pass (failed or errored), in suite
        order; only their lines are read."""
        passed = _OUTCOMES["pass"]
        for offset, outcome in self._finished():
            if outcome != passed:
                yield self._log.read_at(offset)

    def _finished(self) -> Iterator[tuple[int, int]]:
        run = self._run
        if run is not None:
            for ordinal, offset in enumerate(run.offsets):
                if offset >= 0:
                    yield offset, run.outcomes[ordinal]

    def close(self) -> None:
        """Close the file (fsynced); a scratch log is deleted."""
        self._log.close()
        if self.scratch:
            with contextlib.suppress(OSError):
                os.unlink(self._log.path)

    def __enter__(self) -> ResultsLog:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class RunIndex:
    """One run through a results log: which cases are taken from the log and which are
    graded, and where each finished one's line is.

    `suite()` is the suite to grade (only the cases still to grade, selected); `record(p, r)`
    appends the report `r` of the case the runner graded at position `p` of that suite.
    """

    def __init__(self, suite: Suite, selection: Selection | None, log: ResultsLog) -> None:
        self._suite = suite
        self._selection = selection
        self._results = log
        self._log = log.case_log
        self._lock = threading.Lock()
        # Cases already in the log: (name, attempt) -> offset of its line (the first line of
        # that name and attempt index; None for a case of one attempt).
        self._done: dict[tuple[str, int | None], int] = self._index(log)
        self.offsets = array("q")
        """Per case of the run, in suite order: the offset of its line, or -1 until it ends."""
        self.outcomes = bytearray()
        """Per case of the run: 0 until it ends, then 1 passed, 2 failed, 3 errored."""
        self._ordinals = array("q")  # per case the runner grades (its position): its ordinal
        self.summary = SummaryBuilder()
        """The cases taken from the log (the runner counts the ones it grades)."""
        self.selected = 0
        """Cases of the suite the selection kept (graded or resumed)."""
        self.resumed = 0
        """Cases taken from the log instead of being graded again."""
        self.failure: WriteError | None = None
        """Set when a line could not be written: the run must stop."""

    def _index(self, log: ResultsLog) -> dict[tuple[str, int | None], int]:
        """Where each case already in the log is: only its name and attempt are read here
        (each case resumed is read whole once, as the run reaches it)."""
        done: dict[tuple[str, int | None], int] = {}
        watch = log.watch
        with contextlib.nullcontext(_no_tick) if watch is None else watch(str(log.path)) as tick:
            for offset, number, data in self._log.existing_forms():
                tick()
                try:
                    key = key_of_data(data)
                    outcome_of_data(data)
                except (KeyError, TypeError, AttributeError) as error:
                    raise not_a_case(log.path, number, error) from None
                done.setdefault(key, offset)
        return done

    def suite(self) -> Suite:
        """The suite to run: the same, with only the cases still to grade."""
        narrowed = self._selection is not None or bool(self._done)
        return attrs.evolve(
            self._suite,
            cases=self._cases,
            case_count=None if narrowed else self._suite.case_count,
        )

    @property
    def fresh(self) -> bool:
        """Whether every case of the suite is to be graded (no selection, none in the log)."""
        return self._selection is None and not self._done

    def reserve(self, count: int) -> None:
        """Take the next `count` cases of a `fresh` run as read elsewhere, to be graded (a
        Dask worker reads them from the dataset's lines: `gradekit.run.executor.Routed`)."""
        with self._lock:
            ordinal = len(self.offsets)
            self.selected += count
            self.offsets.extend(itertools.repeat(-1, count))
            self.outcomes.extend(itertools.repeat(_PENDING, count))
            self._ordinals.extend(range(ordinal, ordinal + count))

    def _cases(self) -> Iterator[Case]:
        selection, done, log = self._selection, self._done, self._log
        on_resumed = self._results.on_resumed
        for case in self._suite.cases():
            if selection is not None and not selection(case):
                continue
            offset = done.pop((case.name, case.attempt), None) if done else None
            if offset is None and self._results.only_logged:
                continue
            with self._lock:
                ordinal = len(self.offsets)
                self.selected += 1
                if offset is None:
                    self.offsets.append(-1)
                    self.outcomes.append(_PENDING)
                    self._ordinals.append(ordinal)
                else:
                    report = log.read_at(offset)
                    self.offsets.append(offset)
                    self.outcomes.append(_OUTCOMES[report.outcome])
                    self.resumed += 1
                    self.summary.add(report)
            if offset is None:
                yield case
            elif on_resumed is not None:
                on_resumed(report)

    def record(self, position: int, report: CaseReport) -> None:
        """Append the report of the case graded at `position` (of `suite()`) to the log."""
        try:
            offset = self._log.append(report)
        except WriteError as error:
            if self.failure is None:
                self.failure = self._explained(error)
            raise self.failure from error
        with self._lock:
            ordinal = self._ordinals[position]
            self.offsets[ordinal] = offset
            self.outcomes[ordinal] = _OUTCOMES[report.outcome]
        if self._results.on_recorded is not None:
            self._results.on_recorded(report.outcome)

    def record_many(self, items: Sequence[tuple[int, FinishedCase]]) -> int:
        """Append a chunk of finished cases (position in `suite()`, report or texts) to the
        log, in one write; the number of items recorded: all of them, or (a full disk) those
        that fit, the first ones, and `failure` says why the rest were not."""
        rows = list(_case_rows(items))
        lines = [utf8(text) + b"\n" for _, text, _ in rows]
        try:
            offsets = self._log.append_lines(lines)
        except WriteError as error:
            if self.failure is None:
                self.failure = self._explained(error)
            return 0
        with self._lock:
            ordinals, outcomes, kept = self._ordinals, self.outcomes, self.offsets
            for (position, _, outcome), offset in zip(rows, offsets, strict=False):
                ordinal = ordinals[position]
                kept[ordinal] = offset
                outcomes[ordinal] = _OUTCOMES[outcome]
        advance = self._results.on_recorded
        if advance is not None:
            for _, _, outcome in rows[: len(offsets)]:
                advance(outcome)
        broken = self._log.broken
        if broken is not None and self.failure is None:
            self.failure = self._explained(broken)
        if len(offsets) == len(rows):
            return len(items)
        recorded = written = 0
        for _, found in items:  # the items whose every case was written
            written += _case_total(found)
            if written > len(offsets):
                break
            recorded += 1
        return recorded

    def read(self, ordinal: int) -> CaseReport | None:
        """The finished case at `ordinal` (suite order), read back; None if it did not end."""
        offset = self.offsets[ordinal]
        return None if offset < 0 else self._log.read_at(offset)

    def position_ordinals(self) -> array[int]:
        """Per position of `suite()`, the case's ordinal in the run."""
        return self._ordinals

    def _explained(self, error: WriteError) -> WriteError:
        if self._results.scratch:
            hint = (
                "free some space in the temp folder (or point TMPDIR elsewhere); a scratch "
                "log holds the cases while the reports are written"
            )
        else:
            hint = (
                "free some space, then run again with the same log to resume: every case it "
                "holds is kept"
            )
        return WriteError(error.path, error.reason, hint, what="the results log")


def _case_rows(items: Iterable[tuple[int, FinishedCase]]) -> Iterator[tuple[int, str, str]]:
    """(position, text, outcome) of each case of `items`, one by one (the text encoded here
    for a report)."""
    for position, found in items:
        if type(found) is CaseTexts:
            letters = found.outcomes
            for at, line in enumerate(found.lines()):
                yield position + at, line, OUTCOME_LETTERS[letters[at]]
        elif isinstance(found, CaseReport):
            yield position, case_json(found), found.outcome
        else:
            assert isinstance(found, CaseText)
            yield position, found.text, found.outcome


def _case_total(found: FinishedCase) -> int:
    """The number of cases `found` holds."""
    return len(found.outcomes) if type(found) is CaseTexts else 1
