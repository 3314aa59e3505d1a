"""What a grade gives back: the checks on what a grader returned, error and timeout results,
and the record of a grade (its result and how long it took).

One function, `finish`, holds the rules every path applies to a grader's return value. The
runner never changes what a grader returned: what it measures (the duration) goes on the
`ResultRecord` it makes, and a result it must correct (the entry's threshold, kind or name) is
a new one."""

from __future__ import annotations

import time
from typing import Any

from gradekit.core.types import GradeResult, Sample, error_text
from gradekit.core.values import json_problem, plain_json
from gradekit.registry.entries import GraderEntry
from gradekit.report.model import ResultRecord
from gradekit.run.interrupts import GRADER_RAISES, is_ctrl_c

__all__ = [
    "call_sync",
    "error_result",
    "finish",
    "is_final",
    "record_of",
    "timed_out",
    "timeout_result",
]


def timeout_result(entry: GraderEntry, seconds: float) -> GradeResult:
    """`TimeoutError: grader 'x' exceeded 5s`."""
    text = f"TimeoutError: grader '{entry.name}' exceeded {seconds:g}s"
    return GradeResult(entry.kind, entry.name, False, 0.0, text, None, text)


def timed_out(entry: GraderEntry, seconds: float) -> ResultRecord:
    """The record of a grade that outlived its timeout of `seconds`."""
    return ResultRecord(timeout_result(entry, seconds), entry.advisory, entry.weight, seconds * 1e3)


def error_result(entry: GraderEntry, text: str) -> GradeResult:
    """The error result `text` of `entry`."""
    return GradeResult(entry.kind, entry.name, False, 0.0, text, None, text)


def record_of(entry: GraderEntry, result: GradeResult, started: float) -> ResultRecord:
    """The record of `result`, a grade of `entry` started at `started` (perf_counter) and
    finished now."""
    duration = (time.perf_counter() - started) * 1000.0
    return ResultRecord(result, entry.advisory, entry.weight, duration)


def finish(entry: GraderEntry, value: Any, well_formed: bool = False) -> GradeResult:
    """Check what a grader returned and apply the entry to it.

    Not a GradeResult, a non-bool `passed`, or details that are not strict JSON give an error
    result. The entry's threshold decides `passed` (an error stays an error); kind and name are
    the entry's. `well_formed`: the grader vouches for the rest (see
    `gradekit.registry.abilities.has_well_formed_results`), so only the threshold is applied.
    Returns `value` itself when nothing needs to change, else a new result.
    """
    if not well_formed:
        problem = _problem(entry, value)
        if problem is not None:
            return error_result(entry, problem)
    threshold = entry.threshold
    if (
        threshold is not None
        and value.error is None
        and (value.score >= threshold) is not value.passed
    ):
        return _with_entry(entry, value, not value.passed)
    if well_formed or (value.name == entry.name and value.kind == entry.kind):
        result: GradeResult = value
        return result
    return _with_entry(entry, value, value.passed)


def is_final(entry: GraderEntry, well_formed: bool) -> bool:
    """True when `finish(entry, value, well_formed)` is `value` for every value the grader can
    return: well-formed results and no threshold to apply (a caller may then skip the call)."""
    return well_formed and entry.threshold is None


def _with_entry(entry: GraderEntry, value: GradeResult, passed: bool) -> GradeResult:
    """A copy of `value` with the entry's kind and name and `passed`."""
    return GradeResult(
        entry.kind,
        entry.name,
        passed,
        value.score,
        value.message,
        value.details,
        value.error,
        value.duration_ms,
    )


def _problem(entry: GraderEntry, value: Any) -> str | None:
    """What is wrong with a grader's return value, as the text of its error result."""
    if not isinstance(value, GradeResult):
        return (
            f"TypeError: grader '{entry.name}' returned {type(value).__name__}, not "
            "GradeResult; return gradekit.GradeResult(kind, name, passed, score, ...)"
        )
    passed = value.passed
    if passed is not True and passed is not False:
        return (
            f"TypeError: grader '{entry.name}' returned passed={passed!r} "
            f"({type(passed).__name__}); set passed to True or False"
        )
    if value.details is not None and not plain_json(value.details):
        problem = json_problem(value.details)
        if problem is not None:
            cls, where = problem
            return (
                f"{cls}: grader '{entry.name}' returned details that are not JSON ({where}); "
                "details may hold only dict, list, str, int, float, bool and None"
            )
    return None


def call_sync(entry: GraderEntry, sample: Sample) -> ResultRecord:
    """Call a sync grader here and now and record its grade; an exception becomes an error
    result."""
    started = time.perf_counter()
    try:
        result = finish(entry, entry.grader.grade(sample))
    except GRADER_RAISES as error:
        if is_ctrl_c(error):
            raise
        result = error_result(entry, error_text(error))
    return record_of(entry, result, started)
