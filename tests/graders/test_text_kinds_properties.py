"""Properties of the text and number kinds, checked with hypothesis.

The contract every kind keeps (never raises, a well-formed result, deterministic) is
gradekit.testing's, checked here over random option combinations; equality is invariant under
the normalisations it declares; numeric is symmetric in how a number is written and exact on
decimal values.
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import gradekit
from gradekit import GradeResult, Sample
from gradekit.core.types import is_well_formed
from gradekit.testing._grading_rules import difference, result_problem

# -- strategies ---------------------------------------------------------------------------

number_texts = st.one_of(
    st.decimals(allow_nan=False, allow_infinity=False).map(str),
    st.integers().map(lambda n: f"{n:,}"),
    st.from_regex(r"\A[+\-\u2212]?[0-9_,.\u00a0]{0,12}(e[+-]?[0-9]{1,3})?%?\Z"),
    st.sampled_from(["nan", "inf", "-Infinity", "∞", "1e999999999999999999", "", " "]),
)
texts = st.one_of(st.text(), number_texts, number_texts.map(lambda t: f"The answer is {t}."))
yaml_scalars = st.one_of(
    texts,
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
tolerances = st.one_of(st.just(0.0), st.floats(min_value=0, max_value=1e6), st.just(1e-6))

configs = st.one_of(
    st.tuples(
        st.just("equality"),
        st.fixed_dictionaries(
            {},
            optional={
                "normalize": st.sampled_from(["none", "nfc", "nfkc"]),
                "case_insensitive": st.booleans(),
                "strip_whitespace": st.booleans(),
                "strip_punctuation": st.booleans(),
            },
        ),
    ),
    st.tuples(
        st.just("numeric"),
        st.fixed_dictionaries(
            {},
            optional={
                "absolute_tolerance": tolerances,
                "relative_tolerance": tolerances,
                "accept_percent": st.booleans(),
                "accept_thousands_separators": st.booleans(),
                "extract": st.sampled_from(["whole", "first", "last", "only", "any"]),
            },
        ),
    ),
    st.tuples(
        st.sampled_from(["contains", "not_contains"]),
        st.fixed_dictionaries(
            {"values": st.lists(st.text(min_size=1), min_size=1, max_size=4)},
            optional={"case_insensitive": st.booleans()},
        ),
    ),
    st.tuples(
        st.just("contains"),
        st.fixed_dictionaries(
            {"values": st.lists(st.text(min_size=1), min_size=1), "mode": st.just("any")}
        ),
    ),
    st.tuples(
        st.just("regex"),
        st.fixed_dictionaries(
            {
                "pattern": st.one_of(
                    st.sampled_from([r"\d+", r"^yes$", r"(?P<w>\w+)\s", "", r"[.,!?]"]),
                    st.text(max_size=5).map(re.escape),
                )
            },
            optional={"case_insensitive": st.booleans(), "full_match": st.booleans()},
        ),
    ),
    st.tuples(
        st.just("json"),
        st.fixed_dictionaries(
            {},
            optional={
                "equals_expected": st.booleans(),
                "schema": st.sampled_from([{"type": "object"}, {"items": {"type": "integer"}}]),
            },
        ),
    ),
)


# -- every kind -----------------------------------------------------------------------------


@given(configs, yaml_scalars, yaml_scalars)
def test_random_configs_keep_the_contract_and_the_text_kinds_promises(
    config: tuple[str, dict[str, Any]], output: Any, expected: Any
) -> None:
    # The contract's own checks (gradekit.testing, which runs every kind through
    # GraderContract in tests/testing/test_builtin_contract.py) over option combinations its
    # fixed example configs do not reach; then what the text kinds promise beyond it.
    kind, options = config
    grader = gradekit.create(kind, config=options)
    sample = Sample(output=output, expected=expected)
    result = grader.grade(sample)
    assert result_problem(result, kind, kind) is None
    assert difference(result, grader.grade(sample)) is None
    assert difference(result, gradekit.create(kind, config=options).grade(sample)) is None
    assert result.message
    if result.outcome == "error":
        assert result.error == f"ValueError: {result.message}"
    # The kinds marked `well_formed` are not checked again by the batch runner, which trusts
    # them to return exactly a GradeResult.
    assert type(result) is GradeResult
    assert is_well_formed(grader.grade) is (
        kind in {"equality", "numeric", "contains", "not_contains", "regex", "json"}
    )


# -- equality -------------------------------------------------------------------------------

WHITESPACE = [chr(code) for code in range(0x3100) if chr(code).isspace()]
PUNCTUATION_CATEGORIES = ["Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po"]
punctuation = st.characters(categories=PUNCTUATION_CATEGORIES)
words = st.lists(
    st.text(st.characters(exclude_categories=["Z", "Cc", *PUNCTUATION_CATEGORIES]), min_size=1),
    min_size=1,
    max_size=5,
)
spaces = st.text(st.sampled_from(WHITESPACE), min_size=1, max_size=3)


def equality(output: str, expected: str, **options: Any) -> GradeResult:
    return gradekit.create("equality", config=options).grade(
        Sample(output=output, expected=expected)
    )


def documented_normalisation(text: str, options: dict[str, Any]) -> str:
    """The docs' pipeline, written independently of the grader."""
    form = {"nfc": "NFC", "nfkc": "NFKC"}.get(options.get("normalize", "none"))
    if form:
        text = unicodedata.normalize(form, text)
    if options.get("case_insensitive"):
        text = text.casefold()
    if options.get("strip_whitespace"):
        text = " ".join(text.split())
    if options.get("strip_punctuation"):
        text = "".join(c for c in text if not unicodedata.category(c).startswith("P"))
        if options.get("strip_whitespace"):
            text = " ".join(text.split())
    if form:
        text = unicodedata.normalize(form, text)  # again: the other steps may undo the form
    return text


@given(st.text(), st.text())
def test_equality_is_strict_by_default(output: str, expected: str) -> None:
    assert equality(output, expected).passed == (output == expected)


options_sets = st.fixed_dictionaries(
    {
        "normalize": st.sampled_from(["none", "nfc", "nfkc"]),
        "case_insensitive": st.booleans(),
        "strip_whitespace": st.booleans(),
        "strip_punctuation": st.booleans(),
    }
)


@given(options_sets, st.text(), st.text())
def test_equality_depends_only_on_the_normalised_texts(
    options: dict[str, Any], output: str, expected: str
) -> None:
    result = equality(output, expected, **options)
    normalised_output = documented_normalisation(output, options)
    normalised_expected = documented_normalisation(expected, options)
    assert result.passed == (normalised_output == normalised_expected)
    # Normalising either side first changes nothing: the grader already did it.
    assert equality(normalised_output, expected, **options).passed == result.passed
    assert equality(output, normalised_expected, **options).passed == result.passed


@given(st.text(st.characters(codec="ascii")), st.data())
def test_equality_case_insensitive_ignores_case(text: str, data: st.DataObject) -> None:
    flips = data.draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
    changed = "".join(c.swapcase() if flip else c for c, flip in zip(text, flips, strict=True))
    assert equality(changed, text, case_insensitive=True).passed


@given(words, st.lists(spaces, min_size=2, max_size=6), st.booleans(), st.booleans())
def test_equality_strip_whitespace_ignores_runs_of_whitespace(
    parts: list[str], gaps: list[str], lead: bool, trail: bool
) -> None:
    assume(len(gaps) >= len(parts) + 1)
    spaced = gaps[0] if lead else ""
    spaced += "".join(word + gap for word, gap in zip(parts, gaps[1:], strict=False))
    spaced = spaced if trail else spaced.rstrip()
    assert equality(spaced, " ".join(parts), strip_whitespace=True).passed


@given(st.text(), st.lists(st.tuples(st.integers(min_value=0), punctuation), max_size=5))
def test_equality_strip_punctuation_ignores_inserted_punctuation(
    text: str, insertions: list[tuple[int, str]]
) -> None:
    changed = text
    for position, mark in insertions:
        at = position % (len(changed) + 1)
        changed = changed[:at] + mark + changed[at:]
    assert equality(changed, text, strip_punctuation=True).passed


ascii_words = st.lists(
    st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=1),
    min_size=1,
    max_size=5,
)


# ASCII words: the dotless i (U+0131) upper-cases to `I`, whose casefold is `i`.
@given(ascii_words, st.lists(punctuation, min_size=1), spaces)
def test_equality_all_normalisations_together(parts: list[str], marks: list[str], gap: str) -> None:
    expected = " ".join(parts)
    noisy = gap + f"{gap}{marks[0]}{gap}".join(part.upper() for part in parts) + "".join(marks)
    assert equality(
        noisy, expected, case_insensitive=True, strip_whitespace=True, strip_punctuation=True
    ).passed


FORM_HINT = re.compile(r"equal after (NFC|NFKC) normalisation; set normalize: (nfc|nfkc)\)$")
STRONGER = {"none": ["nfc", "nfkc"], "nfc": ["nfkc"], "nfkc": []}


@given(options_sets, st.text(), st.sampled_from(["NFC", "NFD", "NFKC", "NFKD"]))
def test_equality_names_the_form_that_would_make_a_mismatch_pass(
    options: dict[str, Any], text: str, form: str
) -> None:
    expected = unicodedata.normalize(form, text)  # the same text, maybe in another form
    result = equality(text, expected, **options)
    hint = FORM_HINT.search(result.message)
    if result.passed:
        assert hint is None
        return
    would_pass = [
        suggested
        for suggested in STRONGER[options["normalize"]]
        if equality(text, expected, **{**options, "normalize": suggested}).passed
    ]
    # The hint names the weakest form that passes, and only ever one that does.
    assert (hint[2] if hint else None) == (would_pass[0] if would_pass else None)


# -- numeric --------------------------------------------------------------------------------


def numeric(output: Any, expected: Any, **options: Any) -> GradeResult:
    return gradekit.create("numeric", config=options).grade(
        Sample(output=output, expected=expected)
    )


def spellings(n: int) -> list[str]:
    """Ways to write the integer `n`, all readable with accept_thousands_separators."""
    forms = [
        str(n),
        f"{n:,}",
        f"{n:_}",
        f"{n:,}".replace(",", "\u00a0"),
        f"{n:,}".replace(",", "\u202f"),
        f"{n}.0",
        f"{n}.000",
        f"{n:,}.0",
        f"{Decimal(n):e}",
    ]
    if n >= 0:
        forms.append(f"+{n}")
    else:
        forms.append(f"\u2212{-n}")
    return forms


@given(st.integers(min_value=-(10**15), max_value=10**15), st.data())
def test_numeric_is_symmetric_in_formatting(n: int, data: st.DataObject) -> None:
    written = data.draw(st.sampled_from(spellings(n)))
    other = data.draw(st.sampled_from(spellings(n)))
    for output, expected in [(written, n), (written, str(n)), (str(n), written), (written, other)]:
        result = numeric(output, expected, accept_thousands_separators=True)
        assert result.outcome == "pass", result.message


def test_numeric_formatting_example_from_the_issue() -> None:
    for written in ["25587", "25,587", "25587.0"]:
        assert numeric(written, 25587, accept_thousands_separators=True).passed


decimals = st.decimals(
    min_value=-(10**12), max_value=10**12, places=6, allow_nan=False, allow_infinity=False
)


@given(decimals, decimals, st.floats(min_value=0, max_value=1e6), st.floats(0, 10))
def test_numeric_is_exact_on_decimal_values(
    actual: Decimal, expected: Decimal, absolute: float, relative: float
) -> None:
    result = numeric(
        str(actual), str(expected), absolute_tolerance=absolute, relative_tolerance=relative
    )
    difference = abs(actual - expected)  # exact: at most 19 digits
    assert result.passed == (
        difference <= Decimal(repr(absolute))
        or difference <= Decimal(repr(relative)) * abs(expected)
    )


@given(decimals, decimals)
def test_numeric_percent_is_the_value_over_a_hundred(value: Decimal, other: Decimal) -> None:
    percent = f"{value}%"
    assert numeric(percent, str(value.scaleb(-2)), accept_percent=True, absolute_tolerance=0).passed
    same = value.scaleb(-2) == other
    assert numeric(percent, str(other), accept_percent=True, absolute_tolerance=0).passed == same


@given(st.lists(decimals, min_size=1, max_size=4), st.sampled_from(["first", "last"]))
def test_numeric_extracts_the_first_or_last_number(values: list[Decimal], extract: str) -> None:
    text = "values: " + "; then ".join(f"{value:f}" for value in values) + "."
    chosen = values[0] if extract == "first" else values[-1]
    assert numeric(text, str(chosen), extract=extract, absolute_tolerance=0).passed


# -- contains, not_contains, regex ------------------------------------------------------------


@given(st.text(), st.lists(st.text(min_size=1), min_size=1, max_size=5), st.booleans())
def test_contains_scores_the_fraction_found(text: str, values: list[str], folded: bool) -> None:
    options = {"values": values, "case_insensitive": folded}
    haystack = text.casefold() if folded else text
    found = [v for v in values if (v.casefold() if folded else v) in haystack]
    result = gradekit.create("contains", config=options).grade(Sample(output=text))
    assert result.score == len(found) / len(values)
    assert result.passed == (len(found) == len(values))
    any_result = gradekit.create("contains", config={**options, "mode": "any"}).grade(
        Sample(output=text)
    )
    assert any_result.passed == bool(found)
    none_result = gradekit.create("not_contains", config=options).grade(Sample(output=text))
    assert none_result.passed == (not found)


@given(st.text(), st.lists(st.text(min_size=1), min_size=1), st.data())
def test_contains_finds_values_placed_in_the_text(
    text: str, values: list[str], data: st.DataObject
) -> None:
    position = data.draw(st.integers(0, len(text)))
    placed = text[:position] + "".join(values) + text[position:]
    assert (
        gradekit.create("contains", config={"values": values}).grade(Sample(output=placed)).passed
    )


CLASSES = [r"\d+", r"\w\s\w"]
"""Patterns whose classes `re` and `regex` read differently beyond ASCII (docs/kinds.md)."""

SEPARATORS = "\x1c\x1d\x1e\x1f"
"""The ASCII characters `re` reads as `\\s` and Unicode (so `regex`) does not."""


@given(
    st.sampled_from([*CLASSES, r"^a", r"b$", r"(x|y)+"]),
    st.data(),
    st.booleans(),
)
def test_regex_agrees_with_re(pattern: str, data: st.DataObject, full: bool) -> None:
    # `\d`, `\w` and `\s` follow Unicode's properties in `regex` and `str` methods in `re`:
    # they agree on ASCII text but for the separators U+001C-U+001F, which only `re` reads as
    # `\s` (the differences have their own test below).
    ascii_only = pattern in CLASSES
    text = data.draw(
        st.text(st.characters(max_codepoint=0x7F, exclude_characters=SEPARATORS))
        if ascii_only
        else st.text()
    )
    result = gradekit.create("regex", config={"pattern": pattern, "full_match": full}).grade(
        Sample(output=text)
    )
    found = re.fullmatch(pattern, text) if full else re.search(pattern, text)
    assert result.passed == (found is not None)


@pytest.mark.parametrize(
    ("pattern", "text", "by_re", "by_gradekit"),
    [
        (r"\w", "\u00b9", True, False),  # superscript one: a digit to str.isalnum, not a word char
        (r"\w", "e\u0301", True, True),  # e and a combining accent: both find the e
        (r"^\w+$", "e\u0301", False, True),  # the accent is a word character to Unicode
        (r"\s", "\x1c", True, False),  # the file separator: str.isspace, not Unicode's space
    ],
)
def test_regex_classes_beyond_ascii_follow_unicode(
    pattern: str, text: str, by_re: bool, by_gradekit: bool
) -> None:
    result = gradekit.create("regex", config={"pattern": pattern}).grade(Sample(output=text))
    assert (re.search(pattern, text) is not None) == by_re
    assert result.passed == by_gradekit
