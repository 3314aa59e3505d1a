"""The `equality` kind: the output text equals the expected text, after optional normalisation."""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Callable
from typing import Any, ClassVar, Final, Literal

import attrs

from gradekit.core.types import GradeResult, Sample, bounded, well_formed
from gradekit.graders.results import QUOTE_LIMIT, compared_texts, quote, rebuilt

__all__ = ["Equality", "punctuation_table"]

Form = Literal["none", "nfc", "nfkc"]

_UNICODE_FORMS: Final[dict[Form, Literal["NFC", "NFKC"] | None]] = {
    "none": None,
    "nfc": "NFC",
    "nfkc": "NFKC",
}
# The forms a mismatch is checked against for its hint, weakest first (NFC-equal texts are
# NFKC-equal too), and where each option value starts in that list.
_HINT_FORMS: Final[tuple[tuple[Form, Literal["NFC", "NFKC"]], ...]] = (
    ("nfc", "NFC"),
    ("nfkc", "NFKC"),
)
_STRONGER: Final[dict[Form, int]] = {"none": 0, "nfc": 1, "nfkc": 2}

# Unicode has no punctuation (general category P*) outside planes 0 and 1: planes 2 and 3 hold
# ideographs, 14 tags and selectors, 15 and 16 private use. Scanning only 2 planes keeps the
# table's one-time build short (bench/RESULTS.md).
_SCANNED_CODE_POINTS = 0x20000


@functools.cache
def punctuation_table() -> dict[int, None]:
    """A `str.translate` table deleting every Unicode punctuation character (category P*)."""
    return {
        code: None
        for code in range(_SCANNED_CODE_POINTS)
        if unicodedata.category(chr(code)).startswith("P")
    }


@functools.cache
def _normaliser(
    form: Form, case_insensitive: bool, strip_whitespace: bool, strip_punctuation: bool
) -> Callable[[str], str] | None:
    """The text normalisation these options ask for, in their documented order; None if none.

    Cached: a grader and the hints of its mismatches share one closure per set of options.
    """
    unicode_form = _UNICODE_FORMS[form]
    others = case_insensitive or strip_whitespace or strip_punctuation
    if unicode_form is None and not others:
        return None
    table = punctuation_table() if strip_punctuation else None

    def normalise(text: str) -> str:
        if unicode_form is not None:
            text = unicodedata.normalize(unicode_form, text)
        if case_insensitive:
            text = text.casefold()
        if strip_whitespace:
            text = " ".join(text.split())
        if table is not None:
            text = text.translate(table)
            if strip_whitespace:
                # Removing `-` from `a - b` leaves two spaces; with strip_whitespace on, the
                # user asked for runs of whitespace to count as one, so collapse them again.
                text = " ".join(text.split())
        if unicode_form is not None and others:
            # Casefolding, or removing a mark between a letter and its accent, can leave text
            # that is not in the form any more; normalising again keeps the comparison
            # idempotent (comparing already-normalised texts changes nothing).
            text = unicodedata.normalize(unicode_form, text)
        return text

    return normalise


@attrs.frozen
class Equality:
    """Passes when the output text equals the expected text (a YAML scalar compared as text).

    Options, applied in this order: `normalize` (Unicode NFC or NFKC; applied again after the
    others), `case_insensitive` (casefold), `strip_whitespace` (trim and collapse runs of
    whitespace to one space), `strip_punctuation` (remove Unicode punctuation). All off: the
    comparison is strict. A mismatch that a normalisation form would resolve says which one.
    No expected value gives an error result.
    """

    kind: ClassVar[str] = "equality"
    inline: ClassVar[bool] = True

    name: str = attrs.field(kw_only=True, default="equality")
    normalize: Form = attrs.field(kw_only=True, default="none")
    """nfc or nfkc: compare the texts in that Unicode normalisation form."""
    case_insensitive: bool = attrs.field(kw_only=True, default=False)
    """Compare casefolded texts (STRASSE equals straße)."""
    strip_whitespace: bool = attrs.field(kw_only=True, default=False)
    """Trim, and collapse every run of whitespace to one space."""
    strip_punctuation: bool = attrs.field(kw_only=True, default=False)
    """Remove Unicode punctuation before comparing; symbols stay."""
    _normalise: Callable[[str], str] | None = attrs.field(init=False, repr=False, eq=False)
    _applied: str = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        options = ("case_insensitive", "strip_whitespace", "strip_punctuation")
        applied = [option for option in options if getattr(self, option)]
        if self.normalize != "none":
            applied.insert(0, f"{self.normalize.upper()} normalisation")
        normalise = _normaliser(
            self.normalize, self.case_insensitive, self.strip_whitespace, self.strip_punctuation
        )
        object.__setattr__(self, "_normalise", normalise)
        object.__setattr__(self, "_applied", ", ".join(applied))

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled as its options: the normaliser is a closure, rebuilt from them."""
        return rebuilt(self)

    @bounded
    @well_formed
    def grade(self, sample: Sample) -> GradeResult:
        """Compare `sample.output` with `sample.expected` as text."""
        output = sample.output
        expected = sample.expected
        if type(output) is not str or type(expected) is not str:
            texts = compared_texts("equality", self.name, sample)
            if isinstance(texts, GradeResult):
                return texts
            output, expected = texts
        normalise = self._normalise
        if normalise is None:
            # The hot path. The message quotes both texts whole unless one is long; only then
            # do details repeat them, so nothing is lost and short grades stay cheap.
            details = None
            if len(expected) <= QUOTE_LIMIT:
                shown = repr(expected)
            else:
                shown = quote(expected)
                details = {"output": output, "expected": expected}
            if output == expected:
                message = f"output equals expected {shown}"
                return GradeResult("equality", self.name, True, 1.0, message, details)
            if len(output) <= QUOTE_LIMIT:
                got = repr(output)
            else:
                got = quote(output)
                details = {"output": output, "expected": expected}
            message = f"expected {shown}, got {got}"
            hint = self._form_hint(output, expected)
            if hint is not None:
                message = f"{message} ({hint})"
            return GradeResult("equality", self.name, False, 0.0, message, details)
        compared_output = normalise(output)
        compared_expected = normalise(expected)
        details = {"output": compared_output, "expected": compared_expected}
        if compared_output == compared_expected:
            message = (
                f"output {quote(output)} matches expected {quote(expected)} after {self._applied}"
            )
            return GradeResult("equality", self.name, True, 1.0, message, details)
        hint = self._form_hint(output, expected)
        message = (
            f"expected {quote(expected)}, got {quote(output)} (after {self._applied}: "
            f"{quote(compared_expected)} vs {quote(compared_output)}"
            f"{'' if hint is None else '; ' + hint})"
        )
        return GradeResult("equality", self.name, False, 0.0, message, details)

    def _form_hint(self, output: str, expected: str) -> str | None:
        """On a mismatch: which `normalize` form, with the other options as they are, would
        make the texts equal. Only ever run on a mismatch; ASCII texts have one form."""
        if output.isascii() and expected.isascii():
            return None
        strict = self._normalise is None
        if strict and (
            unicodedata.is_normalized("NFKC", output)
            and unicodedata.is_normalized("NFKC", expected)
        ):
            return None  # two different texts in NFKC, hence in NFC too: no form joins them
        for form, unicode_form in _HINT_FORMS[_STRONGER[self.normalize] :]:
            if strict and (
                unicodedata.is_normalized(unicode_form, output)
                and unicodedata.is_normalized(unicode_form, expected)
            ):
                continue  # two different texts already in this form
            normalise = _normaliser(
                form, self.case_insensitive, self.strip_whitespace, self.strip_punctuation
            )
            if normalise is not None and normalise(output) == normalise(expected):
                return f"equal after {unicode_form} normalisation; set normalize: {form}"
        return None
