"""How the value a code grader returns becomes a GradeResult (the table in docs/code-graders.md).

`True` / `False` -> score 1.0 / 0.0, passed / failed; an int or float -> that score, passed
derived; a `GraderResult` -> used as is. Anything else, a score that is NaN or outside [0, 1],
or details that are not strict JSON give an error result: never a clamp, never a guess.
"""

from __future__ import annotations

from typing import Any

from gradekit._frozen import freeze
from gradekit._json_check import JsonProblem, find_json_problem
from gradekit._types import GradeResult
from gradekit.code import GraderResult

__all__ = ["details_problem", "to_grade_result", "type_name"]

_EXPECTED = "return True/False, a number in [0, 1] or a gradekit.code.GraderResult"
_JSON_TYPES = "use only dict (with str keys), list, str, int, float, bool and None"


def to_grade_result(
    value: Any, kind: str, name: str, reference: str, threshold: float | None
) -> GradeResult:
    """Map what the grader `reference` returned to a GradeResult (see the module docstring)."""
    if isinstance(value, bool):
        return GradeResult(kind, name, value, 1.0 if value else 0.0, f"returned {value}")
    if isinstance(value, (int, float)):
        problem = _score_problem(value, reference)
        if problem is not None:
            return GradeResult.of_error(kind, name, problem)
        return GradeResult(kind, name, *_derive(float(value), None, threshold))
    if not isinstance(value, GraderResult):
        return GradeResult.of_error(
            kind, name, f"TypeError: grader {reference!r} returned {type_name(value)}; {_EXPECTED}"
        )
    score = value.score
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        return GradeResult.of_error(
            kind,
            name,
            f"TypeError: grader {reference!r} returned a GraderResult whose score is "
            f"{type_name(score)}; the score must be a number in [0, 1]",
        )
    problem = _score_problem(score, reference)
    if problem is None and value.passed is not None and not isinstance(value.passed, bool):
        problem = (
            f"TypeError: grader {reference!r} returned a GraderResult whose passed is "
            f"{type_name(value.passed)}; use True, False or None"
        )
    if problem is None and value.reason is not None and not isinstance(value.reason, str):
        problem = (
            f"TypeError: grader {reference!r} returned a GraderResult whose reason is "
            f"{type_name(value.reason)}; use a str or None"
        )
    if problem is None and value.details is not None:
        problem = details_problem(value.details)
    if problem is not None:
        return GradeResult.of_error(kind, name, problem)
    passed, score, message = _derive(float(score), value.passed, threshold)
    details = None if value.details is None else freeze(value.details)
    return GradeResult(kind, name, passed, score, value.reason or message, details)


def _derive(score: float, passed: bool | None, threshold: float | None) -> tuple[bool, float, str]:
    """(passed, score, message): explicit `passed` wins, else score >= threshold (or 0.5)."""
    if passed is not None:
        return passed, score, f"score {score:g}, passed={passed} as returned"
    bar = 0.5 if threshold is None else threshold
    label = "threshold" if threshold is not None else "default threshold"
    if score >= bar:
        return True, score, f"score {score:g} >= {label} {bar:g}"
    return False, score, f"score {score:g} < {label} {bar:g}"


def _score_problem(score: float, reference: str) -> str | None:
    if 0.0 <= score <= 1.0:  # False for NaN and infinities too
        return None
    return (
        f"ValueError: grader {reference!r} returned score {score!r}, which is not a finite "
        "number in [0, 1]; scores are never clamped: return a score in [0, 1]"
    )


def details_problem(details: Any) -> str | None:
    """Why `details` is not a dict of strict JSON values, as an error text; None when it is."""
    if not isinstance(details, dict):
        return (
            f"TypeError: details are not JSON-serialisable: details must be a dict, "
            f"got {type_name(details)}; {_JSON_TYPES}"
        )
    try:
        problem = find_json_problem(details)
    except RecursionError:
        return "ValueError: details are not JSON-serialisable: they are nested too deeply"
    return None if problem is None else _describe(problem)


def _describe(problem: JsonProblem) -> str:
    prefix = "details are not JSON-serialisable"
    path = "details" + "".join(f"[{part!r}]" for part in problem.path)
    if problem.reason == "nonfinite":
        return f"ValueError: {prefix}: {path} is {problem.value!r}; JSON has no NaN or infinity"
    if problem.reason == "cycle":
        return f"ValueError: {prefix}: {path} refers back to a containing value (a cycle)"
    if problem.reason == "key":
        key = problem.value
        return (
            f"TypeError: {prefix}: {path} has the key {key!r} ({type(key).__name__});"
            " JSON object keys must be strings"
        )
    return f"TypeError: {prefix}: {path} is {type_name(problem.value)}; {_JSON_TYPES}"


def type_name(value: Any) -> str:
    """`a dict`, `an int`, `None`: how error texts name what was returned."""
    if value is None:
        return "None"
    name = type(value).__name__
    article = "an" if name[:1].lower() in "aeiou" else "a"
    return f"{article} {name}"
