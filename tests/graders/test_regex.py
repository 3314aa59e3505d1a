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


# -- group: the captured text compared with the expected value (issue 34) ----------------------


def grade_group(output: Any, expected: Any, **options: Any) -> GradeResult:
    return gradekit.create("regex", config=options).grade(Sample(output=output, expected=expected))


def test_group_by_number_compares_the_captured_text_with_expected() -> None:
    pattern = r"ANSWER:\s*([A-D])"
    result = grade_group("Thinking... ANSWER: B", "B", pattern=pattern, group=1)
    assert result.outcome == "pass"
    assert result.message == r"group 1 of /ANSWER:\s*([A-D])/ captured 'B', as expected"
    assert result.details == {"match": "ANSWER: B", "group": 1, "captured": "B"}
    result = grade_group("ANSWER: C", "B", pattern=pattern, group=1)
    assert result.outcome == "fail"
    assert result.message == r"expected 'B', group 1 of /ANSWER:\s*([A-D])/ captured 'C'"


def test_group_by_name_and_the_whole_match() -> None:
    pattern = r"total: (?P<amount>\d+) (?P<unit>\w+)"
    assert grade_group("total: 12 kg", "kg", pattern=pattern, group="unit").passed
    assert not grade_group("total: 12 kg", "12", pattern=pattern, group="unit").passed
    assert grade_group("total: 12 kg", "total: 12 kg", pattern=pattern, group=0).passed


def test_group_with_case_insensitive_compares_without_case() -> None:
    options = {"pattern": r"answer: (\w)", "group": 1}
    assert not grade_group("Answer: b", "B", **options).passed  # no match: `answer` is lower case
    assert grade_group("Answer: b", "B", case_insensitive=True, **options).passed
    assert not grade_group("answer: b", "B", **options).passed


def test_group_compares_a_yaml_number_as_its_text() -> None:
    assert grade_group("The answer is 42", 42, pattern=r"(\d+)$", group=1).passed


def test_group_that_took_no_part_fails() -> None:
    result = grade_group("x", "y", pattern="x|(y)", group=1)
    assert result.outcome == "fail"
    assert result.message == "group 1 of /x|(y)/ captured nothing in 'x'"


def test_group_without_a_match_fails_and_without_expected_is_an_error() -> None:
    assert grade_group("nothing", "B", pattern=r"([A-D])$", group=1).message == (
        r"no match for /([A-D])$/ in 'nothing'"
    )
    result = grade_group("B", None, pattern=r"([A-D])$", group=1)
    assert result.outcome == "error"
    assert result.message == (
        "no expected value: regex compares the output with the sample's expected value; "
        "add 'expected' to the case or turn"
    )


@pytest.mark.parametrize(
    ("pattern", "group", "message"),
    [
        (
            "(a)",
            2,
            "the pattern has 1 group; give a number from 0 (the whole match) to 1, or the name "
            "of a (?P<name>...) group",
        ),
        (
            "(?P<x>a)",
            "y",
            "the pattern has no group named 'y' (its named groups: 'x'); give a number from 0 "
            "(the whole match) to 1, or the name of a (?P<name>...) group",
        ),
        ("(a)", True, "expected a group's number or name, got True (bool)"),
        ("(a)", "", "expected a group's number or name, got '' (str)"),
        ("(a)", 1.5, "expected a group's number or name, got 1.5 (float)"),
    ],
)
def test_a_group_the_pattern_lacks_is_a_config_error(
    pattern: str, group: Any, message: str
) -> None:
    with pytest.raises(gradekit.ConfigError) as caught:
        gradekit.create("regex", config={"pattern": pattern, "group": group})
    assert str(caught.value) == f"invalid options for kind 'regex'\n$.group: {message}"
