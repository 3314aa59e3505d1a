"""The `regex` kind."""

from __future__ import annotations

import time
from pathlib import Path
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
        "$.pattern: invalid regular expression '(unclosed': missing ) at position 9; fix the "
        "pattern (Python re syntax)"
    )
    assert caught.value.problems[0].path == ("pattern",)


def test_pattern_is_required() -> None:
    with pytest.raises(gradekit.ConfigError) as caught:
        gradekit.create("regex")
    assert (
        str(caught.value) == "invalid options for kind 'regex'\n$.pattern: this option is required"
    )


def test_inline_so_a_dataset_of_regex_cases_is_graded_in_batches() -> None:
    assert getattr(type(gradekit.create("regex", config={"pattern": "a"})), "inline", False)


def test_a_pattern_backtracking_past_the_timeout_is_a_timeout_error(tmp_path: Path) -> None:
    # (a|a)*$ on 40 a's and a b backtracks until its match time limit (2 s of CPU); the
    # grader's timeout, shorter, holds first.
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: backtrack\n"
        "timeout: 0.1\n"
        "graders:\n"
        "  - {kind: regex, pattern: '^(a|a)*$'}\n"
        "cases:\n"
        f"  - {{name: slow, output: {'a' * 40}b}}\n"
        "  - {name: quick, output: aaa}\n",
        encoding="utf-8",
    )
    report = gradekit.run_suite(gradekit.load_suite(suite))
    slow, quick = report.cases
    assert slow.outcome == "error"
    assert slow.turns[0].results[0].result.error == "TimeoutError: grader 'regex' exceeded 0.1s"
    assert quick.outcome == "pass"


def test_the_issues_nested_repeat_is_graded_at_once() -> None:
    # Python's re backtracked about an hour on this (issue 30), holding the GIL throughout.
    started = time.perf_counter()
    result = grade("a" * 34 + "b", pattern="^(a+)+$")
    assert (result.passed, result.error) == (False, None)
    assert time.perf_counter() - started < 1


def test_a_match_past_its_time_limit_is_an_error_naming_the_option_and_the_limit() -> None:
    result = grade("a" * 40 + "b", pattern="^(a|a)*$")
    assert (result.passed, result.score) == (False, 0.0)
    assert result.error == (
        "PatternTimeoutError: pattern: the pattern '^(a|a)*$' did not finish matching within 2s "
        "of CPU time (it backtracks: nested repeats such as (a+)+ or (a|a)* take exponential "
        "time on a text that almost matches); rewrite it without a repeat inside a repeat that "
        "can match the same text"
    )
