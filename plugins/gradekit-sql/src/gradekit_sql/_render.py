"""Rows as people read them in messages and as strict JSON in details, both bounded."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final

__all__ = ["ROWS_SHOWN", "json_rows", "row_text"]

ROWS_SHOWN: Final = 5
"""At most this many differing rows of each side are listed in details."""

_TEXT_LIMIT: Final = 200
_BLOB_LIMIT: Final = 32
_MESSAGE_LIMIT: Final = 80


def _json_value(value: Any) -> Any:
    """A SQLite value as strict JSON: long text cut, blobs as `x'…'`, infinities as text."""
    if isinstance(value, str):
        return value if len(value) <= _TEXT_LIMIT else value[: _TEXT_LIMIT - 1] + "…"
    if isinstance(value, bytes):
        shown = value[:_BLOB_LIMIT].hex()
        return f"x'{shown}'" if len(value) <= _BLOB_LIMIT else f"x'{shown}…' ({len(value)} bytes)"
    if isinstance(value, float) and not math.isfinite(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def json_rows(rows: Sequence[tuple[Any, ...]]) -> list[list[Any]]:
    """The first ROWS_SHOWN rows as JSON lists."""
    return [[_json_value(value) for value in row] for row in rows[:ROWS_SHOWN]]


def row_text(row: tuple[Any, ...]) -> str:
    """A row for a message, `(1, 'Alice')`, cut to a readable length."""
    text = "(" + ", ".join(repr(_json_value(value)) for value in row) + ")"
    return text if len(text) <= _MESSAGE_LIMIT else text[: _MESSAGE_LIMIT - 1] + "…"
