"""What both SQL kinds share: the SQL text of a sample's value, quoting, and error results."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from gradekit import GradeResult

__all__ = ["QUOTE_LIMIT", "data_error", "not_sql", "quote", "sql_text"]

QUOTE_LIMIT: Final = 60
"""Texts longer than this are cut in messages (details keep more)."""


def quote(text: str, limit: int = QUOTE_LIMIT) -> str:
    """`text` quoted for a message, cut to `limit` characters with an ellipsis."""
    if len(text) <= limit:
        return repr(text)
    return repr(text[: limit - 1] + "…")


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


def not_sql(kind: str, name: str, value: Any) -> GradeResult:
    """The error result for an output that is structured data, not SQL text."""
    if isinstance(value, Mapping):
        what = "a mapping"
    elif isinstance(value, (list, tuple)):
        what = "a list"
    else:
        what = f"a {type(value).__name__}"
    return data_error(kind, name, f"the output is {what}, not SQL text")
