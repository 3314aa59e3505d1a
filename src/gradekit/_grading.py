"""Grading one case: its turns in order, each turn's graders, and the case's report.

Two ways, one set of rules. `grade_case` awaits every grader of a turn concurrently on the
event loop (async graders, sync graders on the pool, process isolation). `grade_batch` grades
many cases whose graders are all `inline` (pure, fast) one after another in a single worker
thread, without a task or a thread per grade; it records which grade is running so that the
runner can time it out (see `_runner`).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from gradekit._execute import Context, Settings, call_sync, run_entry
from gradekit._model import Case, CaseReport, GraderEntry, Policy, ResultRecord, TurnReport
from gradekit._types import GradeResult
from gradekit._verdict import case_verdict, turn_verdict

__all__ = ["Progress", "grade_batch", "grade_case", "unloadable"]

GradeKey = tuple[int, int, int]
"""(case position, turn index, entry index): one grade of a run."""


def unloadable(case: Case) -> CaseReport:
    """The errored report of a case that could not be loaded."""
    return CaseReport(case.name, False, 0.0, (), errored=True, error=case.error)


def _skipped(index: int) -> TurnReport:
    return TurnReport(index, False, 0.0, (), errored=False, skipped=True)


def _turn(index: int, records: Sequence[ResultRecord], policy: Policy) -> TurnReport:
    passed, score, errored = turn_verdict(records, policy)
    return TurnReport(index, passed, score, tuple(records), errored)


def _case(case: Case, turns: Sequence[TurnReport], ended: bool, started: float) -> CaseReport:
    passed, score, errored = case_verdict(turns, ended=ended)
    duration = (time.perf_counter() - started) * 1000.0
    return CaseReport(case.name, passed, score, tuple(turns), errored, None, duration)


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
            ResultRecord(result, entry.advisory, entry.weight)
            for entry, result in zip(entries, results, strict=True)
        ]
        ended = any(
            _ends_case(entry, result) for entry, result in zip(entries, results, strict=True)
        )
        turns.append(_turn(index, records, policy))
    return _case(case, turns, ended, started)


class Progress:
    """What a batch worker is doing, shared with the runner that watches it.

    `mark` is (grade key, start time on the monotonic clock, timeout, entry) of the grade in
    progress. `done` holds the finished (position, report) pairs. Once `abandoned` is set
    (under `lock`) the worker adds nothing more and stops.
    """

    __slots__ = ("abandoned", "done", "lock", "mark")

    def __init__(self) -> None:
        self.mark: tuple[GradeKey, float, float, GraderEntry] | None = None
        self.done: list[tuple[int, CaseReport]] = []
        self.abandoned = False
        self.lock = threading.Lock()


def grade_batch(
    items: Sequence[tuple[int, Case]],
    progress: Progress,
    preset: Mapping[GradeKey, GradeResult],
    settings: Settings,
    default_policy: Policy,
) -> list[tuple[int, CaseReport]]:
    """Grade cases whose graders are all inline, in this thread, one grade after another.

    `preset` holds results decided already (the timeout of a grade that hung in an earlier
    attempt at this batch); those grades are not run again.
    """
    monotonic = time.monotonic
    default_timeout = settings.timeout
    for position, case in items:
        started = time.perf_counter()
        policy = case.policy or default_policy
        turns: list[TurnReport] = []
        ended = False
        for index, turn in enumerate(case.turns):
            if ended:
                turns.append(_skipped(index))
                continue
            sample = turn.sample
            records: list[ResultRecord] = []
            for number, entry in enumerate(turn.graders):
                result: Any = preset.get((position, index, number)) if preset else None
                if result is None:
                    seconds = default_timeout if entry.timeout is None else entry.timeout
                    progress.mark = ((position, index, number), monotonic(), seconds, entry)
                    result = call_sync(entry, sample)
                records.append(ResultRecord(result, entry.advisory, entry.weight))
                if entry.fail_on_error and result.error is not None:
                    ended = True
            turns.append(_turn(index, records, policy))
        report = _case(case, turns, ended, started)
        with progress.lock:
            if progress.abandoned:
                break
            progress.done.append((position, report))
    return progress.done
