"""What a grade gives back: the checks on what a grader returned, error and timeout results.

One function, `finish`, holds the rules every path applies to a grader's return value."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, Final

from gradekit._interrupts import GRADER_RAISES, is_ctrl_c
from gradekit._json_check import json_problem, plain_json
from gradekit._types import GradeResult, Sample, error_text
from gradekit.registry.entries import GraderEntry

__all__ = ["FRESH_REFS", "call_sync", "error_result", "finish", "getrefcount", "timeout_result"]


getrefcount: Callable[[object], int] = getattr(sys, "getrefcount", lambda value: 1 << 30)
"""`sys.getrefcount`, or a huge count where the interpreter has none."""


def _refs_of_a_fresh_argument(value: object) -> int:
    return getrefcount(value) if hasattr(sys, "getrefcount") else -1


FRESH_REFS: Final = _refs_of_a_fresh_argument(object())
"""`getrefcount(value)` of a value held only by one local variable of the calling function.

A result object nobody else holds may get its duration set in place: rebuilding it would
double the cost of the fastest graders (see bench/runner.py)."""


def timeout_result(entry: GraderEntry, seconds: float) -> GradeResult:
    """`TimeoutError: grader 'x' exceeded 5s`."""
    text = f"TimeoutError: grader '{entry.name}' exceeded {seconds:g}s"
    return GradeResult(entry.kind, entry.name, False, 0.0, text, None, text, seconds * 1000.0)


def error_result(entry: GraderEntry, text: str, started: float) -> GradeResult:
    """The error result `text` of `entry` for a grade started at `started` (perf_counter)."""
    duration = (time.perf_counter() - started) * 1000.0
    return GradeResult(entry.kind, entry.name, False, 0.0, text, None, text, duration)


def finish(entry: GraderEntry, value: Any, started: float) -> GradeResult:
    """Check what a grader returned and apply the entry to it.

    Not a GradeResult, a non-bool `passed`, or details that are not strict JSON give an error
    result. The entry's threshold decides `passed`; kind and name are the entry's;
    `duration_ms` is set.
    """
    if not isinstance(value, GradeResult):
        return error_result(
            entry,
            f"TypeError: grader '{entry.name}' returned {type(value).__name__}, not "
            "GradeResult; return gradekit.GradeResult(kind, name, passed, score, ...)",
            started,
        )
    passed = value.passed
    if passed is not True and passed is not False:
        return error_result(
            entry,
            f"TypeError: grader '{entry.name}' returned passed={passed!r} "
            f"({type(passed).__name__}); set passed to True or False",
            started,
        )
    if value.details is not None and not plain_json(value.details):
        problem = json_problem(value.details)
        if problem is not None:
            cls, where = problem
            return error_result(
                entry,
                f"{cls}: grader '{entry.name}' returned details that are not JSON ({where}); "
                "details may hold only dict, list, str, int, float, bool and None",
                started,
            )
    if entry.threshold is not None and value.error is None:
        passed = value.score >= entry.threshold
    duration = (time.perf_counter() - started) * 1000.0
    if (
        passed is value.passed
        and value.name == entry.name
        and value.kind == entry.kind
        and getrefcount(value) <= FRESH_REFS
    ):
        object.__setattr__(value, "duration_ms", duration)
        return value
    return GradeResult(
        entry.kind,
        entry.name,
        passed,
        value.score,
        value.message,
        value.details,
        value.error,
        duration,
    )


def call_sync(entry: GraderEntry, sample: Sample) -> GradeResult:
    """Call a sync grader here and now; an exception becomes an error result."""
    started = time.perf_counter()
    try:
        return finish(entry, entry.grader.grade(sample), started)
    except GRADER_RAISES as error:
        if is_ctrl_c(error):
            raise
        return error_result(entry, error_text(error), started)
