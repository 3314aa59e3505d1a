"""The `numeric` kind: exact decimal comparison, tolerances, formats and extraction."""

from __future__ import annotations

from typing import Any

import pytest

import gradekit
from gradekit import GradeResult, Sample


def grade(output: Any, expected: Any, **options: Any) -> GradeResult:
    return gradekit.create("numeric", config=options).grade(
        Sample(output=output, expected=expected)
    )


def test_decimal_values_as_written_so_the_tolerance_boundary_is_inclusive() -> None:
    # As binary floats, 1.1 - 1 is 0.10000000000000009 and 1.3 - 1 is 0.30000000000000004.
    assert grade("1.1", "1", absolute_tolerance=0.1).passed
    assert grade("1.3", "1", absolute_tolerance=0.3).passed
    assert grade("0.7", "1", absolute_tolerance=0.3).passed
    assert not grade("1.3000000000000001", "1", absolute_tolerance=0.3).passed


def test_relative_tolerance_is_relative_to_the_expected_value() -> None:
    assert grade("90", "100", relative_tolerance=0.1).passed
    assert not grade("89.99", "100", relative_tolerance=0.1).passed
    # 11 is within 0.1 of the output 111, but not of the expected 100.
    assert not grade("111", "100", relative_tolerance=0.1).passed


def test_either_tolerance_passes() -> None:
    result = grade("0.001", "0", relative_tolerance=0.5, absolute_tolerance=0.01)
    assert result.passed
    assert result.message == "got '0.001', expected '0' (off by 0.001; allowed 0.01)"


def test_details_hold_the_numbers_as_exact_text() -> None:
    result = grade("14.14%", "0.14136", accept_percent=True, absolute_tolerance=0.001)
    assert result.passed
    assert result.details == {
        "output": "0.1414",
        "expected": "0.14136",
        "difference": "0.00004",
        "allowed": "0.001",
    }


def test_details_leave_out_numbers_written_as_plainly_as_read() -> None:
    """The sample and the message hold those texts already (as equality's details do)."""
    assert grade("25000", 25587).details == {"difference": "587", "allowed": "0.000001"}
    assert grade("1.0", "1").details == {"difference": "0", "allowed": "0.000001"}
    assert grade("1,000", "1000", accept_thousands_separators=True).details == {
        "output": "1000",
        "expected": "1000",
        "difference": "0",
        "allowed": "0.000001",
    }
    assert grade("It is 7.", "7", extract="first").details["output"] == "7"


def test_failure_message_says_by_how_much() -> None:
    result = grade("25000", 25587)
    assert result.outcome == "fail"
    assert result.message == "expected '25587', got '25000' (off by 587; allowed 0.000001)"


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("-5", "-5.0"),
        ("\u22125", "-5"),
        ("+5", "5"),
        (".5", "0.5"),
        ("5.", "5"),
        ("1e3", "1000"),
        ("1.5E-3", "0.0015"),
        ("  42\n", "42"),
        ("0", "-0"),
    ],
)
def test_number_forms(output: str, expected: str) -> None:
    assert grade(output, expected).passed


@pytest.mark.parametrize(
    "output", ["1,000", "1_000", "1\u00a0000", "1\u202f000", "1\u2007000", "1,000,000.5"]
)
def test_thousands_separators_only_with_the_option(output: str) -> None:
    expected = "1000000.5" if output.endswith(".5") else "1000"
    assert grade(output, expected, accept_thousands_separators=True).passed
    result = grade(output, expected)
    assert result.outcome == "error"
    assert result.message == (
        f"{output!r} is not a number; set accept_thousands_separators: true "
        "to read thousands separators"
    )


@pytest.mark.parametrize("output", ["1,00", "1,000,00", "1,000_000", "10,00,000"])
def test_separators_must_group_digits_by_three_with_one_separator(output: str) -> None:
    result = grade(output, "1", accept_thousands_separators=True)
    assert result.outcome == "error"
    assert result.message == f"{output!r} is not a number"


def test_percent_and_separators_together_name_both_options() -> None:
    result = grade("1,000%", "10")
    assert result.message == (
        "'1,000%' is not a number; set accept_percent: true and "
        "accept_thousands_separators: true to read percentages and thousands separators"
    )
    assert grade("1,000%", "10", accept_percent=True, accept_thousands_separators=True).passed


def test_percent_with_a_space() -> None:
    assert grade("50 %", "0.5", accept_percent=True).passed


@pytest.mark.parametrize("output", ["nan", "NaN", "inf", "-Infinity", "∞"])
def test_nan_and_infinity_are_an_error(output: str) -> None:
    result = grade(output, "1")
    assert result.outcome == "error"
    assert result.message == f"{output!r} is not a finite number"


def test_text_around_a_number_suggests_extract() -> None:
    result = grade("The answer is 42.", "42")
    assert result.outcome == "error"
    assert result.message == (
        "'The answer is 42.' is not a number; set extract: first, last or only "
        "to read a number inside text"
    )


def test_extract_first_last_only() -> None:
    text = "Between 3 and 5, so 4."
    assert grade(text, "3", extract="first").passed
    assert grade(text, "4", extract="last").passed
    result = grade(text, "4", extract="only")
    assert result.outcome == "error"
    assert result.message == (
        "expected exactly one number in 'Between 3 and 5, so 4.', found 3 (3, 5, 4); "
        "set extract: first or last to pick one"
    )
    assert grade("The answer is -42 km.", "-42", extract="only").passed


def test_extract_message_quotes_the_number_it_read() -> None:
    result = grade("Growth was 14.14% last year", "0.2", extract="first", accept_percent=True)
    assert result.message == "expected '0.2', got '14.14%' (off by 0.0586; allowed 0.000001)"


def test_extract_does_not_read_digits_inside_words() -> None:
    assert grade("H2O weighs 18", "18", extract="first").passed
    result = grade("the model v2", "2", extract="first")
    assert result.outcome == "error"
    assert result.message == "no number in 'the model v2'"


def test_extract_without_separators_reads_the_parts() -> None:
    assert grade("total: 25,587", "25", extract="first").passed
    assert grade("total: 25,587", "25587", extract="first", accept_thousands_separators=True).passed


def test_expected_value_that_is_not_a_number_is_an_error() -> None:
    result = grade("5", "five")
    assert result.outcome == "error"
    assert result.message == "expected value 'five' is not a number"
    result = grade("5", "5%")
    assert result.message == (
        "expected value '5%' is not a number; set accept_percent: true to read percentages"
    )


def test_no_expected_value_is_an_error() -> None:
    result = grade("5", None)
    assert result.outcome == "error"
    assert result.message == (
        "no expected value: numeric compares the output with the sample's expected value; "
        "add 'expected' to the case or turn"
    )


def test_huge_exponents_are_an_error_not_a_crash() -> None:
    result = grade("1e99999999999999999999", "1")
    assert result.outcome == "error"
    assert result.message == "'1e99999999999999999999' is too large or too small to compare"


@pytest.mark.parametrize("option", ["absolute_tolerance", "relative_tolerance"])
def test_negative_tolerance_is_a_config_error(option: str) -> None:
    with pytest.raises(gradekit.ConfigError) as caught:
        gradekit.create("numeric", config={option: -0.1})
    assert str(caught.value) == (
        "invalid options for kind 'numeric'\n"
        f"$.{option}: must be a finite number >= 0, got -0.1; use 0 or a positive tolerance"
    )
    assert caught.value.problems[0].path == (option,)


def test_nan_tolerance_is_a_config_error() -> None:
    with pytest.raises(gradekit.ConfigError, match="must be a finite number >= 0, got nan"):
        gradekit.create("numeric", config={"absolute_tolerance": float("nan")})


def test_tolerance_written_as_yaml_text_is_read() -> None:
    # YAML 1.1 reads `1e-3` without a dot as a string.
    assert grade("1.001", "1", absolute_tolerance="1e-3").passed


def test_bad_extract_is_a_config_error() -> None:
    with pytest.raises(gradekit.ConfigError) as caught:
        gradekit.create("numeric", config={"extract": "middle"})
    assert str(caught.value) == (
        "invalid options for kind 'numeric'\n"
        "$.extract: expected one of 'whole', 'first', 'last', 'only', 'any', got 'middle'"
    )


def test_inline() -> None:
    assert type(gradekit.create("numeric")).inline is True


@pytest.mark.parametrize("option", ["absolute_tolerance", "relative_tolerance"])
def test_an_infinite_tolerance_is_a_config_error(option: str) -> None:
    # It would pass every number (`absolute_tolerance: 1e400` reads as infinity).
    with pytest.raises(gradekit.ConfigError, match="must be a finite number >= 0, got inf"):
        gradekit.create("numeric", config={option: float("inf")})


# -- what a number is inside text (issue 34) ---------------------------------------------------


@pytest.mark.parametrize("text", ["42abc", "0x1F", "1e3abc", "12.5.3", "the 2nd", "1,000abc"])
@pytest.mark.parametrize("extract", ["first", "last", "only", "any"])
def test_digits_followed_by_letters_or_another_point_are_no_number(text: str, extract: str) -> None:
    # Before issue 34, `42abc` read 42, `0x1F` 0, `1e3abc` 1000 and `12.5.3` 12.5.
    result = grade(text, "1", extract=extract, accept_thousands_separators=True)
    assert result.outcome == "error"
    assert result.message == (
        f"no number in {text!r} (digits followed by letters or by another point and digits, "
        "as in 42abc or 1.2.3, are not numbers)"
    )


def test_a_glued_number_is_skipped_and_the_next_one_read() -> None:
    assert grade("the 2nd answer is 7", "7", extract="first").passed
    assert grade("v1.2.3 scored 88", "88", extract="only").passed
    assert grade("It is 12.5.", "12.5", extract="last").passed


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("\uff11\uff12\uff13", "123"),  # full-width digits
        ("\uff11\uff12\uff13\uff0e\uff15", "123.5"),  # and the full-width point
        ("\uff0d\uff11\uff12", "-12"),  # and minus
        ("١٢٣", "123"),  # Arabic-Indic digits
        ("\u0663\u066b\u0665", "3.5"),  # and the Arabic decimal separator
        ("۴۲", "42"),  # extended Arabic-Indic (Persian) digits
        ("१२३", "123"),  # Devanagari digits
        ("½", "0.5"),
        ("2½", "2.5"),
        ("-2¾", "-2.75"),
        ("⅛", "0.125"),
    ],
)
def test_unicode_digits_and_vulgar_fractions_are_numbers(output: str, expected: str) -> None:
    assert grade(output, expected, absolute_tolerance=0).passed
    assert grade(f"It is {output} exactly.", expected, extract="first", absolute_tolerance=0).passed
    assert not grade(output, "7").passed


def test_unicode_digits_in_expected_and_percent() -> None:
    assert grade("123", "\uff11\uff12\uff13").passed
    assert grade("50\uff05", "0.5", accept_percent=True).passed
    assert grade("\u0665\u0660\u066a", "0.5", accept_percent=True).passed


def test_a_fraction_that_does_not_end_is_read_to_28_digits() -> None:
    result = grade("⅓", "0.333", absolute_tolerance=0.001)
    assert result.passed
    assert result.details == {
        "output": "0.3333333333333333333333333333",
        "expected": "0.333",
        "difference": "0.0003333333333333333333333333",
        "allowed": "0.001",
    }
    assert not grade("⅓", "0.333").passed


def test_superscripts_and_circled_digits_are_not_digits() -> None:
    assert grade("x²", "2", extract="first").outcome == "error"
    assert grade("①", "1").outcome == "error"


def test_extract_any_passes_when_some_number_is_within_tolerance() -> None:
    assert grade("It is 3, 5 or 7.", "5", extract="any").passed
    assert grade("It is 3, 5 or 7.", "7.0005", extract="any", absolute_tolerance=0.001).passed
    result = grade("It is 3, 5 or 7.", "6", extract="any")
    assert result.outcome == "fail"
    assert result.message == (
        "expected '6', got no number within the tolerance, the closest '5' "
        "(off by 1; allowed 0.000001)"
    )
    assert result.details == {
        "output": "5",
        "expected": "6",
        "difference": "1",
        "allowed": "0.000001",
    }
    assert grade("nothing", "6", extract="any").message == "no number in 'nothing'"


def test_extract_any_skips_a_number_too_large_to_compare() -> None:
    assert grade("1e99999999999 or 4", "4", extract="any").passed
    result = grade("1e99999999999", "4", extract="any")
    assert result.message == "'1e99999999999' is too large or too small to compare"
