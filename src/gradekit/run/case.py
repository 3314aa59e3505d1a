"""Grading one case on the event loop: its turns in order, each turn's graders concurrently."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from gradekit._types import GradeResult
from gradekit.registry.entries import GraderEntry
from gradekit.report.model import (
    CaseReport,
    ResultRecord,
    TurnReport,
    case_report,
    result_record,
    turn_report,
)
from gradekit.run.dispatch import run_entry
from gradekit.run.settings import Context
from gradekit.run.verdict import case_verdict, turn_verdict
from gradekit.suite.model import Case, Policy

__all__ = ["grade_case", "unloadable"]


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
