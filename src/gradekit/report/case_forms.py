"""A case's JSON form (plain dicts, equal to its report's `to_dict()`) built straight from
what graded it, for a writer that is fast at whole values (orjson, see `json_text`).

The counterpart of `case_text`, which writes the same case's text part by part for the
standard library's format (faster than building the form and encoding it there). A property
test holds `case_data(...)` equal to `CaseReport(...).to_dict()`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from gradekit._types import GradeResult, Sample
from gradekit.report.model import ResultRecord, TurnReport
from gradekit.report.samples import json_value, sample_json

__all__ = [
    "ResultDataForm",
    "case_data",
    "metadata_data",
    "record_data",
    "sample_data",
    "turn_data",
    "turn_report_data",
]


class ResultDataForm:
    """What the JSON forms of one entry's results share: the entry's `advisory` and
    `weight`."""

    __slots__ = ("_advisory", "_weight")

    def __init__(self, advisory: bool, weight: float) -> None:
        self._advisory: Final = advisory
        self._weight: Final = weight

    def data(self, result: GradeResult, duration_ms: float) -> dict[str, Any]:
        """`ResultRecord(result, advisory, weight, duration_ms).to_dict()`."""
        # Details as the grader made them (`to_dict` thaws them): the same JSON text.
        return {
            "kind": result.kind,
            "name": result.name,
            "passed": result.passed,
            "score": result.score,
            "message": result.message,
            "details": result.details,
            "error": result.error,
            "advisory": self._advisory,
            "weight": self._weight,
            "duration_ms": duration_ms,
        }


def record_data(record: ResultRecord) -> dict[str, Any]:
    """`record.to_dict()`."""
    return record.to_dict()


def sample_data(sample: Sample, messages: tuple[Any, ...] | None, max_text: int) -> dict[str, Any]:
    """The keys `SampleForm(sample, messages, max_text)` adds to its turn's JSON form."""
    return sample_json(sample, messages, max_text)


def metadata_data(metadata: Mapping[str, Any], max_text: int) -> Any:
    """`SampleForm(metadata, None, max_text).to_dict()`."""
    return json_value(metadata, max_text) if metadata else {}


def turn_data(  # noqa: PLR0917 - positional like TurnReport: called once per turn
    index: int,
    passed: bool,
    score: float,
    errored: bool,
    results: list[dict[str, Any]],
    skipped: bool,
    sample: dict[str, Any] | None,
) -> dict[str, Any]:
    """A `TurnReport`'s `to_dict()`, from its results' forms and its sample's (`sample_data`,
    or None without a sample)."""
    data: dict[str, Any] = {
        "index": index,
        "passed": passed,
        "score": score,
        "errored": errored,
        "results": results,
    }
    if skipped:
        data["skipped"] = True
    if sample:
        data.update(sample)
    return data


def case_data(  # noqa: PLR0917 - positional like CaseReport: called once per case
    name: str,
    passed: bool,
    score: float,
    turns: Sequence[dict[str, Any]],
    errored: bool,
    error: str | None,
    duration_ms: float,
    metadata: Any,
    tags: tuple[str, ...] = (),
    attempt: int | None = None,
) -> dict[str, Any]:
    """A `CaseReport`'s `to_dict()`, from its turns' forms and its metadata's
    (`metadata_data`, or None without one)."""
    data: dict[str, Any] = {"name": name}
    if attempt is not None:
        data["attempt"] = attempt
    data["passed"] = passed
    data["score"] = score
    data["errored"] = errored
    data["duration_ms"] = duration_ms
    data["turns"] = turns if type(turns) is list else list(turns)
    if error is not None:
        data["error"] = error
    if metadata is not None:
        data["metadata"] = metadata
    if tags:
        data["tags"] = list(tags)
    return data


def turn_report_data(turn: TurnReport) -> dict[str, Any]:
    """`turn.to_dict()` (a turn the batch has a report of: a skipped one)."""
    return turn.to_dict()
