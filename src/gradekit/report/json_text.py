"""A plain value's JSON text, on one line: orjson's when it is installed (`gradekit[fast]`),
the standard library's otherwise.

Both write the same data. orjson writes no space after `:` and `,`, and floats' exponents
without padding (`1e-05` is `1e-5`); it is about ten times faster at a case's text, which is
most of what a streamed run writes (bench/RESULTS.md). A value orjson cannot write (an
integer beyond 64 bits, a mapping key that is not text) is written by the standard library,
which writes such keys as text. `GRADEKIT_JSON=stdlib` in the environment chooses the
standard library even where orjson is installed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from types import ModuleType
from typing import Any, Final

__all__ = ["CHOICE_VARIABLE", "STDLIB_WRITER", "json_text", "json_writer", "line_reader"]

CHOICE_VARIABLE: Final = "GRADEKIT_JSON"
"""The environment variable that chooses the writer: `stdlib` for the standard library."""

STDLIB_WRITER: Final[Callable[[Any], str]] = json.JSONEncoder(ensure_ascii=False).encode
"""The standard library's writer (`json.dumps(value, ensure_ascii=False)`, one encoder)."""

_chosen: Callable[[Any], str] | None = None


def json_writer() -> Callable[[Any], str]:
    """The function that writes a value's JSON text: orjson's, or the standard library's.

    Chosen once, on the first call (orjson is imported only then)."""
    global _chosen  # noqa: PLW0603 - chosen once, read at every call
    if _chosen is None:
        _chosen = _choose()
    return _chosen


def _orjson() -> ModuleType | None:
    """orjson, where it is installed and `GRADEKIT_JSON=stdlib` does not set it aside."""
    if os.environ.get(CHOICE_VARIABLE) == "stdlib":
        return None
    try:
        import orjson
    except ImportError:
        return None
    return orjson


def _choose() -> Callable[[Any], str]:
    orjson = _orjson()
    if orjson is None:
        return STDLIB_WRITER
    dumps, refused = orjson.dumps, orjson.JSONEncodeError

    def orjson_text(value: Any) -> str:
        try:
            text: str = dumps(value).decode()
            return text
        except refused:
            return STDLIB_WRITER(value)

    return orjson_text


def line_reader() -> Callable[[str], Any] | None:
    """orjson's `loads` where orjson is installed and not set aside by `GRADEKIT_JSON=stdlib`,
    else None. It reads a report's one-line cases about 2.5 times as fast as the standard
    library (bench/RESULTS.md); `report_stream` gives the standard library's decoder what it
    refuses or would read otherwise."""
    orjson = _orjson()
    if orjson is None:
        return None
    loads: Callable[[str], Any] = orjson.loads
    return loads


def json_text(value: Any) -> str:
    """`value`'s JSON text on one line (see the module's docstring for which writer)."""
    return json_writer()(value)
