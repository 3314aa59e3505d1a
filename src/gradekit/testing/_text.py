"""Strategies for the texts agents answer: awkward unicode, and numbers written every way.

`texts()` aims at what breaks text graders: the empty string, very long answers, control and
format characters, and one word in several Unicode normalisation forms. `numbers_as_text()`
aims at what breaks number parsing: signs, separators, exponents, percentages and look-alikes.
"""

from __future__ import annotations

import functools
import unicodedata
from typing import Final, Literal

from hypothesis import strategies as st

__all__ = ["HUGE_TEXT_SIZE", "numbers_as_text", "texts"]

HUGE_TEXT_SIZE: Final = 100_000
"""About how many characters a "huge" text from `texts()` has."""

# Characters with canonical or compatibility decompositions, and combining marks, so the
# same word can be written in NFC, NFD, NFKC and NFKD and still look the same.
_COMPOSABLE: Final = "eéèêAÅåñçöüÿǅﬁ①½ｱ가각ḱṩΩΩ\u0301\u0308\u0327 "
_Form = Literal["NFC", "NFD", "NFKC", "NFKD"]
_FORMS: Final[tuple[_Form, ...]] = ("NFC", "NFD", "NFKC", "NFKD")


# A small vocabulary, so outputs and expected texts share words, and repeat them.
_WORDS: Final = ("the", "a", "is", "Paris", "paris", "42", "0", "yes", "no", "I", "cannot", "é")


def _repeated(text: str) -> str:
    return text * (HUGE_TEXT_SIZE // len(text) + 1)


def _mixed_forms() -> st.SearchStrategy[str]:
    part = st.tuples(st.text(st.sampled_from(_COMPOSABLE), max_size=8), st.sampled_from(_FORMS))
    return st.lists(part, min_size=1, max_size=4).map(
        lambda parts: "".join(unicodedata.normalize(form, text) for text, form in parts)
    )


@functools.cache
def texts(*, huge: bool = True) -> st.SearchStrategy[str]:
    """Texts that break text graders: any unicode, the empty string, huge texts, control and
    format characters, whitespace-only texts, mixed normalisation forms (the same word in NFC
    and NFD), and sentences of a few common words (which outputs and expected texts share).
    `huge=False` leaves out the texts of about `HUGE_TEXT_SIZE` characters."""
    choices = [
        st.text(),
        st.just(""),
        st.text(st.characters(categories=["Cc", "Cf", "Zl", "Zp"]), max_size=10),
        st.text(st.sampled_from(" \t\n\r\x0b\x0c\u00a0\u2028\u3000\ufeff"), max_size=6),
        _mixed_forms(),
        st.text(st.characters(codec="ascii"), max_size=30),
        st.lists(st.sampled_from(_WORDS), max_size=8).map(" ".join),
    ]
    if huge:
        choices.append(st.text(min_size=1, max_size=8).map(_repeated))
    return st.one_of(choices)


_SIGNS: Final = ("", "", "+", "-", "\u2212")
_SEPARATORS: Final = (",", "_", "\u00a0", "\u202f", "'", " ", ".")
# Texts that look like numbers, or nearly: each one has broken some parser somewhere.
_EDGE_CASES: Final = (
    "0",
    "-0",
    "0.0",
    ".5",
    "5.",
    "-.5e-3",
    "1e999999",
    "1e-999999",
    "NaN",
    "nan",
    "inf",
    "-Infinity",
    "∞",
    "1,000.5",
    "1.000,5",
    "1,00,000",
    "١٢٣",
    "\uff11\uff12\uff13",  # fullwidth digits
    "$1,234.56",
    "(42)",
    "42 %",
    "0x1F",
    "1_000",
    "--1",
    "+-1",
    "1e",
    "e5",
    "",
    " ",
    "%",
)


@st.composite
def _written_number(draw: st.DrawFn) -> str:
    integer = draw(st.integers(min_value=0, max_value=10**18))
    text = str(integer)
    if draw(st.booleans()):
        separator = draw(st.sampled_from(_SEPARATORS))
        text = f"{integer:,}".replace(",", separator)
    if draw(st.booleans()):
        text += "." + draw(st.from_regex(r"\A[0-9]{1,8}\Z"))
    if draw(st.booleans()):
        sign = draw(st.sampled_from(_SIGNS))
        text += draw(st.sampled_from("eE")) + sign + str(draw(st.integers(0, 400)))
    if draw(st.booleans()):
        text += draw(st.sampled_from(("%", " %", "\u00a0%")))
    return draw(st.sampled_from(_SIGNS)) + text


@functools.cache
def numbers_as_text() -> st.SearchStrategy[str]:
    """Numbers as an agent writes them: integers, decimals, exponents (`1e-6`, `2E+10`),
    percentages, thousands separators (`,` `_` `'`, no-break and thin spaces), signs
    (`+`, `-`, the minus sign `\u2212`), sometimes with surrounding text or whitespace, plus
    edge cases such as `NaN`, `1e999999`, `1.000,5` and non-ASCII digits."""
    plain = st.one_of(
        st.integers().map(str),
        st.decimals(allow_nan=False, allow_infinity=False).map(str),
        st.floats(allow_nan=False, allow_infinity=False).map(repr),
        _written_number(),
        st.sampled_from(_EDGE_CASES),
    )
    padded = st.tuples(st.sampled_from(("", " ", "\n", "\t")), plain, st.sampled_from(("", " ")))
    worded = st.tuples(st.sampled_from(("The answer is ", "≈ ", "Total: ")), plain)
    return st.one_of(
        plain,
        padded.map("".join),
        worded.map(lambda parts: parts[0] + parts[1] + "."),
    )
