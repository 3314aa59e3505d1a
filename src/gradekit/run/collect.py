"""The caller's side of one `run_suite`: which cases it grades (the selection, the cases a
results log already holds), receiving each finished case in the caller's thread (recorded in
the log, kept, counted, passed to `on_case`), and the report it returns.

Recording a finished case is one step a signal does not cut in two (`RECORDING`), so the log,
the report and the summary always hold the same cases. Stopping the run (Ctrl-C, a log that
cannot be written) kills its process-isolated children at once.

The environment a run records in its report (`gradekit.report.environment`): the suite
file's hash taken when the run starts, the kinds its cases use noted as the runner reads them
(a dataset is read once), and who provided each kind, asked of the registry when the kind is
first seen. Everything that reads files (versions, metadata) happens then, never at the end of
the run: a grader that hung keeps its thread spinning, and every file read after it waits for
the GIL again and again (seconds for an import).
"""

from __future__ import annotations

import contextlib
import gc
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Final

import attrs

from gradekit.core.context import current_run
from gradekit.core.errors import SelectionError, WriteError
from gradekit.history.baseline import BaselineTally
from gradekit.registry.entries import GraderEntry
from gradekit.registry.plugins import BUILTIN_DISTRIBUTION, BUILTIN_KINDS
from gradekit.registry.registry import Registry, default_registry
from gradekit.report.environment import (
    Environment,
    KindSource,
    file_sha256,
    gradekit_version,
    python_version,
)
from gradekit.report.json import CaseTexts, FinishedCase
from gradekit.report.model import CaseReport, SuiteReport, Summary
from gradekit.report.summary import SummaryBuilder
from gradekit.run.composite import _Composite
from gradekit.run.executor import Execution, Remote, Routed
from gradekit.run.exits import RECORDING
from gradekit.run.loop import _Run
from gradekit.run.rescue import Rescue
from gradekit.run.resume import ResultsLog, RunIndex
from gradekit.run.settings import Settings
from gradekit.run.stream import CaseStream
from gradekit.suite.dataset import FileCases
from gradekit.suite.model import Case, Suite
from gradekit.suite.selection import Selection

__all__ = ["Collection", "EnvironmentNotes", "entry_kinds"]


_STOP_SECONDS: Final = 5.0
"""How long a stopped run waits for what was running to hand over the cases it finished."""


class Collection:
    """One call of `run_suite`: its cases (selected, resumed), the run, and what it gathers.

    `run()` grades and returns the report (see `run_suite`)."""

    def __init__(  # noqa: PLR0917
        self,
        suite: Suite,
        settings: Settings,
        jobs: int,
        on_case: Callable[[CaseReport], object] | None,
        keep_cases: bool | Callable[[CaseReport], bool],
        selection: Selection | None,
        log: ResultsLog | CaseStream | None,
        ks: tuple[int, ...] | None = None,
        *,
        tally: BaselineTally | None = None,
        rescue: Rescue | None = None,
    ) -> None:
        self.notes = EnvironmentNotes(suite)  # the kinds noted as the cases are read
        file_cases = suite.cases
        suite = self.notes.suite
        self.suite = suite
        self.ks = ks
        self.settings = settings
        self.jobs = jobs
        self.keep_cases = keep_cases
        self.selection = selection
        self.log = log
        self.index: RunIndex | CaseStream | None = None
        self.counter: _Counter | None = None
        if log is not None:
            self.index = log.start(suite, selection)
            graded = self.index.suite()
        elif selection is not None:
            self.counter = _Counter(suite, selection)
            graded = self.counter.suite()
        else:
            graded = suite
        self.graded = graded
        self.collector = _Collector(keep_cases, on_case, self.index, tally)
        # Whether anyone will see the case reports (a run that keeps none, streams none, logs
        # none and marks none against a baseline only counts them).
        self.keep = bool(keep_cases) or on_case is not None or log is not None or tally is not None
        # Whether the cases go only to the log (or the stream), which takes their texts: a
        # Dask run then hands them on as the workers wrote them.
        self.encode = log is not None and on_case is None and keep_cases is False
        if not self.keep:  # nor builds their samples
            self.settings = attrs.evolve(settings, max_text=None)
        # Cases written out as they end go on as their texts when only the log reads them.
        self.rescue = (
            None if rescue is None else Rescue(rescue.fd, replace=self.encode, marks=rescue.marks)
        )
        # A run that grades every case of a suite file with a dataset, into a stream of texts
        # alone: a remote may send the dataset's lines as they are, its workers building the
        # cases (the kinds they use noted here for the environment).
        self.routed: Routed | None = None
        index = self.index
        if (
            self.encode
            and selection is None
            and tally is None
            and (
                (isinstance(log, CaseStream) and log.tally is None)  # a baseline reads scores
                or (isinstance(index, RunIndex) and index.fresh)  # a log to resume holds none
            )
            and isinstance(file_cases, FileCases)
            and file_cases.dataset is not None
            and file_cases.traces is None
        ):
            reserve = index.reserve if isinstance(index, RunIndex) else _reserved
            self.routed = Routed(file_cases, self.notes.note_kinds, reserve)

    def run(self, remote: Remote | None = None) -> SuiteReport:
        """Grade the cases, here or with `remote` (see `run_suite`); the report in suite
        order (see `run_suite` for what it raises)."""
        started = time.perf_counter()
        collector = self.collector
        run: Execution
        if remote is None:
            run = _Run(self.graded, self.settings, self.jobs, keep=self.keep, rescue=self.rescue)
        else:
            # `routed` only when set: a remote of its own need not know it.
            routing = {} if self.routed is None else {"routed": self.routed}
            run = remote.start_run(
                self.graded, self.settings, self.jobs, keep=self.keep, encode=self.encode, **routing
            )
        complete = True
        failure: WriteError | None = None
        # Finished reports (and the suite already in memory) are long-lived: frozen, the cyclic
        # garbage collector stops walking them again and again as the run grows (that walk
        # doubled the cost of the fastest graders). Not done when someone else froze objects.
        freeze = collector.freeze = gc.isenabled() and gc.get_freeze_count() == 0
        if freeze:
            gc.freeze()
        run.start()
        try:
            run.deliver(collector.receive)
        except KeyboardInterrupt:
            complete = False
            self._stop(run)
            with contextlib.suppress(KeyboardInterrupt, WriteError):
                run.deliver(collector.receive, deadline=time.monotonic() + _STOP_SECONDS)
        except WriteError as error:
            if self.index is None or error is not self.index.failure:
                self._stop(run)
                raise
            complete = False
            failure = error
            self._stop(run)
        except BaseException:
            self._stop(run)
            raise
        finally:
            if freeze:
                gc.unfreeze()
            _stop_workers(self.settings)
        report = SuiteReport(
            suite=self.suite.name,
            cases=self._cases(),
            complete=complete,
            duration_ms=(time.perf_counter() - started) * 1000.0,
            stored_summary=self._summary(),
            environment=self.notes.environment(),
        )
        if failure is None and self.index is not None:
            failure = self.index.failure  # the log broke while the run was stopping
        if failure is not None:
            failure.report = report
            raise failure
        selected = self._selected()
        if self.selection is not None and complete and selected == 0:
            where = self.suite.path or f"suite '{self.suite.name}'"
            raise SelectionError(where, self.selection.description, self.selection.hint)
        return report

    def _stop(self, run: Execution) -> None:
        run.stop()
        # Process-isolated grades in progress are killed now, not at their timeout.
        _stop_workers(self.settings)

    def _selected(self) -> int:
        if self.index is not None:
            return self.index.selected
        if self.counter is not None:
            return self.counter.selected
        return -1

    def _summary(self) -> Summary:
        summary = self.collector.summary
        if self.index is not None:
            summary.merge(self.index.summary)
        return summary.build(self.ks)

    def _cases(self) -> tuple[CaseReport, ...]:
        keep = self.keep_cases
        if not keep:
            return ()
        stored, index = self.collector.stored, self.index
        if not isinstance(index, RunIndex):
            return tuple(stored[position] for position in sorted(stored))
        # In suite order: graded cases from memory, resumed ones read back from the log.
        graded = index.position_ordinals()  # ascending: position -> ordinal
        cases = []
        position = 0
        for ordinal, offset in enumerate(index.offsets):
            if position < len(graded) and graded[position] == ordinal:
                report = stored.get(position)
                position += 1
                if report is not None:
                    cases.append(report)
            elif offset >= 0:
                resumed = index.read(ordinal)
                if resumed is not None and (keep is True or keep(resumed)):
                    cases.append(resumed)
        return tuple(cases)


def _reserved(count: int) -> None:
    """A stream needs no room made for the cases a remote reads."""


def _stop_workers(settings: Settings) -> None:
    """End the run's warm workers (none ran if the module is not loaded): process isolation's,
    owned by the run's settings, and those a kind started for the run (the `math` kind's),
    owned by its run context."""
    workers = sys.modules.get("gradekit.process.workers")
    if workers is not None:
        workers.stop_workers(settings)
        workers.stop_workers(current_run())


class _Counter:
    """The selected cases of a run without a log: counted, so that a selection that matches
    nothing is told apart from an empty suite."""

    def __init__(self, suite: Suite, selection: Selection) -> None:
        self._suite = suite
        self._selection = selection
        self.selected = 0

    def suite(self) -> Suite:
        return attrs.evolve(self._suite, cases=self._cases, case_count=None)

    def _cases(self) -> Iterator[Case]:
        selection = self._selection
        for case in self._suite.cases():
            if selection(case):
                self.selected += 1
                yield case


class _Collector:
    """The caller's side of one run: records, counts and keeps the finished cases, calls
    `on_case`."""

    def __init__(
        self,
        keep_cases: bool | Callable[[CaseReport], bool],
        on_case: Callable[[CaseReport], object] | None,
        log: RunIndex | CaseStream | None,
        tally: BaselineTally | None = None,
    ) -> None:
        self.keep_all = keep_cases is True
        self.keep_some = None if isinstance(keep_cases, bool) else keep_cases
        self.on_case = on_case
        self.log = log
        self.tally = tally
        self.stored: dict[int, CaseReport] = {}
        self.summary = SummaryBuilder()
        self.freeze = False

    def receive(
        self, items: Sequence[tuple[int, FinishedCase]], counted: SummaryBuilder | None
    ) -> None:
        """Take a chunk of finished cases; `counted` is their summary when the worker that
        graded them counted them already."""
        if (
            self.on_case is None
            and self.log is None
            and self.keep_some is None
            and self.tally is None
        ):
            self._keep_and_count(items, counted)
        else:
            self._one_by_one(items, counted)
        if self.freeze:  # see run_suite
            gc.freeze()

    def _keep_and_count(
        self, items: Sequence[tuple[int, FinishedCase]], counted: SummaryBuilder | None
    ) -> None:
        # A case handed over as its text alone is one no one keeps (see `Collection.encode`).
        # The batch that wrote it counted it, unless it was handed over uncounted (a batch cut
        # short at a timeout, a log that took only part of a chunk): then it is read back.
        stored, keep_all, keep_some = self.stored, self.keep_all, self.keep_some
        if counted is not None and not keep_all and keep_some is None:
            self.summary.merge(counted)  # nothing to keep: the cases need no walk
            return
        for position, report in items:
            if not isinstance(report, CaseReport):
                if counted is None:
                    read = report.reports() if isinstance(report, CaseTexts) else [report.report()]
                    for found in read:
                        self.summary.add(found)
                continue
            if keep_all or (keep_some is not None and keep_some(report)):
                stored[position] = report
            if counted is None:
                self.summary.add(report)
        if counted is not None:
            self.summary.merge(counted)

    def _one_by_one(
        self, items: Sequence[tuple[int, FinishedCase]], counted: SummaryBuilder | None
    ) -> None:
        # The chunk is recorded (its log lines, in one write), kept and counted as one step
        # that Ctrl-C does not cut in two, before `on_case` sees its cases. A log that could
        # not take every line (a full disk) took the first ones: only those are received (kept,
        # counted), and the run stops with the log's failure.
        log, on_case, tally = self.log, self.on_case, self.tally
        with RECORDING:
            if log is not None:
                recorded = log.record_many(items)
                if recorded < len(items):
                    items, counted = items[:recorded], None
            self._keep_and_count(items, counted)
            if tally is not None:
                for position, report in items:
                    assert isinstance(report, CaseReport)  # texts only when no one else reads
                    tally.add(report, position)
        if log is not None and log.failure is not None:
            raise log.failure
        if on_case is not None:
            for _, report in items:
                assert isinstance(report, CaseReport)  # texts only when no one else reads
                on_case(report)


class EnvironmentNotes:
    """What one run notes for its report's environment. `suite` is the suite to run: the same,
    with its cases noted as they are read; `environment()` is the result."""

    def __init__(self, suite: Suite, registry: Registry = default_registry) -> None:
        self._registry = registry
        self._sha256 = file_sha256(suite.path) if suite.path else None
        self._gradekit = gradekit_version()
        self._python = python_version()
        self._kinds: dict[str, KindSource] = {}
        self._note(suite.graders)
        cases = suite.cases
        self.suite = attrs.evolve(suite, cases=lambda: self._noted(cases()))

    def _noted(self, cases: Iterator[Case]) -> Iterator[Case]:
        note = self._note
        last: tuple[GraderEntry, ...] = ()  # a dataset's turns share the suite's graders
        for case in cases:
            for turn in case.turns:
                if turn.graders is not last:
                    last = turn.graders
                    note(last)
            yield case

    def _note(self, entries: Iterable[GraderEntry]) -> None:
        kinds = self._kinds
        for entry in entries:
            if entry.kind not in kinds:
                kinds[entry.kind] = self._source(entry.kind)
            if isinstance(entry.grader, _Composite):
                self._note(entry.grader.children)

    def note_kinds(self, kinds: Iterable[str]) -> None:
        """Note `kinds`, those of cases read elsewhere (`entry_kinds` of their graders, on a
        Dask worker)."""
        for kind in kinds:
            if kind not in self._kinds:
                self._kinds[kind] = self._source(kind)

    def environment(self) -> Environment:
        """The environment of the run so far (the kinds of the cases read until now)."""
        return Environment(
            gradekit=self._gradekit,
            python=self._python,
            suite_sha256=self._sha256,
            kinds=dict(sorted(self._kinds.items())),
        )

    def _source(self, kind: str) -> KindSource:
        info = self._registry.provider(kind)
        if info is None:  # created by another registry than the default one
            return KindSource(None, None)
        if info.distribution == BUILTIN_DISTRIBUTION and kind in BUILTIN_KINDS:
            return KindSource(BUILTIN_DISTRIBUTION, self._gradekit)
        if not info.version:  # a factory registered in code
            return KindSource(None, None)
        return KindSource(info.distribution, info.version)


def entry_kinds(entries: Iterable[GraderEntry], into: set[str]) -> set[str]:
    """Add to `into` the kinds of `entries` and of their composites' children (what
    `EnvironmentNotes` notes of a case's graders); `into`."""
    for entry in entries:
        into.add(entry.kind)
        if isinstance(entry.grader, _Composite):
            entry_kinds(entry.grader.children, into)
    return into
