"""Comparing two result sets: as multisets of rows (the default) or row by row in order.

Values compare by SQLite type: text with text, blobs with blobs, NULL with NULL, and numbers
with numbers. Two integers must be equal. When either number is a REAL, they are equal when

    |a - b| <= tolerance * max(1, |a|, |b|)

that is, `tolerance` is absolute for numbers up to 1 in size and relative above (`math.isclose`
with both tolerances set to it). `tolerance: 0` asks for exact equality (3 still equals 3.0).
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import attrs

__all__ = ["Difference", "first_difference", "same_row", "unordered_difference"]

Row = tuple[Any, ...]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float))


def _same_value(a: Any, b: Any, tolerance: float) -> bool:
    if _is_number(a) and _is_number(b):
        if isinstance(a, int) and isinstance(b, int):
            return a == b
        return math.isclose(a, b, rel_tol=tolerance, abs_tol=tolerance)
    return type(a) is type(b) and a == b


def same_row(a: Row, b: Row, tolerance: float) -> bool:
    """True when the rows have as many values and each pair is equal (see the module doc)."""
    return len(a) == len(b) and all(_same_value(x, y, tolerance) for x, y in zip(a, b, strict=True))


@attrs.frozen
class Difference:
    """Rows of the expected result the output lacks, and rows of the output not expected."""

    missing: list[Row]
    unexpected: list[Row]

    @property
    def empty(self) -> bool:
        """True when both results hold the same rows."""
        return not self.missing and not self.unexpected


def unordered_difference(
    expected: Sequence[Row], output: Sequence[Row], tolerance: float
) -> Difference:
    """Compare as multisets: every row counts as often as it occurs, order does not matter.

    Rows equal exactly are paired first; what is left is paired within the tolerance.
    """
    remaining = Counter(output)
    missing: list[Row] = []
    for row in expected:
        count = remaining.get(row, 0)
        if count:
            remaining[row] = count - 1
        else:
            missing.append(row)
    unexpected = list(remaining.elements())
    if tolerance > 0 and missing and unexpected:
        return _pair_within_tolerance(missing, unexpected, tolerance)
    return Difference(missing, unexpected)


def _shape(row: Row) -> tuple[Any, ...]:
    """What two rows must share exactly to be equal within a tolerance: all but the numbers."""
    return tuple(None if _is_number(value) else (type(value), value) for value in row)


def _numbers(row: Row) -> tuple[float, ...]:
    return tuple(float(value) for value in row if _is_number(value))


def _window(value: float, tolerance: float) -> float:
    """How far a number equal to `value` within `tolerance` can be from it (see module doc)."""
    if not math.isfinite(value):
        return 0.0  # an infinity equals only itself
    if tolerance >= 1:
        return math.inf
    return tolerance * max(1.0, abs(value)) / (1 - tolerance)


def _pair_within_tolerance(
    missing: list[Row], unexpected: list[Row], tolerance: float
) -> Difference:
    """Pair rows that differ only in numbers within the tolerance.

    Rows are grouped by their non-numeric values and sorted by their numbers; each missing row
    takes the first unpaired candidate whose first number is within reach (found by bisection)
    and whose values all match. Greedy pairing in sorted order: it can miss a pairing only when
    one row is within the tolerance of several others.
    """
    groups: dict[tuple[Any, ...], list[Row]] = {}
    for row in unexpected:
        groups.setdefault(_shape(row), []).append(row)
    for rows in groups.values():
        rows.sort(key=_numbers)
    firsts = {
        shape: [_numbers(row)[0] if _numbers(row) else 0.0 for row in rows]
        for shape, rows in groups.items()
    }
    paired: dict[tuple[Any, ...], set[int]] = {shape: set() for shape in groups}
    still_missing: list[Row] = []
    for row in sorted(missing, key=_numbers):
        shape = _shape(row)
        numbers = _numbers(row)
        candidates = groups.get(shape)
        if not candidates or not numbers:
            still_missing.append(row)
            continue
        keys = firsts[shape]
        reach = _window(numbers[0], tolerance)
        index = bisect.bisect_left(keys, numbers[0] - reach) if reach != math.inf else 0
        taken = paired[shape]
        while index < len(candidates) and keys[index] <= numbers[0] + reach:
            if index not in taken and same_row(row, candidates[index], tolerance):
                taken.add(index)
                break
            index += 1
        else:
            still_missing.append(row)
    left = [
        row
        for shape, rows in groups.items()
        for index, row in enumerate(rows)
        if index not in paired[shape]
    ]
    return Difference(still_missing, left)


def first_difference(
    expected: Sequence[Row], output: Sequence[Row], tolerance: float
) -> int | None:
    """Compare in order: the index of the first row that differs (or is absent), or None."""
    for index, (want, got) in enumerate(zip(expected, output, strict=False)):
        if not same_row(want, got, tolerance):
            return index
    if len(expected) != len(output):
        return min(len(expected), len(output))
    return None
