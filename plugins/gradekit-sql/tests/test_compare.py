"""The result-set comparison rules, on rows as SQLite returns them."""

from __future__ import annotations

import math

import pytest

from gradekit_sql._compare import first_difference, same_row, unordered_difference


def test_rows_are_a_multiset() -> None:
    difference = unordered_difference([(1,), (1,), (2,)], [(2,), (1,)], 0.0)
    assert difference.missing == [(1,)]
    assert difference.unexpected == []
    assert unordered_difference([(1,), (2,)], [(2,), (1,)], 0.0).empty


@pytest.mark.parametrize(
    ("a", "b", "tolerance", "equal"),
    [
        (1, 1.0, 0.0, True),  # an integer equals the REAL of the same value
        (10**15, 10**15 + 1, 0.5, False),  # two integers: exact, whatever the tolerance
        (0.0, 1e-6, 1e-6, True),  # absolute below 1
        (0.0, 1.1e-6, 1e-6, False),
        (1e6, 1e6 + 1, 1e-6, True),  # relative above 1
        (1e6, 1e6 + 1.1, 1e-6, False),
        (math.inf, math.inf, 1e-6, True),
        (math.inf, -math.inf, 1e-6, False),
        ("1", 1, 0.5, False),  # text is never a number
        (b"a", "a", 0.0, False),  # a blob is not text
        (None, None, 0.0, True),
        (None, 0, 0.5, False),
    ],
)
def test_value_equality(a: object, b: object, tolerance: float, equal: bool) -> None:
    assert same_row((a,), (b,), tolerance) is equal
    assert unordered_difference([(a,)], [(b,)], tolerance).empty is equal


def test_rows_close_in_numbers_pair_even_when_sorted_apart() -> None:
    # Sorted exactly, (1.0, 'a') would face (1.0, 'b'): pairing looks within each text value.
    expected = [(1.0, "b"), (1.0000001, "a")]
    output = [(1.0000001, "b"), (1.0, "a")]
    assert unordered_difference(expected, output, 1e-6).empty
    assert not unordered_difference(expected, output, 0.0).empty


def test_many_close_rows_pair_quickly() -> None:
    expected = [(index * 0.5, index) for index in range(20_000)]
    output = [(value + 1e-9, key) for value, key in reversed(expected)]
    assert unordered_difference(expected, output, 1e-6).empty


def test_each_row_pairs_once() -> None:
    difference = unordered_difference([(1.0,), (1.0,)], [(1.0000001,)], 1e-6)
    assert difference.missing == [(1.0,)]
    assert difference.unexpected == []


def test_first_difference_in_order() -> None:
    assert first_difference([(1,), (2,)], [(1,), (2,)], 0.0) is None
    assert first_difference([(1,), (2,)], [(2,), (1,)], 0.0) == 0
    assert first_difference([(1,), (2,)], [(1,)], 0.0) == 1
    assert first_difference([(1,)], [(1,), (2,)], 0.0) == 1


def test_close_rows_pair_quickly_when_a_column_is_constant() -> None:
    # Pairing looks along the column that tells rows apart, not the constant first one.
    expected = [(1.0, index * 0.5) for index in range(20_000)]
    output = [(1.0, value + 1e-9) for _, value in reversed(expected)]
    assert unordered_difference(expected, output, 1e-6).empty


def test_unpaired_rows_of_both_sides_are_reported() -> None:
    difference = unordered_difference(
        [(1.0, "a"), (5.0, "a")], [(1.0000001, "a"), (9.0, "a")], 1e-6
    )
    assert difference.missing == [(5.0, "a")]
    assert difference.unexpected == [(9.0, "a")]
