"""What the rules look at: a grade's outcome, a result's shape, two results, a sample's state.

Small pure helpers, so each rule in `_rules` reads as the sentence it checks.
"""

from __future__ import annotations

import asyncio
import math
import threading
import traceback
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from gradekit._json_check import json_problem
from gradekit._types import GradeResult, Sample, error_text

__all__ = [
    "Graded",
    "agrade",
    "difference",
    "grade",
    "result_problem",
    "snapshot",
    "within",
]


@attrs.frozen
class Graded:
    """What one call of `grade` (or `agrade`) gave: a value, or the exception it raised."""

    value: Any = None
    raised: str | None = None


def _raised(what: str, error: BaseException) -> str:
    frames = traceback.extract_tb(error.__traceback__)
    where = ""
    if frames:
        last = frames[-1]
        where = f" (at {last.filename}:{last.lineno} in {last.name})"
    return f"{what} raised {error_text(error)}{where}"


def grade(call: Callable[[Sample], Any], sample: Sample, what: str = "grade") -> Graded:
    """Call `call(sample)`, catching what a grader may raise (SystemExit included)."""
    try:
        return Graded(call(sample))
    except (Exception, SystemExit) as error:
        return Graded(raised=_raised(what, error))


def within(
    call: Callable[[Sample], Any], sample: Sample, seconds: float, what: str
) -> Graded | None:
    """`grade(call, sample, what)` in a daemon thread: what it gave, or None when it did not
    return within `seconds` (the thread is left behind)."""
    outcome: list[Graded] = []
    thread = threading.Thread(
        target=lambda: outcome.append(grade(call, sample, what)), daemon=True, name=what
    )
    thread.start()
    thread.join(seconds)
    return outcome[0] if outcome else None


def agrade(grader: Any, sample: Sample) -> Graded:
    """Run `grader.agrade(sample)` to completion on a fresh event loop."""
    try:
        return Graded(asyncio.run(grader.agrade(sample)))
    except (Exception, SystemExit) as error:
        return Graded(raised=_raised("agrade", error))


def result_problem(value: Any, kind: str, name: str) -> str | None:
    """None for a well-formed result of this kind and name; else what is wrong with it."""
    if not isinstance(value, GradeResult):
        return f"returned {type(value).__name__} {value!r:.80}, not a GradeResult"
    if value.kind != kind:
        return f"returned a result of kind {value.kind!r}, not {kind!r}"
    if value.name != name:
        return f"returned a result named {value.name!r}, not the grader's name {name!r}"
    if type(value.passed) is not bool:
        return f"returned passed={value.passed!r} ({type(value.passed).__name__}), not a bool"
    score = value.score
    if type(score) is not float or not math.isfinite(score) or not 0.0 <= score <= 1.0:
        return f"returned score={score!r}, not a finite float in [0, 1]"
    if not isinstance(value.message, str):
        return f"returned message={value.message!r}, not a string"
    if value.error is not None:
        if not isinstance(value.error, str):
            return f"returned error={value.error!r}, not a string"
        if value.passed or value.score != 0.0:
            return "returned an error with passed=True or a non-zero score"
    if value.details is not None:
        if not isinstance(value.details, Mapping):
            return f"returned details={value.details!r:.80}, not a mapping"
        problem = json_problem(value.details)
        if problem is not None:
            return f"returned details that are not strict JSON: {problem[1]}"
    return None


def _untimed(value: Any) -> Any:
    # Timings differ from one grade to the next by nature: a composite's children results in
    # details carry their own `duration_ms`, like the result itself.
    if isinstance(value, Mapping):
        return {key: _untimed(item) for key, item in value.items() if key != "duration_ms"}
    if isinstance(value, (list, tuple)):
        return [_untimed(item) for item in value]
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return value


_COMPARED = ("kind", "name", "passed", "score", "message", "error", "details")


def difference(first: Any, second: Any) -> str | None:
    """None when two results agree (timings aside); else the first field that differs."""
    if not (isinstance(first, GradeResult) and isinstance(second, GradeResult)):
        return None if _same(first, second) else f"{first!r:.120} then {second!r:.120}"
    for field in _COMPARED:
        one, other = _untimed(getattr(first, field)), _untimed(getattr(second, field))
        if not _same(one, other):
            return f"{field} {one!r:.120} then {other!r:.120}"
    return None


def _same(one: Any, other: Any) -> bool:
    try:
        return bool(one == other)
    except Exception:  # a value whose == is item by item (a numpy array): by structure
        return bool(snapshot(one) == snapshot(other))


def snapshot(value: Any) -> Any:
    """A structural copy of `value` to compare before and after grading: every attrs field,
    mapping item, sequence item and instance attribute, whatever the object's own `==`."""
    return _snap(value, set())


def _snap(value: Any, active: set[int]) -> Any:
    kind = type(value)
    if value is None or kind in (str, int, bool, bytes):
        return value
    if kind is float:
        return ("float", value.hex())
    if id(value) in active:
        return ("cycle", kind.__qualname__)
    active.add(id(value))
    try:
        if attrs.has(kind):
            fields = attrs.fields(kind)
            return (kind.__qualname__, tuple(_snap(getattr(value, f.name), active) for f in fields))
        if isinstance(value, Mapping):
            items = tuple((_snap(k, active), _snap(v, active)) for k, v in value.items())
            return (kind.__qualname__, items)
        if isinstance(value, (list, tuple, bytearray)):
            return (kind.__qualname__, tuple(_snap(item, active) for item in value))
        if isinstance(value, (set, frozenset)):
            return (kind.__qualname__, tuple(sorted(repr(_snap(i, active)) for i in value)))
        state = getattr(value, "__dict__", None)
        if isinstance(state, dict):
            return (kind.__qualname__, _snap(state, active))
        return (kind.__qualname__, repr(value))
    finally:
        active.discard(id(value))
