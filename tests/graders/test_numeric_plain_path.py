"""The `numeric` kind's plain path gives the general path's result, for every input.

`Numeric.grade` reads two short plain numbers (`-12.5`, a YAML int or float expected value)
without the number grammar; `Numeric._graded` is the path every other sample takes. Here
both grade the same samples, which must give equal results (passed, score, message, details,
error), or raise the same error.
"""

from __future__ import annotations

import decimal
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import gradekit
from gradekit import GradeResult, Sample

EDGE_TEXTS = [
    "0",
    "-0",
    "-0.0",
    "0.0",
    "1.",
    ".5",
    "-.5",
    "5.",
    ".",
    "-",
    "-.",
    "",
    "1-2",
    "--1",
    "1..2",
    "1.2.3",
    "-5-",
    "+5",
    " 5",
    "5 ",
    "5\n",
    "1e5",
    "1E5",
    "1e-05",
    "1_000",
    "1,000",
    "nan",
    "inf",
    "-Infinity",
    "\u22125",
    "\u0663",  # ARABIC-INDIC DIGIT THREE: isdecimal, not ASCII
    "\uff15",  # FULLWIDTH DIGIT FIVE
    "1\u0663",
    "-\u0663",
    "-\uff15.5",
    "1",
    "2",
    "0.5",
    "1.5",
    "-1.5",
    "0.0000001",
    "0.00000001",
    "007",
    "6686.95",
    "6687.95",
    "6687.950000000001",
    "9" * 28,
    "9" * 29,
    "1" + "0" * 59,
    "1" + "0" * 60,
    "0." + "0" * 57 + "1",
    "0." + "0" * 58 + "1",
    "-" + "9" * 59,
    "-" + "9" * 60,
    "1" * 1001,
    "1" * 1001 + ".5",
]

plain_texts = st.from_regex(r"\A-?[0-9]{0,62}(\.[0-9]{0,8})?\Z")
near_plain_texts = st.from_regex(r"\A[-+.0-9]{0,6}\Z")
texts = st.one_of(
    st.sampled_from(EDGE_TEXTS),
    plain_texts,
    near_plain_texts,
    st.decimals(allow_nan=False, allow_infinity=False).map(str),
    st.text(max_size=8),
)
expected_values = st.one_of(
    texts,
    st.integers(),
    st.integers(min_value=10**55, max_value=10**65),
    st.integers(min_value=-(10**65), max_value=-(10**55)),
    st.floats(),
    st.sampled_from([0.0, -0.0, 1e-05, 1e16, 1.5, 6686.95, float("nan"), float("inf")]),
    st.booleans(),
    st.none(),
)
outputs = st.one_of(texts, st.integers(), st.floats(), st.booleans(), st.none())
options = st.fixed_dictionaries(
    {},
    optional={
        "absolute_tolerance": st.sampled_from([0.0, 1e-6, 0.01, 1.0, 1.5, 1e-30, 1e300]),
        "relative_tolerance": st.sampled_from([0.0, 0.1]),
        "accept_percent": st.booleans(),
        "accept_thousands_separators": st.booleans(),
        "extract": st.sampled_from(["whole", "first"]),
    },
)


def both_paths(output: Any, expected: Any, config: dict[str, Any]) -> tuple[Any, Any]:
    """(what grade gives, what the general path gives): a result or the error raised."""
    grader = gradekit.create("numeric", config=config)
    sample = Sample(output=output, expected=expected)
    given_results = []
    for grade in (grader.grade, grader._graded):
        try:
            given_results.append(grade(sample))
        except ValueError as error:  # str() of an int of more than 4300 digits
            given_results.append(f"raises ValueError: {error}")
    return given_results[0], given_results[1]


@given(outputs, expected_values, options)
@example("6686.95", "6686.95", {})
@example("6687.95", "6686.95", {})
@example("5", 5, {})
@example("6", 5, {})
@example("-0", 0, {})
@example("05", 5, {})
@example("1.", 1.0, {})
@example("0.00001", 1e-05, {})
@example("-0.0", -0.0, {})
@example("5", True, {})
@example("1" * 61, int("1" * 61), {})
@example("0.0000001", "0", {"absolute_tolerance": 0.0})
@example("1.000000001", "1", {"absolute_tolerance": 1e-30})
def test_the_plain_path_gives_the_general_paths_result(
    output: Any, expected: Any, config: dict[str, Any]
) -> None:
    plain, general = both_paths(output, expected, config)
    assert plain == general
    assert repr(plain) == repr(general)
    if isinstance(plain, GradeResult):
        assert type(plain) is GradeResult


@given(plain_texts, plain_texts)
def test_plain_numbers_against_each_other(output: str, expected: str) -> None:
    # The plain path's own ground, mostly: two plain texts, the default options.
    plain, general = both_paths(output, expected, {})
    assert plain == general
    assert repr(plain) == repr(general)


@given(st.one_of(texts, st.integers().map(str), st.floats().map(str)), options)
def test_the_same_text_in_output_and_expected(text: str, config: dict[str, Any]) -> None:
    for expected in (text, int(text) if text.isdecimal() and text.isascii() else text):
        plain, general = both_paths(text, expected, config)
        assert plain == general
        assert repr(plain) == repr(general)


EDGE_EXPECTED = [*EDGE_TEXTS, 0, 5, -5, 10**59, 10**60, 0.0, -0.0, 1e-05, 5.0, 6686.95, True]


@pytest.mark.parametrize(
    "config",
    [{}, {"absolute_tolerance": 0.0}, {"absolute_tolerance": 1.0}, {"relative_tolerance": 0.1}],
)
def test_every_edge_text_against_every_edge_value(config: dict[str, Any]) -> None:
    unequal = [
        (output, expected)
        for output in EDGE_TEXTS
        for expected in EDGE_EXPECTED
        if both_paths(output, expected, config)[0] != both_paths(output, expected, config)[1]
    ]
    assert unequal == []


@pytest.mark.parametrize(
    ("output", "expected"),
    [("6687.95", "6686.95"), ("6686.95", "6686.95"), ("6", 5), ("1.00000001", "1")],
)
def test_a_changed_decimal_context_changes_nothing(output: str, expected: Any) -> None:
    # The plain path reads and subtracts under the grader's own context, never the thread's.
    grader = gradekit.create("numeric")
    sample = Sample(output=output, expected=expected)
    with decimal.localcontext() as context:
        context.prec = 1
        context.traps[decimal.InvalidOperation] = False
        context.traps[decimal.Inexact] = True
        inside = grader.grade(sample)
    assert inside == grader._graded(sample)


def test_an_int_too_long_for_str_is_graded_the_same_on_both_paths() -> None:
    plain, general = both_paths("5", 10**5000, {})
    assert plain == general
    assert "raises" not in str(plain)
