"""The JSON forms of a case, its turns and its results (plain dicts): the one definition of
their shapes. The report model's `to_dict` builds them from its objects; a streamed run's
batches build them straight from what graded a case, with no report object, for a writer
that is fast at whole values (orjson, see `json_text`).

`case_text` writes the same case's text part by part for the standard library's format
(faster there than building the form and encoding it); a property test holds its texts
equal to the standard library's text of these forms.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from gradekit._types import GradeResult

__all__ = ["ResultDataForm", "case_data", "result_data", "turn_data"]


def result_data(
    result: GradeResult,
    advisory: bool,
    weight: float,
    duration_ms: float,
    details: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The JSON form of a result (the `results` items of DESIGN.md), with `details` as given
    (the report model thaws them; a batch writes them as the grader made them: the same JSON
    text)."""
    return {
        "kind": result.kind,
        "name": result.name,
        "passed": result.passed,
        "score": result.score,
        "message": result.message,
        "details": details,
        "error": result.error,
        "advisory": advisory,
        "weight": weight,
        "duration_ms": duration_ms,
    }


class ResultDataForm:
    """What the JSON forms of one entry's results share: the entry's `advisory` and
    `weight`."""

    __slots__ = ("_advisory", "_weight")

    def __init__(self, advisory: bool, weight: float) -> None:
        self._advisory: Final = advisory
        self._weight: Final = weight

    def data(self, result: GradeResult, duration_ms: float) -> dict[str, Any]:
        """`ResultRecord(result, advisory, weight, duration_ms).to_dict()`."""
        return result_data(result, self._advisory, self._weight, duration_ms, result.details)


def turn_data(  # noqa: PLR0917 - positional like TurnReport: called once per turn
    index: int,
    passed: bool,
    score: float,
    errored: bool,
    results: list[dict[str, Any]],
    skipped: bool,
    sample: dict[str, Any] | None,
) -> dict[str, Any]:
    """A turn's JSON form, from its results' forms and its sample's (`sample_json`, or None
    without a sample)."""
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
    """A case's JSON form, from its turns' forms and its metadata's (`json_value` of it, or
    None when the run records no samples)."""
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
