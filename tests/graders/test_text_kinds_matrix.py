"""The acceptance matrix of the text and number kinds: one row per documented behaviour."""

from __future__ import annotations

from typing import Any

import pytest

import gradekit
from gradekit import Sample

# (kind, options, output, expected, outcome, message)
Row = tuple[str, dict[str, Any], Any, Any, str, str]
MATRIX: list[Row] = [
    ("equality", {}, "hello", "hello", "pass", "output equals expected 'hello'"),
    ("equality", {}, "Hello", "hello", "fail", "expected 'hello', got 'Hello'"),
    (
        "equality",
        {"case_insensitive": True},
        "Hello",
        "hello",
        "pass",
        "output 'Hello' matches expected 'hello' after case_insensitive",
    ),
    (
        "equality",
        {"strip_whitespace": True},
        " a b ",
        "a b",
        "pass",
        "output ' a b ' matches expected 'a b' after strip_whitespace",
    ),
    (
        "equality",
        {"strip_punctuation": True},
        "yes.",
        "yes",
        "pass",
        "output 'yes.' matches expected 'yes' after strip_punctuation",
    ),
    ("numeric", {}, "1", 1.0, "pass", "got '1', expected '1.0' (off by 0; allowed 0.000001)"),
    (
        "numeric",
        {"accept_percent": True, "absolute_tolerance": 0.001},
        "50%",
        "0.5",
        "pass",
        "got '50%', expected '0.5' (off by 0; allowed 0.001)",
    ),
    (
        "numeric",
        {"accept_thousands_separators": True},
        "1,000",
        1000,
        "pass",
        "got '1,000', expected '1000' (off by 0; allowed 0.000001)",
    ),
    (
        "numeric",
        {"absolute_tolerance": 0.01},
        "1.02",
        1,
        "fail",
        "expected '1', got '1.02' (off by 0.02; allowed 0.01)",
    ),
    (
        "numeric",
        {"relative_tolerance": 0.1},
        "110",
        100,
        "pass",
        "got '110', expected '100' (off by 10; allowed 10)",
    ),
    (
        "numeric",
        {"absolute_tolerance": 0.5},
        "1.4",
        1,
        "pass",
        "got '1.4', expected '1' (off by 0.4; allowed 0.5)",
    ),
    (
        "numeric",
        {},
        "50%",
        0.5,
        "error",
        "'50%' is not a number; set accept_percent: true to read percentages",
    ),
    (
        "numeric",
        {"absolute_tolerance": 0.25},
        "0.5",
        0.25,
        "pass",
        "got '0.5', expected '0.25' (off by 0.25; allowed 0.25)",
    ),
    ("numeric", {}, "n/a", 5, "error", "'n/a' is not a number"),
    (
        "numeric",
        {},
        "25587",
        25587,
        "pass",
        "got '25587', expected '25587' (off by 0; allowed 0.000001)",
    ),
]


@pytest.mark.parametrize(
    "row", MATRIX, ids=[f"{row[0]}-{row[2]!r}-{row[3]!r}-{row[4]}" for row in MATRIX]
)
def test_matrix(row: Row) -> None:
    kind, options, output, expected, outcome, message = row
    grader = gradekit.create(kind, config=options)
    result = grader.grade(Sample(output=output, expected=expected))
    assert (result.outcome, result.message) == (outcome, message)
    assert result.kind == kind
    assert result.name == kind
    assert result.score == (1.0 if outcome == "pass" else 0.0)
    if outcome == "error":
        assert result.error == f"ValueError: {message}"
    else:
        assert result.error is None


def test_the_matrix_has_the_fifteen_rows_of_the_issue() -> None:
    assert len(MATRIX) == 15
