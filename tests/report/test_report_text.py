"""How reports word one result and a duration."""

from __future__ import annotations

import pytest

from gradekit import GradeResult
from gradekit.report.model import ResultRecord, result_text
from gradekit.report.text import duration, escaped


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
    from gradekit.report.samples import cut, cut_text

    graded = "ab" * 50  # 100 characters
    once = cut_text(graded, 30)
    assert once == "a" + "ba" * 14 + "b…[cut 70 more characters]"
    assert cut(once, 100) == once  # fits: shown as it is
    assert cut(once, 10) == graded[:10] + "…[cut 90 more characters]"
    # A bound inside the marker: the marker is not split, its count kept.
    assert cut(once, 35) == once
    assert cut(once + "!", 35) == graded[:30] + "…[cut 71 more characters]"
    assert cut("z" * 50, 20) == "z" * 20 + "…[cut 30 more characters]"


HIDDEN = [
    *(chr(code) for code in range(0x20)),  # C0: ESC, NUL, BEL, a newline, a tab
    "\x7f",  # DEL
    *(chr(code) for code in range(0x80, 0xA0)),  # C1: U+009B is a CSI on some terminals
    *"\u202a\u202b\u202c\u202d\u202e",  # bidi embeddings and overrides
    *"\u2066\u2067\u2068\u2069",  # bidi isolates
    *"\u200e\u200f\u061c",  # bidi marks
    *"\u2028\u2029",  # line and paragraph separators
]


@pytest.mark.parametrize("character", HIDDEN)
def test_every_control_and_bidi_character_is_shown_as_its_escape(character: str) -> None:
    shown = escaped(f"a{character}b")
    assert shown == f"a\\{shown[2:-1]}b"
    assert shown[2:-1] in (f"x{ord(character):02x}", f"u{ord(character):04x}", "n", "r", "t")


def test_printable_text_is_kept_as_written() -> None:
    text = "naïve café \u2013 東京 😀 [red] `x` \\x1b"
    assert escaped(text) is text
