"""Checking a loaded suite's cases without grading them: what `gradekit validate` reports."""

from __future__ import annotations

import attrs

from gradekit.suite.model import Suite

__all__ = ["CaseCheck", "check_cases"]


@attrs.frozen
class CaseCheck:
    """How many cases a suite has, and the problem of each case that could not be loaded
    (a malformed dataset line: `data.jsonl:2: invalid JSON: ...`)."""

    cases: int
    problems: tuple[str, ...]


def check_cases(suite: Suite) -> CaseCheck:
    """Read every case of `suite` (its dataset streamed) and collect the problems."""
    cases = 0
    problems: list[str] = []
    for case in suite.cases():
        cases += 1
        if case.error is not None:
            problems.append(case.error)
    return CaseCheck(cases, tuple(problems))
