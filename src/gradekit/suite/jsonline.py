"""A dataset line, checked as it streams by: strict JSON (`parse_line`) and its `attempt` index
(`DatasetAttempts`: each case name's attempts numbered 0, 1, 2 ... in file order; see
`gradekit.suite.attempts` for what attempts are).

The JSON is strict: no NaN or Infinity, no number too large for a float, no
key twice in an object, no value nested past the suite file's limit, no integer past Python's;
each refusal a message for an errored case, never an exception that ends the run.

Python's `json` module accepts `NaN`, reads `1e999` as infinity without a word and keeps the
last of two equal keys (JSON has none of these), and a line nested deep enough raises
RecursionError from the decoder itself.
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

import attrs

from gradekit.core.errors import format_path
from gradekit.core.values import overflow_problem
from gradekit.suite.located_yaml import MAX_DEPTH, MAX_INT_DIGITS, too_deep
from gradekit.suite.parse import describe, json_error

__all__ = ["DatasetAttempts", "LineError", "parse_line"]


class LineError(ValueError):
    """The line is not a JSON value gradekit reads; the message says what to fix."""


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise LineError(f"the key {key!r} is written twice in one object; keep one")
            seen.add(key)
    return found


def _constant(name: str) -> Any:
    raise LineError(f"{name} is not JSON; write a number, null or a string")


class _Overflowed(Exception):
    """The line holds a number too large for a float: decoded again to find its key."""


def _float(text: str) -> float:
    number = float(text)
    if math.isinf(number):
        raise _Overflowed
    return number


class _Overflow(str):
    """A number too large for a float, as written, in the line decoded again to name its key."""


def _marked_float(text: str) -> Any:
    number = float(text)
    return _Overflow(text) if math.isinf(number) else number


_DECODER: Final = json.JSONDecoder(
    object_pairs_hook=_unique, parse_constant=_constant, parse_float=_float
)
_MARKING_DECODER: Final = json.JSONDecoder(
    object_pairs_hook=_unique, parse_constant=_constant, parse_float=_marked_float
)


def parse_line(line: bytes) -> Any:
    """The JSON value of `line`; LineError with what to fix when it is not one we read."""
    try:
        text = line.decode("utf-8").removeprefix("\ufeff")  # a BOM opens the first line
    except UnicodeDecodeError:
        raise LineError("the line is not UTF-8 text; save the file as UTF-8") from None
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as error:
        raise LineError(f"invalid JSON: {json_error(error)}; fix this line") from None
    except RecursionError:
        raise LineError(too_deep()) from None
    except LineError:
        raise
    except _Overflowed:
        raise _overflow_error(_MARKING_DECODER.decode(text)) from None
    except ValueError as error:  # Python 3.11+: an integer past its digit limit
        if "digits" in str(error):
            raise LineError(
                f"an integer of more than {MAX_INT_DIGITS} digits; write it as a string"
            ) from None
        raise LineError(f"invalid JSON: {error}; fix this line") from None
    # A line with few brackets cannot nest deeply: only count them exactly when it might.
    if line.count(b"[") + line.count(b"{") > MAX_DEPTH and _depth(value) > MAX_DEPTH:
        raise LineError(too_deep())
    return value


def _overflow_error(value: Any) -> LineError:
    """The error naming the key and the text of the first number of `value` (decoded by
    `_MARKING_DECODER`) too large for a float."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if isinstance(item, _Overflow):
            return LineError(
                f"{format_path(path)}: {overflow_problem(item)}; write a smaller number, or a "
                "string to keep it as text"
            )
        if isinstance(item, dict):
            children: list[tuple[Any, tuple[str | int, ...]]] = [
                (child, (*path, key)) for key, child in item.items()
            ]
        elif isinstance(item, list):
            children = [(child, (*path, index)) for index, child in enumerate(item)]
        else:
            continue
        stack.extend(reversed(children))
    return LineError(overflow_problem("in this line"))  # not reached: the decoder found one


def _depth(value: Any) -> int:
    """How many lists and objects deep `value` nests (iteratively: no recursion limit)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children)
    return deepest


@attrs.define
class DatasetAttempts:
    """The `attempt` indexes of one pass over a dataset: each case name's attempts must be
    numbered 0, 1, 2 ... in file order, and a name with attempts has one on every line."""

    _last: dict[str, tuple[int, str]] = attrs.field(factory=dict)

    def take(self, raw: dict[str, Any], name: str, where: str) -> tuple[int | None, str | None]:
        """Remove `attempt` from the line `raw` (at `where`, `file:line`) and return (its
        index, None), or (None, the message of what is wrong with it)."""
        if "attempt" not in raw:
            if name in self._last:
                return None, (
                    f"case '{name}' has attempts (the last at {self._last[name][1]}), so this "
                    "line must give its 'attempt' index too"
                )
            return None, None
        index = raw.pop("attempt")
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            return None, f"attempt: expected a whole number from 0, got {describe(index)}"
        last, at = self._last.get(name, (-1, ""))
        if index <= last:
            said = "also at" if index == last else f"after attempt {last} at"
            return None, (
                f"attempt: attempt {index} of case '{name}' is given twice or out of order "
                f"({said} {at}); number each case's attempts 0, 1, 2 ... in file order"
            )
        if index != last + 1:
            missing = f"attempt {last + 1}" if index == last + 2 else f"attempts {last + 1}-"
            missing += "" if index == last + 2 else str(index - 1)
            before = f"attempt {last} is at {at}" if last >= 0 else "it is the first"
            return None, (
                f"attempt: attempt {index} of case '{name}' leaves a gap: {missing} missing "
                f"({before}); number each case's attempts 0, 1, 2 ... in file order"
            )
        self._last[name] = (index, where)
        return index, None
