"""How reports word one result and a duration."""

from __future__ import annotations

from gradekit import GradeResult
from gradekit.report._text import duration, result_text
from gradekit.report.model import ResultRecord


def test_an_error_whose_message_repeats_it_is_said_once():
    result = GradeResult.of_error(
        "numeric", "numeric", "ValueError: 'n/a' is not a number", message="'n/a' is not a number"
    )
    assert result_text(ResultRecord(result)) == "ValueError: 'n/a' is not a number"


def test_an_error_with_a_different_message_shows_both():
    result = GradeResult.of_error("code", "c", "KeyError: 'x'", message="lookup failed")
    assert result_text(ResultRecord(result)) == "KeyError: 'x' (lookup failed)"


def test_a_graded_result_shows_its_message_else_its_score():
    assert result_text(ResultRecord(GradeResult("k", "n", False, 0.25, "too short"))) == (
        "too short"
    )
    assert result_text(ResultRecord(GradeResult("k", "n", False, 0.25))) == "score 0.25"


def test_durations_read_in_ms_under_a_second():
    assert duration(41.2) == "41 ms"
    assert duration(12_345.0) == "12.3 s"
