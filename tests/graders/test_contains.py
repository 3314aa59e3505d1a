"""The `contains` and `not_contains` kinds."""

from __future__ import annotations

from typing import Any

import pytest

import gradekit
from gradekit import GradeResult, Sample


def grade(kind: str, output: Any, **options: Any) -> GradeResult:
    return gradekit.create(kind, config=options).grade(Sample(output=output))


def test_all_mode_scores_the_fraction_found() -> None:
    result = grade("contains", "apples and pears", values=["apples", "plums", "pears", "figs"])
    assert result.outcome == "fail"
    assert result.score == 0.5
    assert result.message == "missing 'plums', 'figs' in 'apples and pears' (found 2 of 4)"
    assert result.details == {"missing": ["plums", "figs"]}


def test_all_mode_with_no_value_found_names_every_value_as_given() -> None:
    result = grade("contains", "Apples", values=["apples", "it's"], case_insensitive=False)
    assert (result.outcome, result.score) == ("fail", 0.0)
    assert result.message == """missing 'apples', "it's" in 'Apples' (found 0 of 2)"""
    assert result.details == {"missing": ["apples", "it's"]}


def test_all_mode_passes_when_every_value_is_found() -> None:
    result = grade("contains", "apples and pears", values=["apples", "pears"])
    assert (result.outcome, result.score) == ("pass", 1.0)
    assert result.message == "found all of 'apples', 'pears'"


def test_any_mode_is_binary() -> None:
    result = grade("contains", "only pears", values=["apples", "pears"], mode="any")
    assert (result.outcome, result.score, result.message) == ("pass", 1.0, "found 'pears'")
    result = grade("contains", "nothing", values=["apples", "pears"], mode="any")
    assert (result.outcome, result.score) == ("fail", 0.0)
    assert result.message == "found none of 'apples', 'pears' in 'nothing'"


def test_case_insensitive_casefolds_both_sides() -> None:
    assert grade("contains", "STRASSE 5", values=["straße"], case_insensitive=True).passed
    assert not grade("contains", "STRASSE 5", values=["straße"]).passed


def test_yaml_scalar_output_is_searched_as_text() -> None:
    assert grade("contains", 12345, values=["234"]).passed


def test_structured_output_is_an_error() -> None:
    result = grade("contains", ["a"], values=["a"])
    assert result.outcome == "error"
    assert result.message == (
        "the output is a list, not text: contains compares text; "
        "use the json kind to grade structured output"
    )


def test_not_contains() -> None:
    result = grade("not_contains", "I cannot help", values=["cannot", "sorry", "help"])
    assert (result.outcome, result.score) == ("fail", 0.0)
    assert result.message == "found forbidden 'cannot', 'help' in 'I cannot help'"
    assert result.details == {"found": ["cannot", "help"]}
    result = grade("not_contains", "Sure, here it is", values=["Sorry"])
    assert (result.outcome, result.message) == ("pass", "found none of 'Sorry'")
    assert not grade("not_contains", "SORRY", values=["sorry"], case_insensitive=True).passed


@pytest.mark.parametrize("kind", ["contains", "not_contains"])
@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({}, "$.values: this option is required"),
        ({"values": []}, "$.values: give at least one value to look for"),
        ({"values": "abc"}, "$.values: expected a list, got 'abc'"),
        (
            {"values": ["a", ""]},
            "$.values: item 1 is an empty string, which every text contains; remove it",
        ),
        ({"values": [42]}, "$.values[0]: expected a string, got 42 (int)"),
    ],
)
def test_bad_values_are_a_config_error(kind: str, options: dict[str, Any], problem: str) -> None:
    with pytest.raises(gradekit.ConfigError) as caught:
        gradekit.create(kind, config=options)
    assert str(caught.value) == f"invalid options for kind '{kind}'\n{problem}"


def test_bad_mode_is_a_config_error() -> None:
    with pytest.raises(gradekit.ConfigError) as caught:
        gradekit.create("contains", config={"values": ["a"], "mode": "some"})
    assert str(caught.value) == (
        "invalid options for kind 'contains'\n$.mode: expected one of 'all', 'any', got 'some'"
    )


def test_not_contains_takes_no_mode() -> None:
    with pytest.raises(gradekit.ConfigError, match="unknown option 'mode'"):
        gradekit.create("not_contains", config={"values": ["a"], "mode": "any"})


def test_inline() -> None:
    for kind in ("contains", "not_contains"):
        assert type(gradekit.create(kind, config={"values": ["a"]})).inline is True
