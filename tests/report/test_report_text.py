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


def test_a_cut_text_counts_what_is_missing_from_the_text_graded():
    from gradekit.report._sample_text import cut
    from gradekit.report.samples import cut_text

    graded = "ab" * 50  # 100 characters
    once = cut_text(graded, 30)
    assert once == "a" + "ba" * 14 + "b…[cut 70 more characters]"
    assert cut(once, 100) == once  # fits: shown as it is
    assert cut(once, 10) == graded[:10] + "…[cut 90 more characters]"
    # A bound inside the marker: the marker is not split, its count kept.
    assert cut(once, 35) == once
    assert cut(once + "!", 35) == graded[:30] + "…[cut 71 more characters]"
    assert cut("z" * 50, 20) == "z" * 20 + "…[cut 30 more characters]"
