"""The cases of a run without a results log, streamed to its reports in suite order.

`gradekit run -o report.json` without `--resume` needs every case once, in suite order, in
its reports, and nothing after: no log to resume from. A `CaseStream` takes the place of the
results log in such a run (`run_suite(suite, outputs=Outputs(stream=stream))`): each case is encoded
once, put back in suite order (cases finish out of order, but never more than the run's
window of cases in flight apart), and its text is written, a chunk at a time, straight into
the JSON report's temporary file (`cases` first, the summary after, when it is known). Only
when another report (JUnit, Markdown, HTML) needs the cases too are the texts also spooled to
a scratch file, read back once by those writers. The first cases that did not pass are kept
for the console. So memory stays bounded by the window, whatever the number of cases.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any, Final

import attrs

from gradekit.core.errors import WriteError
from gradekit.core.scratch import scratch_prefix, sweep
from gradekit.core.values import utf8
from gradekit.history.baseline import BaselineTally, with_mark
from gradekit.report.files import atomic_text
from gradekit.report.github import MAX_ANNOTATIONS
from gradekit.report.json import (
    OUTCOME_LETTERS,
    CaseText,
    CaseTexts,
    FinishedCase,
    case_json,
    json_head,
    json_tail,
)
from gradekit.report.model import CaseReport, SuiteReport
from gradekit.report.summary import SummaryBuilder
from gradekit.suite.model import Case, Suite
from gradekit.suite.selection import Selection

__all__ = ["FAILING_KEPT", "CaseStream"]

FAILING_KEPT: Final = max(20, MAX_ANNOTATIONS)
"""The cases that did not pass kept for the console (it lists the first 20) and for GitHub's
annotations (the first `MAX_ANNOTATIONS`)."""

_PASSED: Final = bytes(int(code == ord("p")) for code in range(256))
"""Outcome letters to the flags of `_passes` (1 for a case that passed)."""

WRITE_BYTES: Final = 1 << 20
"""Case texts are written once this many characters are waiting: few writes (each one lets
another thread take the GIL, and waiting for it back costs up to its switch interval)."""


class CaseStream:
    """Where a run without a results log sends its finished cases: the JSON report at
    `json_path` (written as the cases end, finished by `write_json`), and a scratch spool when
    `spool` (other reports read the cases back from it with `cases()`).

    Use it as a context manager: leaving it without `write_json` leaves no report behind.
    """

    def __init__(self, json_path: str | os.PathLike[str] | None, *, spool: bool) -> None:
        self.on_resumed: Callable[[CaseReport], object] | None = None  # nothing is resumed
        self.on_recorded: Callable[..., object] | None = None
        """Called with the outcome of each case taken (and a count, for several cases of one
        outcome), in the thread that takes it (the command's progress: it needs no report
        object)."""
        self.summary = SummaryBuilder()  # of the cases resumed: none
        self.selected = 0
        self.resumed = 0
        self.failure: WriteError | None = None
        """Always None: nothing here stops a run (a report that cannot be written is one
        failure among the reports, after the run)."""
        self._spool_failure: WriteError | None = None
        self._json_path = json_path
        self._json: IO[str] | None = None
        self._json_context: contextlib.AbstractContextManager[IO[str]] | None = None
        self._json_failure: WriteError | None = None
        self._first = True
        self._spool: IO[bytes] | None = None
        self._spool_path: str | None = None
        if spool:
            sweep()
            try:
                fd, self._spool_path = tempfile.mkstemp(
                    prefix=scratch_prefix("spool"), suffix=".jsonl"
                )
            except OSError as error:
                raise WriteError(
                    tempfile.gettempdir(),
                    error.strerror or str(error),
                    "point TMPDIR at a folder you can write to",
                    what="a scratch file of the cases in",
                ) from error
            self._spool = os.fdopen(fd, "w+b")
        self.tally: BaselineTally | None = None
        """The marks against the run's baseline (set by `run_suite`): each case is counted
        and written with its mark."""
        self._suite: Suite | None = None
        # position: (text, passed), or the texts of the cases from there on
        self._pending: dict[int, tuple[str, bool] | CaseTexts] = {}
        self._failing_pending: dict[int, FinishedCase] = {}
        self._next = 0
        self._failing: list[CaseReport] = []
        self._passes = bytearray()  # in the order written: 1 for a case that passed
        self._waiting: list[str] = []  # texts in order, not written yet
        self._waiting_size = 0

    # -- the run (Collection) ----------------------------------------------------------------

    def start(self, suite: Suite, selection: Selection | None) -> CaseStream:
        """Begin the run of `suite` (`run_suite` calls this); the report file is opened."""
        self._suite = suite
        self._selection = selection
        if self._json_path is not None:
            self._json_context = atomic_text(self._json_path)
            self._json = self._json_context.__enter__()
            self._write_json_text(json_head(suite.name))
        return self

    def suite(self) -> Suite:
        """The suite to run: the selected cases (counted)."""
        assert self._suite is not None
        if self._selection is None:
            return self._suite
        return attrs.evolve(self._suite, cases=self._selected_cases, case_count=None)

    def _selected_cases(self) -> Iterator[Case]:
        assert self._suite is not None and self._selection is not None
        selection = self._selection
        for case in self._suite.cases():
            if selection(case):
                self.selected += 1
                yield case

    def record_many(self, items: Sequence[tuple[int, FinishedCase]]) -> int:
        """Take a chunk of finished cases (position in `suite()`, report or text): encoded
        once, and written out in suite order as soon as every case before them has ended; the
        number taken (all)."""
        pending, failing = self._pending, self._failing_pending
        keep_failing = len(self._failing) < FAILING_KEPT
        tally, advance = self.tally, self.on_recorded
        outcome: str
        for position, report in items:
            if type(report) is CaseTexts:  # a batch's cases, written as they came
                assert tally is None  # a baseline reads each case: its runs get no batches
                pending[position] = report
                letters = report.outcomes
                if advance is not None:
                    for letter, outcome in OUTCOME_LETTERS.items():
                        count = letters.count(letter)
                        if count:
                            advance(outcome, count)
                if keep_failing and letters.count("p") != len(letters):
                    failing[position] = report
                continue
            if type(report) is CaseText:
                text, outcome = report.text, report.outcome
                if tally is not None:  # read for its scores: only a run with a baseline
                    text = with_mark(text, tally.add_text(text, position))
            else:
                assert isinstance(report, CaseReport)
                text, outcome = case_json(report), report.outcome
                if tally is not None:
                    text = with_mark(text, tally.add(report, position))
            pending[position] = (text, outcome == "pass")
            if advance is not None:
                advance(outcome)
            if keep_failing and outcome != "pass":
                failing[position] = report
        if self._next in pending:
            self._drain()
        return len(items)

    def record(self, position: int, report: CaseReport) -> None:
        """Take one finished case (see `record_many`)."""
        self.record_many(((position, report),))

    def _drain(self) -> None:
        """Write out the pending cases that follow the last one written without a gap."""
        pending, failing = self._pending, self._failing_pending
        texts = []
        position = self._next
        while position in pending:
            found = pending.pop(position)
            report = failing.pop(position, None)
            if isinstance(found, CaseTexts):
                texts.append(found.text)
                self._passes += found.outcomes.encode().translate(_PASSED)
                if report is not None:
                    self._keep_failing(found)
                position += len(found.outcomes)
                continue
            text, passed = found
            texts.append(text)
            self._passes.append(passed)
            if report is not None and len(self._failing) < FAILING_KEPT:
                if not isinstance(report, CaseReport):
                    assert isinstance(report, CaseText)
                    report = report.report()  # a text: read back (20 cases at most)
                self._failing.append(report)
            position += 1
        self._next = position
        if texts:
            self._waiting.extend(texts)
            self._waiting_size += sum(map(len, texts))
            if self._waiting_size >= WRITE_BYTES:
                self._flush()

    def _keep_failing(self, found: CaseTexts) -> None:
        """Keep the first cases of `found` that did not pass (read back: 20 at most)."""
        lines = found.lines()
        for at, letter in enumerate(found.outcomes):
            if len(self._failing) >= FAILING_KEPT:
                return
            if letter != "p":
                self._failing.append(CaseReport.from_dict(json.loads(lines[at])))

    def _flush(self) -> None:
        texts, self._waiting, self._waiting_size = self._waiting, [], 0
        if texts:
            self._write_texts(texts)

    def _finish_pending(self) -> None:
        """After the run: the cases that ended after a gap (a stopped run), in order."""
        pending = self._pending
        for position in sorted(pending):
            if position in pending:
                self._next = position
                self._drain()
        self._flush()

    def _write_texts(self, texts: list[str]) -> None:
        # One case a line (a batch's texts are several lines): no case's text holds a newline.
        joined = "\n".join(texts)
        if self._json is not None:
            lead = "\n  " if self._first else ",\n  "
            self._first = False
            self._write_json_text(lead + joined.replace("\n", ",\n  "))
        if self._spool is not None and self._spool_failure is None:
            try:
                self._spool.write(utf8(joined + "\n"))
            except OSError as error:
                # The reports that read the cases back fail (each its own WriteError).
                self._spool_failure = WriteError(
                    str(self._spool_path),
                    error.strerror or str(error),
                    "free some space in the temp folder (or point TMPDIR elsewhere); a "
                    "scratch file holds the cases while the reports are written",
                    what="the scratch file of the cases",
                )

    def _write_json_text(self, text: str) -> None:
        if self._json is None or self._json_failure is not None:
            return
        try:
            self._json.write(text)
        except OSError as error:
            self._json_failure = WriteError(
                str(self._json_path), error.strerror or str(error), "check the disk"
            )
            self._discard_json()

    # -- after the run -----------------------------------------------------------------------

    def write_json(self, report: SuiteReport) -> list[WriteError]:
        """Finish the JSON report with what only the end of the run knows (the summary,
        `passed`, `complete`, ...) and put it in place; its failure, if any."""
        self._finish_pending()
        if self._json is None:
            return [] if self._json_failure is None else [self._json_failure]
        self._write_json_text(json_tail(report))
        context, self._json, self._json_context = self._json_context, None, None
        if self._json_failure is None and context is not None:
            try:
                context.__exit__(None, None, None)
            except WriteError as error:
                self._json_failure = error
        return [] if self._json_failure is None else [self._json_failure]

    def failing(self) -> Iterator[CaseReport]:
        """The cases that did not pass, in suite order: every one when the cases are spooled
        (read back, the passing ones skipped unparsed), else the first FAILING_KEPT."""
        self._finish_pending()
        if self._spool is None or self._spool_failure is not None:
            return iter(self._failing)
        return self._spooled_failing()

    def _spooled_failing(self) -> Iterator[CaseReport]:
        passes = self._passes
        for written, line in enumerate(self._rewound()):
            if not passes[written]:
                yield CaseReport.from_dict(json.loads(line))

    def cases(self) -> Iterator[CaseReport]:
        """Every finished case in suite order, read back from the spool (see `spool`)."""
        self._finish_pending()
        for line in self._rewound():
            data: Any = json.loads(line)
            yield CaseReport.from_dict(data)

    def case_texts(self) -> Iterator[str]:
        """Every finished case's JSON text in suite order (from the spool)."""
        self._finish_pending()
        for line in self._rewound():
            yield line.decode().rstrip("\n")

    def _rewound(self) -> IO[bytes]:
        """The spool, flushed and back at its first case (every reading starts there)."""
        spool = self._spool
        if spool is None:
            raise RuntimeError("the cases were not spooled: CaseStream(..., spool=True)")
        if self._spool_failure is not None:
            raise self._spool_failure
        spool.flush()
        spool.seek(0)
        return spool

    def _discard_json(self) -> None:
        context, self._json, self._json_context = self._json_context, None, None
        if context is not None:
            with contextlib.suppress(BaseException):
                context.__exit__(RuntimeError, RuntimeError("discarded"), None)

    def close(self) -> None:
        """Remove what is left: an unfinished report's temporary file, the spool."""
        self._discard_json()
        if self._spool is not None:
            self._spool.close()
            with contextlib.suppress(OSError):
                os.unlink(str(self._spool_path))
            self._spool = None

    def __enter__(self) -> CaseStream:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
