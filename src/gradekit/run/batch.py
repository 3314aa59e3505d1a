"""The lane of sync grades: many cases whose graders are all sync (built-in kinds, `code`
callables, any grader without `agrade`), graded one after another in one worker thread,
without a task, a future or a thread hand-off per grade.

A batch applies the rules every path applies, in the same functions: `finish` checks what each
grader returned, and `turn_of` / `case_of` (`gradekit.run.grade`) assemble and decide each turn
and case, as every lane does; `SummaryBuilder` counts them.
It records which grade is running so that the runner can time it out (see
`gradekit.run.loop`), times a grade out itself when it returns past its timeout (a grade that
held the GIL, as a regex backtracking in C does, kept the watch from acting), and counts the
cases it finished into a summary of its own, so that the thread receiving them need not walk
them again."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, NamedTuple

from gradekit.core.types import GradeResult, Sample, error_text
from gradekit.registry.abilities import has_well_formed_results
from gradekit.registry.entries import GraderEntry
from gradekit.report.json import FinishedCase
from gradekit.report.model import ResultRecord, TurnReport
from gradekit.report.summary import SummaryBuilder
from gradekit.run.grade import case_of, skipped_turn, turn_of
from gradekit.run.interrupts import GRADER_RAISES, is_ctrl_c
from gradekit.run.results import error_result, finish, is_final, timed_out
from gradekit.run.settings import Settings
from gradekit.run.verdict import Decision
from gradekit.suite.model import Case, Policy

__all__ = ["HAND_OVER_SECONDS", "BatchState", "GradeInProgress", "GradeKey", "grade_batch"]


HAND_OVER_SECONDS: Final = 0.25
"""A batch running longer than this (slow graders) hands the reports it finished over at this
pace, so that progress, `on_case` and the results log follow it (a batch of fast grades ends
first: it hands its reports over once, counted)."""

HandOver = Callable[[Sequence[tuple[int, FinishedCase]]], None]
Secure = Callable[[Sequence[tuple[int, FinishedCase]]], list[tuple[int, FinishedCase]]]


class GradeKey(NamedTuple):
    """Which grade of a run: the case's position in the suite, the turn's index in its case,
    and the entry's index in its turn."""

    case: int
    turn: int
    grader: int


class GradeInProgress(NamedTuple):
    """The grade a batch worker is running: when it started (on the `time.perf_counter`
    clock), its timeout in seconds, and which grade it is (see `GradeKey`).

    A tuple, never changed: the worker replaces the whole of it for each grade, so the thread
    that watches it always reads the fields of one grade."""

    started: float
    seconds: float
    case: int
    turn: int
    grader: int

    def key(self) -> GradeKey:
        """Which grade this is."""
        return GradeKey(self.case, self.turn, self.grader)


class BatchState:
    """What a batch worker is doing, shared with the runner that watches it.

    `grading` is the grade in progress. `finished` counts the cases finished, in the batch's
    order, and `summary` counts their results; `done` holds their (position, report) pairs
    when the batch hands its reports over (`keep`; a run that keeps no report and streams none
    only needs pure graders' cases counted). Once `abandoned` is set the worker stops at the end
    of the case in progress (a batch that keeps reports leaves that case out, for the runner has
    copied `done`; one that counts counts it). `cut` makes it stop after the case in progress,
    which it finishes and hands over. `stopped` is set when the worker has stopped or
    finished: from then on `summary` and `finished` agree.

    `hand_over`, when given (a batch that keeps reports), receives the reports finished so far
    every `HAND_OVER_SECONDS` while the batch runs longer (slow graders), uncounted; `emitted`
    is how many of `done` went so. `secure`, when given (a supervised run: `Rescue.secure`),
    writes each case out as it ends, before the next grade starts, and gives what `done`
    holds of it. `begin`, when given (a supervised run: `Marks.begin`), is told each grade
    as it begins. `lock` guards `finished`, `end`, `emitted` and `abandoned`."""

    __slots__ = (
        "abandoned",
        "begin",
        "done",
        "emitted",
        "end",
        "finished",
        "grading",
        "hand_over",
        "keep",
        "lock",
        "secure",
        "stopped",
        "summary",
    )

    def __init__(
        self,
        *,
        keep: bool = True,
        hand_over: HandOver | None = None,
        secure: Secure | None = None,
        begin: Callable[[Case, int, int, float], None] | None = None,
    ) -> None:
        self.grading: GradeInProgress | None = None
        self.begin: Final = begin
        self.keep: Final = keep
        self.hand_over: Final = hand_over if keep else None
        self.secure: Final = secure if keep else None
        self.done: list[tuple[int, FinishedCase]] = []
        self.emitted = 0
        self.finished = 0
        self.end = sys.maxsize  # the worker stops once `finished` reaches it
        self.lock: Final = threading.Lock()
        self.summary: Final = SummaryBuilder()
        self.abandoned = False
        self.stopped: Final = threading.Event()

    def cut(self) -> int:
        """Make the worker stop after the case it grades now (or starts next), and return
        how many cases of its batch it will have graded then: the rest is another batch's."""
        with self.lock:
            self.end = self.finished + 1
            return self.end

    def rest(self, *, abandon: bool = False) -> tuple[list[tuple[int, FinishedCase]], bool]:
        """The reports finished and not handed over yet, taken now, and whether none was
        handed over before (then `summary` counts exactly these). `abandon`: the worker's
        later reports are dropped (its batch is graded again from `len(done)` on)."""
        with self.lock:
            if abandon:
                self.abandoned = True
            first = self.emitted == 0
            rest = self.done[self.emitted :]
            self.emitted = len(self.done)
            return rest, first


class _Step:
    """An entry as the batch loop uses it, read once per distinct tuple of graders."""

    __slots__ = ("advisory", "entry", "final", "grade", "seconds", "weight", "well_formed")

    def __init__(self, entry: GraderEntry, settings: Settings) -> None:
        self.entry: Final = entry
        self.grade: Final[Callable[[Sample], Any]] = entry.grader.grade
        self.seconds: Final = settings.timeout_of(entry)
        self.well_formed: Final = has_well_formed_results(entry)
        self.final: Final = is_final(entry, self.well_formed)
        """What the grader returns is the result as it is (`finish` would not change it)."""
        self.advisory: Final = entry.advisory
        self.weight: Final = entry.weight


def _same(entries: tuple[GraderEntry, ...], others: tuple[GraderEntry, ...]) -> bool:
    """The same entry objects (a dataset's lines reuse them, each in a tuple of its own)."""
    return len(entries) == len(others) and all(
        entry is other
        for entry, other in zip(entries, others)  # noqa: B905 - lengths checked
    )


def grade_batch(  # noqa: PLR0915 - one loop, kept flat: it runs once per grade
    items: Sequence[tuple[int, Case]],
    state: BatchState,
    preset: Mapping[GradeKey, ResultRecord],
    settings: Settings,
    default_policy: Policy,
) -> BatchState:
    """Grade cases whose graders are all sync, in this thread, one grade after another.

    Fills `state` (see `BatchState`) and returns it. `preset` holds grades decided already
    (the timeout of a grade that hung in an earlier attempt at this batch); those grades are
    not run again.
    """
    clock = time.perf_counter
    keep, done, summary = state.keep, state.done, state.summary
    hand_over, lock, secure, begin = state.hand_over, state.lock, state.secure, state.begin
    handed = clock()
    max_text = settings.max_text
    # Most turns share their graders' tuple with the turn before.
    entries: tuple[GraderEntry, ...] = ()
    steps: list[_Step] = []
    counters = summary.counters(())
    try:
        for position, case in items:
            started = now = clock()
            policy = case.policy or default_policy
            turns: list[TurnReport] = []
            ran: list[Decision] = []
            ended = False
            for index, turn in enumerate(case.turns):
                if ended:
                    turns.append(skipped_turn(index))
                    continue
                graders = turn.graders
                if graders is not entries and not _same(graders, entries):
                    entries = graders
                    steps = [_Step(entry, settings) for entry in entries]
                    # Results carry their entry's name: counted under it.
                    counters = summary.counters([entry.name for entry in entries])
                sample = turn.sample
                records: list[ResultRecord] = []
                for number, step in enumerate(steps):
                    known = preset.get(GradeKey(position, index, number)) if preset else None
                    if known is not None:
                        records.append(known)
                        continue
                    state.grading = GradeInProgress(now, step.seconds, position, index, number)
                    if begin is not None:
                        begin(case, index, number, step.seconds)
                    try:
                        result = step.grade(sample)
                        if not step.final:
                            result = finish(step.entry, result, step.well_formed)
                    except GRADER_RAISES as error:
                        if is_ctrl_c(error):
                            raise
                        result = error_result(step.entry, error_text(error))
                    later = clock()
                    if later - now > step.seconds:
                        # It held the thread (and the GIL: a regex backtracking in C) past
                        # its timeout, so the watch could not act: timed out all the same,
                        # as if the watch had.
                        records.append(timed_out(step.entry, step.seconds))
                    else:
                        duration = (later - now) * 1000.0
                        records.append(ResultRecord(result, step.advisory, step.weight, duration))
                    now = later
                report, decision = turn_of(index, turn, records, policy, max_text)
                results: list[GradeResult] = [record.result for record in records]
                summary.count_results(results, counters)
                if case.attempt is not None:  # its graders' scores are clustered by case
                    summary.attempts.score(case.name, results)
                turns.append(report)
                ran.append(decision)
                ended = decision.ended
            finished = case_of(case, turns, ran, started, max_text)
            passed, errored = finished.passed, finished.errored
            if keep:
                # No report once abandoned: the runner copied `done` (a case left out is graded
                # again by the batch's next attempt).
                if state.abandoned:
                    break
                if secure is None:
                    done.append((position, finished))
                else:  # written out before the next grade, which may never return
                    done.extend(secure(((position, finished),)))
            summary.count_case(passed, errored)
            if case.attempt is not None:
                summary.attempts.count(case.name, passed, errored)
            chunk: list[tuple[int, FinishedCase]] = []
            with lock:
                state.finished += 1
                if hand_over is not None and now - handed >= HAND_OVER_SECONDS:
                    if not state.abandoned:
                        chunk = done[state.emitted :]
                        state.emitted = len(done)
                    handed = now
                stop = state.finished >= state.end or state.abandoned
            if chunk and hand_over is not None:
                hand_over(chunk)
            if stop:
                break
    finally:
        state.stopped.set()
    return state
