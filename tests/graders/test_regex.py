"""The `regex` kind."""

from __future__ import annotations

from typing import Any

import pytest

import gradekit
from gradekit import GradeResult, Sample


def grade(output: Any, **options: Any) -> GradeResult:
    return gradekit.create("regex", config=options).grade(Sample(output=output))


def test_search_by_default() -> None:
    result = grade("order 1234 shipped", pattern=r"order (?P<id>\d+)")
    assert (result.outcome, result.score) == ("pass", 1.0)
    assert result.message == r"found 'order 1234' matching /order (?P<id>\d+)/"
    assert result.details == {"match": "order 1234", "groups": ["1234"], "named": {"id": "1234"}}


def test_details_of_a_pattern_without_groups_hold_the_match() -> None:
    assert grade("abc 123", pattern=r"\d+").details == {"match": "123"}


def test_search_failure() -> None:
    result = grade("nothing here", pattern=r"\d+")
    assert (result.outcome, result.score) == ("fail", 0.0)
    assert result.message == r"no match for /\d+/ in 'nothing here'"
    assert result.details == {"match": None}


def test_full_match() -> None:
    assert grade("1234", pattern=r"\d+", full_match=True).passed
    result = grade("1234 ", pattern=r"\d+", full_match=True)
    assert result.outcome == "fail"
    assert result.message == r"output '1234 ' does not fully match /\d+/"


def test_case_insensitive() -> None:
    result = grade("YES", pattern="yes", case_insensitive=True)
    assert result.passed
    assert result.message == "found 'YES' matching /yes/i"
    assert not grade("YES", pattern="yes").passed


def test_invalid_pattern_is_a_config_error_at_creation() -> None:
    with pytest.raises(gradekit.ConfigError) as caught:
        gradekit.create("regex", config={"pattern": "(unclosed"})
    assert str(caught.value) == (
        "invalid options for kind 'regex'\n"
        "$.pattern: invalid regular expression '(unclosed': missing ), unterminated subpattern "
        "at position 0; fix the pattern (Python re syntax)"
    )
    assert caught.value.problems[0].path == ("pattern",)


def test_pattern_is_required() -> None:
    with pytest.raises(gradekit.ConfigError) as caught:
        gradekit.create("regex")
    assert (
        str(caught.value) == "invalid options for kind 'regex'\n$.pattern: this option is required"
    )


def test_not_inline_because_a_pattern_can_backtrack_for_long() -> None:
    assert (
        getattr(type(gradekit.create("regex", config={"pattern": "a"})), "inline", False) is False
    )
