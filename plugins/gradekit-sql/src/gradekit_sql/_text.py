"""What both SQL kinds share: the SQL text of a sample's value, and error results."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gradekit import GradeResult

__all__ = ["data_error", "not_sql", "sql_text", "what_it_is"]


def sql_text(value: Any) -> str | None:
    """The SQL held by a sample's output or expected value: a string (None counts as empty);
    None when the value is a mapping, a list or another non-text value."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return None


def data_error(
    kind: str, name: str, message: str, details: Mapping[str, Any] | None = None
) -> GradeResult:
    """An error result: the grader could not grade this sample (not the agent's failure)."""
    return GradeResult.of_error(kind, name, f"ValueError: {message}", message, details)


def what_it_is(value: Any) -> str:
    """What a non-text value is, for a message: `a mapping`, `a list`, `a number`..."""
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return f"a {type(value).__name__}"


def not_sql(kind: str, name: str, value: Any) -> GradeResult:
    """The error result for an output that is structured data, not SQL text."""
    return data_error(kind, name, f"the output is {what_it_is(value)}, not SQL text")
