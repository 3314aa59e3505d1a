"""The `equality` kind: strict by default, normalisations in their documented order."""

from __future__ import annotations

from typing import Any

import pytest

import gradekit
from gradekit import GradeResult, Sample


def grade(output: Any, expected: Any, **options: Any) -> GradeResult:
    return gradekit.create("equality", config=options).grade(
        Sample(output=output, expected=expected)
    )


def test_strict_by_default() -> None:
    assert grade("Yes", "yes").outcome == "fail"
    assert grade("yes ", "yes").outcome == "fail"
    assert grade("yes", "yes").outcome == "pass"


def test_case_insensitive_alone_still_fails_on_punctuation() -> None:
    result = grade("Yes", "yes.", case_insensitive=True)
    assert result.outcome == "fail"
    assert result.message == "expected 'yes.', got 'Yes' (after case_insensitive: 'yes.' vs 'yes')"
    assert result.details == {"output": "yes", "expected": "yes."}


def test_case_insensitive_with_strip_punctuation_passes() -> None:
    result = grade("Yes", "yes.", case_insensitive=True, strip_punctuation=True)
    assert result.outcome == "pass"
    assert result.message == (
        "output 'Yes' matches expected 'yes.' after case_insensitive, strip_punctuation"
    )


def test_case_insensitive_uses_casefold() -> None:
    assert grade("STRASSE", "straße", case_insensitive=True).outcome == "pass"


def test_strip_whitespace_trims_and_collapses_every_unicode_space() -> None:
    assert grade("\t a \u00a0\n b\u3000", "a b", strip_whitespace=True).outcome == "pass"
    assert grade("a  b", "a b").outcome == "fail"


def test_strip_punctuation_removes_unicode_punctuation_not_symbols() -> None:
    assert grade("«Oui»… ¡sí!", "Oui sí", strip_punctuation=True).outcome == "pass"
    assert grade("「はい」。", "はい", strip_punctuation=True).outcome == "pass"
    result = grade("$5", "5", strip_punctuation=True)
    assert result.outcome == "fail"  # `$` is a symbol (Sc), not punctuation


def test_punctuation_removed_between_spaces_leaves_one_space_with_strip_whitespace() -> None:
    assert grade("a - b", "a b", strip_whitespace=True, strip_punctuation=True).passed
    # Without strip_whitespace the two spaces stay: whitespace was not asked to be normalised.
    assert not grade("a - b", "a b", strip_punctuation=True).passed


def test_whitespace_is_collapsed_after_casefold() -> None:
    # Order: casefold, then whitespace, then punctuation.
    result = grade(
        " A.B ", "ab", case_insensitive=True, strip_whitespace=True, strip_punctuation=True
    )
    assert result.passed
    assert result.details == {"output": "ab", "expected": "ab"}


def test_yaml_scalars_are_compared_as_their_text() -> None:
    assert grade("42", 42).passed
    assert grade("true", True).passed
    assert grade("0.5", 0.5).passed
    assert grade(42, "42").passed


def test_messages_cut_long_texts_and_details_keep_them() -> None:
    long = "x" * 100
    result = grade(long, "y")
    assert result.message == "expected 'y', got '" + "x" * 59 + "…'"
    assert result.details == {"output": long, "expected": "y"}
    result = grade(long, long)
    assert result.message == "output equals expected '" + "x" * 59 + "…'"
    assert result.details == {"output": long, "expected": long}


def test_short_texts_are_whole_in_the_message_and_need_no_details() -> None:
    assert grade("a", "b").details is None
    assert grade("a", "a").details is None


def test_no_expected_value_is_an_error_not_a_failure() -> None:
    result = grade("hello", None)
    assert result.outcome == "error"
    assert result.message == (
        "no expected value: equality compares the output with the sample's expected value; "
        "add 'expected' to the case or turn"
    )
    assert result.error == f"ValueError: {result.message}"


@pytest.mark.parametrize(
    ("output", "expected", "message"),
    [
        (
            "x",
            [1, 2],
            "the expected value is a list, not text: equality compares text; give a single "
            "value, or use the json kind with equals_expected: true",
        ),
        (
            {"a": 1},
            "x",
            "the output is a mapping, not text: equality compares text; "
            "use the json kind to grade structured output",
        ),
    ],
)
def test_structured_values_are_an_error(output: Any, expected: Any, message: str) -> None:
    result = grade(output, expected)
    assert (result.outcome, result.message) == ("error", message)


def test_unknown_option_names_the_key_with_a_suggestion() -> None:
    with pytest.raises(gradekit.ConfigError) as caught:
        gradekit.create("equality", config={"case_insensitve": True})
    assert str(caught.value) == (
        "invalid options for kind 'equality'\n"
        "$.case_insensitve: unknown option 'case_insensitve' for kind 'equality' "
        "(did you mean 'case_insensitive'?)"
    )


def test_name_and_inline() -> None:
    grader = gradekit.create("equality", name="exact answer")
    assert grader.grade(Sample(output="a", expected="a")).name == "exact answer"
    assert type(grader).inline is True


# -- Unicode normalisation ----------------------------------------------------------------

DECOMPOSED = "cafe\u0301"  # `e` then a combining acute accent: prints as café
COMPOSED = "caf\u00e9"  # one precomposed `é`


def test_texts_differing_only_in_unicode_form_fail_by_default_and_say_so() -> None:
    result = grade(DECOMPOSED, COMPOSED)
    assert result.outcome == "fail"
    assert result.message == (
        f"expected {COMPOSED!r}, got {DECOMPOSED!r} "
        "(equal after NFC normalisation; set normalize: nfc)"
    )
    assert result.details is None


def test_compatibility_forms_point_at_nfkc() -> None:
    result = grade("\uff11\uff12", "12")  # full-width digits
    assert (
        result.message
        == "expected '12', got '\uff11\uff12' (equal after NFKC normalisation; set normalize: nfkc)"
    )
    result = grade("\ufb01ne", "fine", normalize="nfc")  # the ligature `ﬁ` is no canonical form
    assert result.outcome == "fail"
    assert result.message == (
        "expected 'fine', got 'ﬁne' (after NFC normalisation: 'fine' vs 'ﬁne'; "
        "equal after NFKC normalisation; set normalize: nfkc)"
    )


def test_normalize_compares_the_normalised_texts() -> None:
    result = grade(DECOMPOSED, COMPOSED, normalize="nfc")
    assert result.outcome == "pass"
    assert (
        result.message
        == f"output {DECOMPOSED!r} matches expected {COMPOSED!r} after NFC normalisation"
    )
    assert result.details == {"output": COMPOSED, "expected": COMPOSED}
    assert grade("\uff11\uff12", "12", normalize="nfkc").passed
    assert grade("\ufb01ne", "fine", normalize="nfkc").passed
    assert not grade("cafe", COMPOSED, normalize="nfkc").passed  # an accent is no form


@pytest.mark.parametrize(
    ("output", "expected", "options"),
    [
        ("CAFE\u0301", COMPOSED, {"case_insensitive": True}),
        (" caf\u00e9 ! ", DECOMPOSED, {"strip_whitespace": True, "strip_punctuation": True}),
        ("\u2460", "1", {"strip_punctuation": True}),  # circled digit one
    ],
)
def test_the_hint_is_true_with_other_options_on(
    output: str, expected: str, options: dict[str, bool]
) -> None:
    result = grade(output, expected, **options)
    assert result.outcome == "fail"
    form = "nfkc" if output == "\u2460" else "nfc"
    assert result.message.endswith(
        f"; equal after {form.upper()} normalisation; set normalize: {form})"
    )
    assert grade(output, expected, normalize=form, **options).passed


def test_no_hint_when_the_texts_differ_in_more_than_form() -> None:
    assert grade("cafe", COMPOSED).message == f"expected {COMPOSED!r}, got 'cafe'"
    assert grade("Café", COMPOSED).message == f"expected {COMPOSED!r}, got 'Café'"


def test_normalize_takes_only_the_documented_forms() -> None:
    with pytest.raises(gradekit.ConfigError) as caught:
        gradekit.create("equality", config={"normalize": "nfd"})
    assert str(caught.value) == (
        "invalid options for kind 'equality'\n"
        "$.normalize: expected one of 'none', 'nfc', 'nfkc', got 'nfd'"
    )
    assert (
        gradekit.create("equality", config={"normalize": "none"})
        .grade(Sample(output=DECOMPOSED, expected=COMPOSED))
        .outcome
        == "fail"
    )


def test_an_integer_expected_is_compared_as_its_text() -> None:
    # A YAML or JSON integer (a dataset's `"expected": 42`) is its decimal text, as `as_text`
    # writes it; a bool is `true` / `false`, and an integer past `str`'s digits is written whole.
    assert grade("42", 42).message == "output equals expected '42'"
    failed = grade("042", 42)
    assert (failed.outcome, failed.message, failed.details) == (
        "fail",
        "expected '42', got '042'",
        None,
    )
    assert grade("-7", -7).outcome == "pass"
    assert grade("true", True).outcome == "pass"
    assert grade("1", True).outcome == "fail"
    huge = 10**5000  # past the 4,300 digits `str` writes
    assert grade("1" + "0" * 5000, huge).outcome == "pass"
    assert grade("42", 42, case_insensitive=True).outcome == "pass"
