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

    Only rows with the same non-numeric values can pair, so rows are grouped by those first;
    each group is paired on its own (see `_pair_group`).
    """
    groups: dict[tuple[Any, ...], tuple[list[Row], list[Row]]] = {}
    for row in missing:
        groups.setdefault(_shape(row), ([], []))[0].append(row)
    for row in unexpected:
        groups.setdefault(_shape(row), ([], []))[1].append(row)
    still_missing: list[Row] = []
    left: list[Row] = []
    for wanted, offered in groups.values():
        if wanted and offered and _numbers(wanted[0]):
            unpaired_wanted, unpaired_offered = _pair_group(wanted, offered, tolerance)
        else:
            unpaired_wanted, unpaired_offered = wanted, offered
        still_missing.extend(unpaired_wanted)
        left.extend(unpaired_offered)
    return Difference(still_missing, left)


def _pair_group(
    wanted: list[Row], offered: list[Row], tolerance: float
) -> tuple[list[Row], list[Row]]:
    """Pair rows of one group: the unpaired rows of each side.

    The offered rows are sorted on the numeric column with the most distinct values, and each
    wanted row looks only at those within reach in that column (found by bisection), skipping
    rows already paired, and takes the first whose values all match. Greedy pairing in sorted
    order: it can miss a pairing only when one row is within the tolerance of several others.
    """
    numbers = [_numbers(row) for row in offered]
    width = len(numbers[0])
    column = max(range(width), key=lambda index: len({values[index] for values in numbers}))
    order = sorted(range(len(offered)), key=lambda index: numbers[index][column])
    keys = [numbers[index][column] for index in order]
    # free[i] leads to the first unpaired position >= i (path halving keeps the hops short).
    free = list(range(len(order) + 1))

    def first_free(position: int) -> int:
        while free[position] != position:
            free[position] = free[free[position]]
            position = free[position]
        return position

    unpaired: list[Row] = []
    for row in sorted(wanted, key=lambda row: _numbers(row)[column]):
        value = _numbers(row)[column]
        reach = _window(value, tolerance)
        low = 0 if reach == math.inf else bisect.bisect_left(keys, value - reach)
        position = first_free(low)
        while position < len(order) and keys[position] <= value + reach:
            if same_row(row, offered[order[position]], tolerance):
                free[position] = position + 1
                break
            position = first_free(position + 1)
        else:
            unpaired.append(row)
    left = [
        offered[order[position]]
        for position in range(len(order))
        if first_free(position) == position
    ]
    return unpaired, left


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
