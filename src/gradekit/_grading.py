"""Grading one case: its turns in order, each turn's graders, and the case's report.

Two ways, one set of rules. `grade_case` awaits every grader of a turn concurrently on the
event loop (async graders, sync graders on the pool, process isolation). `grade_batch` grades
many cases whose graders are all `inline` (pure, fast) one after another in a single worker
thread, without a task or a thread per grade; it records which grade is running so that the
runner can time it out (see `_runner`), and counts the cases it finished into a summary of its
own, so that the thread receiving them need not walk them again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gradekit._execute import (
    FRESH_REFS,
    Context,
    Settings,
    error_result,
    finish,
    getrefcount,
    plain_json,
    run_entry,
)
from gradekit._model import (
    Case,
    CaseReport,
    GraderEntry,
    Policy,
    ResultRecord,
    SummaryBuilder,
    TurnReport,
    case_report,
    count_result,
    result_record,
    turn_report,
)
from gradekit._types import GradeResult, Sample, error_text
from gradekit._verdict import case_verdict, turn_verdict

__all__ = ["GradeKey", "Mark", "Progress", "grade_batch", "grade_case", "unloadable"]

GradeKey = tuple[int, int, int]
"""(case position, turn index, entry index): one grade of a run."""

Mark = tuple[float, float, int, int, int]
"""The grade in progress: (start on the `time.perf_counter` clock, timeout in seconds, case
position, turn index, entry index)."""


def unloadable(case: Case) -> CaseReport:
    """The errored report of a case that could not be loaded."""
    return CaseReport(case.name, False, 0.0, (), errored=True, error=case.error)


def _skipped(index: int) -> TurnReport:
    return turn_report(index, False, 0.0, (), False, True)


def _turn(index: int, records: Sequence[ResultRecord], policy: Policy) -> TurnReport:
    passed, score, errored = turn_verdict(records, policy)
    return turn_report(index, passed, score, tuple(records), errored)


def _case(case: Case, turns: Sequence[TurnReport], ended: bool, started: float) -> CaseReport:
    passed, score, errored = case_verdict(turns, ended=ended)
    duration = (time.perf_counter() - started) * 1000.0
    return case_report(case.name, passed, score, turns, errored, None, duration)


def _ends_case(entry: GraderEntry, result: GradeResult) -> bool:
    return entry.fail_on_error and result.error is not None


async def grade_case(case: Case, policy: Policy, context: Context) -> CaseReport:
    """Grade a case's turns in order, each turn's graders concurrently.

    An error of a `fail_on_error` grader ends the case: later turns are reported skipped.
    """
    started = time.perf_counter()
    turns: list[TurnReport] = []
    ended = False
    for index, turn in enumerate(case.turns):
        if ended:
            turns.append(_skipped(index))
            continue
        entries = turn.graders
        if len(entries) == 1:
            results = [await run_entry(entries[0], turn.sample, context)]
        else:
            results = await asyncio.gather(
                *(run_entry(entry, turn.sample, context) for entry in entries)
            )
        records = [
            result_record(result, entry.advisory, entry.weight)
            for entry, result in zip(entries, results, strict=True)
        ]
        ended = any(
            _ends_case(entry, result) for entry, result in zip(entries, results, strict=True)
        )
        turns.append(_turn(index, records, policy))
    return _case(case, turns, ended, started)


class Progress:
    """What a batch worker is doing, shared with the runner that watches it.

    `mark` is the grade in progress (see `Mark`). `done` holds the finished (position, report)
    pairs. Once `abandoned` is set the worker stops after the case in progress; the runner sets
    it, then copies `done` (a case the worker appends after that copy is not reported).
    """

    __slots__ = ("abandoned", "done", "mark")

    def __init__(self) -> None:
        self.mark: Mark | None = None
        self.done: list[tuple[int, CaseReport]] = []
        self.abandoned = False


_Step = tuple[
    GraderEntry, Callable[[Sample], Any], float, float | None, bool, float, bool, list[Any]
]
"""An entry as the batch loop uses it: (entry, its grader's `grade`, timeout, threshold,
advisory, weight, fail_on_error, its counts in the batch's summary)."""


def _steps(
    entries: Sequence[GraderEntry], settings: Settings, summary: SummaryBuilder
) -> list[_Step]:
    return [
        (
            entry,
            entry.grader.grade,
            settings.timeout_of(entry),
            entry.threshold,
            entry.advisory,
            entry.weight,
            entry.fail_on_error,
            summary.slot(entry.name),  # results always carry their entry's name
        )
        for entry in entries
    ]


def grade_batch(
    items: Sequence[tuple[int, Case]],
    progress: Progress,
    preset: Mapping[GradeKey, GradeResult],
    settings: Settings,
    default_policy: Policy,
) -> tuple[list[tuple[int, CaseReport]], SummaryBuilder]:
    """Grade cases whose graders are all inline, in this thread, one grade after another.

    Returns the finished (position, report) pairs and their summary. `preset` holds results
    decided already (the timeout of a grade that hung in an earlier attempt at this batch);
    those grades are not run again.

    What a grader returned is checked by `finish`, the rules of every run; a result that needs
    no change (the usual case) is accepted here without a call, its duration set in place.
    """
    clock = time.perf_counter
    summary = SummaryBuilder()
    done = progress.done
    last_graders: tuple[GraderEntry, ...] | None = None
    steps: list[_Step] = []
    for position, case in items:
        started = now = clock()
        policy = case.policy or default_policy
        turns: list[TurnReport] = []
        ended = False
        for index, turn in enumerate(case.turns):
            if ended:
                turns.append(_skipped(index))
                continue
            graders = turn.graders
            # Most turns share their graders' tuple with the turn before.
            if graders is not last_graders:
                steps, last_graders = _steps(graders, settings, summary), graders
            sample = turn.sample
            records: list[ResultRecord] = []
            for number, step in enumerate(steps):
                entry, grade, seconds, threshold, advisory, weight, ends, slot = step
                result: Any = preset.get((position, index, number)) if preset else None
                if result is None:
                    progress.mark = (now, seconds, position, index, number)
                    try:
                        value = grade(sample)
                        passed = value.passed if type(value) is GradeResult else None
                        if (
                            passed is not None
                            and (passed is True or passed is False)
                            and (value.details is None or plain_json(value.details))
                            and (
                                threshold is None
                                or value.error is not None
                                or (value.score >= threshold) is passed
                            )
                            and value.name == entry.name
                            and value.kind == entry.kind
                            and getrefcount(value) <= FRESH_REFS
                        ):
                            # Nothing to change but the duration (`finish` would agree).
                            result = value
                            later = clock()
                            result.__dict__["duration_ms"] = (later - now) * 1000.0
                            now = later
                        else:
                            result = finish(entry, value, now)
                            now = clock()
                    except (Exception, SystemExit) as error:
                        result = error_result(entry, error_text(error), now)
                        now = clock()
                records.append(result_record(result, advisory, weight))
                count_result(slot, result)
                if ends and result.error is not None:
                    ended = True
            turns.append(_turn(index, records, policy))
        passed, score, errored = case_verdict(turns, ended=ended)
        duration = (clock() - started) * 1000.0
        report = case_report(case.name, passed, score, turns, errored, None, duration)
        # No lock: a case appended after the runner abandoned this batch and copied `done` is
        # graded again by the batch's next attempt, as if it had not finished here.
        if progress.abandoned:
            break
        done.append((position, report))
        summary.count_case(report.outcome)
    return done, summary
