"""Argument matchers for `expected_calls`, compiled once when the grader is created.

A listed argument is a literal (numbers compare numerically, so `206588` equals `206588.0`;
booleans only equal booleans; lists and maps compare deeply, element by element) or one of the
matcher maps `{regex: p}` (full match, under a time limit: `gradekit.graders._pattern`),
`{contains: x}` and `{numeric: n, tolerance: t}`.
A map whose keys are exactly those of a matcher is that matcher; any other map is a literal.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from gradekit._errors import OptionError
from gradekit._types import as_text
from gradekit.graders._pattern import Pattern

__all__ = ["Matcher", "compile_matcher", "is_number"]

Matcher = Callable[[Any], "str | None"]
"""`matcher(actual)` -> None when it matches, else why not."""

_MATCHER_KEYS = ({"regex"}, {"contains"}, {"numeric"}, {"numeric", "tolerance"})


def is_number(value: Any) -> bool:
    """True for ints and floats, never for booleans."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _show(value: Any) -> str:
    return (
        repr(value) if isinstance(value, str) else as_text(value) if value is not None else "null"
    )


def compile_matcher(expected: Any, where: str) -> Matcher:
    """The matcher for `expected`; `where` names the option path for OptionError messages."""
    if isinstance(expected, Mapping) and set(expected) in _MATCHER_KEYS:
        if "regex" in expected:
            return _regex(expected["regex"], where)
        if "contains" in expected:
            return _contains(expected["contains"])
        return _numeric(expected["numeric"], expected.get("tolerance", 0), where)
    if isinstance(expected, Mapping):
        return _mapping({str(k): compile_matcher(v, f"{where}.{k}") for k, v in expected.items()})
    if isinstance(expected, (list, tuple)):
        return _sequence([compile_matcher(v, f"{where}[{i}]") for i, v in enumerate(expected)])
    return _literal(expected)


def _literal(expected: Any) -> Matcher:
    def match(actual: Any) -> str | None:
        if isinstance(expected, bool) or isinstance(actual, bool):
            same = isinstance(actual, bool) and isinstance(expected, bool) and actual is expected
        elif is_number(expected):
            same = is_number(actual) and actual == expected
        else:
            same = type(actual) is type(expected) and actual == expected
        return None if same else f"expected {_show(expected)}, got {_show(actual)}"

    return match


def _mapping(fields: dict[str, Matcher]) -> Matcher:
    def match(actual: Any) -> str | None:
        if not isinstance(actual, Mapping):
            return f"expected a map, got {_show(actual)}"
        if set(actual) != set(fields):
            return f"expected keys {sorted(fields)}, got {sorted(map(str, actual))}"
        for key, matcher in fields.items():
            reason = matcher(actual[key])
            if reason is not None:
                return f"{key}: {reason}"
        return None

    return match


def _sequence(items: list[Matcher]) -> Matcher:
    def match(actual: Any) -> str | None:
        if not isinstance(actual, (list, tuple)):
            return f"expected a list, got {_show(actual)}"
        if len(actual) != len(items):
            return f"expected {len(items)} items, got {len(actual)}"
        for index, (matcher, value) in enumerate(zip(items, actual, strict=True)):
            reason = matcher(value)
            if reason is not None:
                return f"[{index}]: {reason}"
        return None

    return match


def _regex(pattern: Any, where: str) -> Matcher:
    if not isinstance(pattern, str):
        raise OptionError(f"{where}.regex", f"expected a pattern string, got {_show(pattern)}")
    compiled = Pattern(pattern, f"{where}.regex")

    def match(actual: Any) -> str | None:
        if (
            isinstance(actual, (Mapping, list, tuple))
            or compiled.fullmatch(as_text(actual)) is None
        ):
            return f"{_show(actual)} does not match /{pattern}/"
        return None

    return match


def _contains(part: Any) -> Matcher:
    literal = _literal(part)

    def match(actual: Any) -> str | None:
        if isinstance(actual, str):
            found = as_text(part) in actual
        elif isinstance(actual, Mapping):
            found = part in actual
        elif isinstance(actual, (list, tuple)):
            found = any(literal(item) is None for item in actual)
        else:
            found = False
        return None if found else f"{_show(actual)} does not contain {_show(part)}"

    return match


def _numeric(target: Any, tolerance: Any, where: str) -> Matcher:
    for key, value in (("numeric", target), ("tolerance", tolerance)):
        if not is_number(value) or not math.isfinite(value):
            raise OptionError(f"{where}.{key}", f"expected a number, got {_show(value)}")
    if tolerance < 0:
        raise OptionError(f"{where}.tolerance", f"must be >= 0, got {tolerance!r}")

    def match(actual: Any) -> str | None:
        number = actual if is_number(actual) else _parse(actual)
        # `not <=`: NaN is within no tolerance of anything (`abs(nan - t) > tol` is False).
        if number is None or not abs(number - target) <= tolerance:
            return f"expected {target} ± {tolerance}, got {_show(actual)}"
        return None

    return match


def _parse(value: Any) -> float | None:
    """Numeric text (agents often pass numbers as strings) as a float, else None."""
    if not isinstance(value, str):
        return None
    try:
        number = float(value.strip().replace(",", ""))
    except ValueError:
        return None
    return number if math.isfinite(number) else None
