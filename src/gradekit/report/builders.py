"""Builders of the report model's objects for the runner, which makes one record per grade
and one report per turn and case.

Each builds its object as attrs' own `__init__` would, minus the `object.__setattr__` call a
frozen class pays for each field (4% of a batch that keeps its reports; bench/RESULTS.md).
Each sets every field in field order, checked against `attrs.fields` when this module loads
(a field added later fails the import, not silently); a property test holds each equal to
its class's constructor for every field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from gradekit._types import GradeResult
from gradekit.report.model import CaseReport, ResultRecord, TurnReport
from gradekit.report.samples import SampleForm

__all__ = ["case_report", "result_record", "turn_report"]

_new = object.__new__


def _setters(cls: type, *names: str) -> tuple[Callable[[Any, Any], None], ...]:
    """The slot setters of `cls`'s fields, which must be `names`: all of them, in order, with
    neither converter nor validator (a builder that sets these sets the whole object)."""
    fields = attrs.fields(cls)
    if tuple(field.name for field in fields) != names or any(
        field.converter is not None or field.validator is not None for field in fields
    ):
        raise TypeError(
            f"the builder of {cls.__name__} no longer matches its fields; update it in "
            "gradekit.report.builders"
        )
    return tuple(cls.__dict__[name].__set__ for name in names)


_RECORD = _setters(ResultRecord, "result", "advisory", "weight", "duration_ms")
_TURN = _setters(TurnReport, "index", "passed", "score", "results", "errored", "skipped", "sample")
_CASE = _setters(
    CaseReport,
    "name",
    "passed",
    "score",
    "turns",
    "errored",
    "error",
    "duration_ms",
    "metadata",
    "tags",
    "attempt",
)


def result_record(
    result: GradeResult, advisory: bool, weight: float, duration_ms: float
) -> ResultRecord:
    """`ResultRecord(result, advisory, weight, duration_ms)`, cheaper (see the module)."""
    record: ResultRecord = _new(ResultRecord)
    set_result, set_advisory, set_weight, set_duration = _RECORD
    set_result(record, result)
    set_advisory(record, advisory)
    set_weight(record, weight)
    set_duration(record, duration_ms)
    return record


def turn_report(  # noqa: PLR0917 - positional like the class: called once per turn
    index: int,
    passed: bool,
    score: float,
    results: tuple[ResultRecord, ...],
    errored: bool,
    skipped: bool,
    sample: SampleForm | None,
) -> TurnReport:
    """`TurnReport(index, passed, score, results, errored, skipped, sample)`, cheaper (see the
    module)."""
    turn: TurnReport = _new(TurnReport)
    set_index, set_passed, set_score, set_results, set_errored, set_skipped, set_sample = _TURN
    set_index(turn, index)
    set_passed(turn, passed)
    set_score(turn, score)
    set_results(turn, results)
    set_errored(turn, errored)
    set_skipped(turn, skipped)
    set_sample(turn, sample)
    return turn


def case_report(  # noqa: PLR0917 - positional like the class: called once per case
    name: str,
    passed: bool,
    score: float,
    turns: tuple[TurnReport, ...],
    errored: bool,
    error: str | None,
    duration_ms: float,
    metadata: SampleForm | None,
    tags: tuple[str, ...] = (),
    attempt: int | None = None,
) -> CaseReport:
    """`CaseReport(name, passed, score, turns, errored, error, duration_ms, metadata, tags,
    attempt)`, cheaper (see the module)."""
    case: CaseReport = _new(CaseReport)
    (
        set_name,
        set_passed,
        set_score,
        set_turns,
        set_errored,
        set_error,
        set_duration,
        set_metadata,
        set_tags,
        set_attempt,
    ) = _CASE
    set_name(case, name)
    set_passed(case, passed)
    set_score(case, score)
    set_turns(case, turns)
    set_errored(case, errored)
    set_error(case, error)
    set_duration(case, duration_ms)
    set_metadata(case, metadata)
    set_tags(case, tags)
    set_attempt(case, attempt)
    return case
