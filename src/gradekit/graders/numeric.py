"""The `numeric` kind: the number in the output is within a tolerance of the expected number.

Numbers are read as `decimal.Decimal` from the text as written, so `1.1` against `1` with an
absolute tolerance of `0.1` passes (binary floats would say 0.10000000000000009 > 0.1).

Also owns the grammar of a number in text (`number_patterns`): regular expressions built for
the options (thousands separators, percentages) and compiled on first use. The usual grade, two
plain numbers such as `-12.5`, needs none of them (read on a plain path), so a grader is
created without compiling any, which shortens the first `create` (bench/RESULTS.md).
"""

from __future__ import annotations

import decimal
import functools
import math
import re
import unicodedata
from decimal import Decimal
from typing import Any, ClassVar, Final, Literal

import attrs

from gradekit.core.errors import OptionError
from gradekit.core.types import GradeResult, Sample, bounded, well_formed
from gradekit.graders.results import QUOTE_LIMIT, compared_texts, data_error, quote

__all__ = ["SEPARATORS", "VULGAR_FRACTIONS", "Numeric", "number_patterns"]


SEPARATORS: Final = ",_\u00a0\u2007\u202f"
"""Thousands separators read with accept_thousands_separators: `,` `_` and the no-break spaces."""

VULGAR_FRACTIONS: Final = "¼½¾⅐⅑⅒⅓⅔⅕⅖⅗⅘⅙⅚⅛⅜⅝⅞↉"
"""The vulgar fractions read as numbers, alone (`½`) or after digits (`2½`)."""

_NEVER: Final = "(?!)"  # a group that never matches, so every pattern has the same groups
_POINT: Final = "[.\uff0e\u066b]"  # `.`, the full-width point and the Arabic decimal separator
_SIGN: Final = "[+\\-\u2212\uff0b\uff0d]"  # and the minus sign, full-width plus and minus
# `\d` is any decimal digit (Unicode category Nd): full-width, Arabic-Indic, Devanagari...


def _number_pattern(separators: bool, percent: bool, fraction: str, *, inside: bool) -> str:
    """The regular expression of one number, with groups `number`, `sep` and `percent`.

    Inside text, a number is taken whole or not at all (an atomic group): a number followed by
    a letter, a digit, `_` or a point and a digit is no number (`42abc`, `0x1F`, `12.5.3`).
    """
    plain = rf"\d+(?:{fraction})?|{_POINT}\d+"
    if separators:
        grouped = rf"\d{{1,3}}(?P<sep>[{SEPARATORS}])\d{{3}}(?:(?P=sep)\d{{3}})*(?:{fraction})?"
        body = f"{grouped}|{plain}"
    else:
        body = f"(?P<sep>{_NEVER})?{plain}"
    number = rf"{_SIGN}?(?:\d*[{VULGAR_FRACTIONS}]|(?:{body})(?:[eE][+\-]?\d+)?)"
    if inside:
        number = rf"(?>{number})(?!\w|{_POINT}\d)"
    percent_sign = r"[ \u00a0\u202f]?[%\uff05\u066a]" if percent else _NEVER
    return rf"(?P<number>{number})(?P<percent>{percent_sign})?"


@functools.cache
def number_patterns(separators: bool, percent: bool) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(whole-text pattern, pattern finding numbers inside text) for these options, compiled
    once, on first use. Both have the groups `number`, `sep` and `percent`."""
    # A whole text may end its number with a dot (`42.`); inside text that dot ends a sentence.
    whole = _number_pattern(separators, percent, rf"{_POINT}\d*", inside=False)
    inside = _number_pattern(separators, percent, rf"{_POINT}\d+", inside=True)
    # Inside text, a number does not start in the middle of a word or of another number.
    return re.compile(whole), re.compile(rf"(?<![\w.\uff0e\u066b]){inside}")


# Differences are exact up to this many significant digits; beyond, they are rounded. The
# exponent range is the widest Decimal allows, so no text that parses can overflow.
_CONTEXT: Final = decimal.Context(
    prec=1000,
    Emax=decimal.MAX_EMAX,
    Emin=decimal.MIN_EMIN,
    traps=[decimal.InvalidOperation, decimal.Overflow],
)
# Numbers beyond 10**±LIMIT are refused, so no difference or product can overflow.
_EXPONENT_LIMIT: Final = 10**9
_PLAIN_CHARACTERS: Final = "0123456789.-"
_ZERO: Final = Decimal(0)
_read_plain: Final = _CONTEXT.create_decimal  # exact for a text of at most `prec` digits
_subtract: Final = _CONTEXT.subtract
_LETTER: Final = r"[^\W\d_]"
_NOT_FINITE: Final = r"[+\-\u2212]?(?:nan|inf(?:inity)?|∞)%?"
# Digits glued to a letter or to a second point and digits: why `extract` found no number.
_GLUED: Final = rf"\d(?:[^\W\d]|{_POINT}\d+{_POINT}\d)"


class _Unreadable(Exception):
    """A text that holds no number this grader can read; the message says why."""


# Written forms that Decimal does not read, as the ones it does.
_ASCII_FORMS: Final = str.maketrans("\u2212\uff0b\uff0d\uff0e\u066b", "-+-..")
# A vulgar fraction that does not end (`⅓`) is read to this many significant digits.
_FRACTION_CONTEXT: Final = decimal.Context(prec=28)


def _fraction(sign: str, whole: str, vulgar: str) -> Decimal:
    """The value of `2½`: the digits before the vulgar fraction plus the fraction."""
    numerator, denominator = unicodedata.normalize("NFKD", vulgar).split("\u2044")
    part = _FRACTION_CONTEXT.divide(Decimal(numerator), Decimal(denominator))
    value = _CONTEXT.add(Decimal(whole or 0), part)
    return -value if sign == "-" else value


def _value(match: re.Match[str]) -> Decimal:
    """The exact value of a matched number (separators removed, percent scaled)."""
    text, separator, percent = match.groups()
    if separator:
        text = text.replace(separator, "")
    text = text.translate(_ASCII_FORMS)
    try:
        if text[-1] in VULGAR_FRACTIONS:
            sign = text[0] if text[0] in "+-" else ""
            value = _fraction(sign, text[len(sign) : -1], text[-1])
        else:
            value = _CONTEXT.create_decimal(text)
        if percent:
            sign, digits, exponent = value.as_tuple()
            value = Decimal((sign, digits, int(exponent) - 2))
    except decimal.DecimalException:
        value = None
    if value is None or (value and abs(value.adjusted()) > _EXPONENT_LIMIT):
        raise _Unreadable(f"{quote(match[0])} is too large or too small to compare")
    return value


def _details(
    output_number: str,
    expected_number: str,
    output: str,
    expected: str,
    *,
    difference: str,
    allowed: str,
) -> dict[str, str]:
    """A grade's details: the difference and what was allowed, and the two numbers as read
    (exact decimal text) when either is not the very text it was read from (a percentage,
    separators, a number found in words, other digits): the sample and the message hold
    those texts already, as `equality` repeats its texts only when its message cuts them."""
    if output_number == output and expected_number == expected:
        return {"difference": difference, "allowed": allowed}
    return {
        "output": output_number,
        "expected": expected_number,
        "difference": difference,
        "allowed": allowed,
    }


def _signed_plain(text: str) -> bool:
    """True for `-` then a plain number: ASCII digits with at most one `.` among them (`12`,
    `.5`, `5.`), which Decimal reads exactly, as written. `grade` tests unsigned ones inline."""
    return text[:1] == "-" and text[1:].replace(".", "", 1).isdecimal() and text.isascii()


def _show(value: Decimal) -> str:
    """A Decimal as people write it (`0.5`, `10`, `0`): plain digits unless it is extreme."""
    if not value:
        return "0"
    text = str(value)
    if "E" in text:  # `1E+3`, `1E-7`: written out unless the exponent is extreme
        value = value.normalize(_CONTEXT)
        text = f"{value:f}" if -20 < value.adjusted() < 21 else str(value)
    return text


def _non_negative(_: Any, attribute: attrs.Attribute[float], value: float) -> None:
    if not 0 <= value < math.inf:  # also rejects NaN; an infinite tolerance passes anything
        raise OptionError(
            attribute.name,
            f"must be a finite number >= 0, got {value!r}; use 0 or a positive tolerance",
        )


@attrs.frozen
class Numeric:
    """Passes when the output's number is within a tolerance of the expected number.

    Passes when `|a - e| <= absolute_tolerance` or `|a - e| <= relative_tolerance * |e|`
    (inclusive), computed exactly on the decimal values as written. `extract` says where the
    number is: `whole` (the whole trimmed text), `first`, `last`, `only` (exactly one number
    in the text) or `any` (the number closest to the expected one). Text that holds no
    readable number gives an error result naming the option that would read it, when one
    would. What a number is: docs/kinds.md, "numeric".
    """

    kind: ClassVar[str] = "numeric"
    inline: ClassVar[bool] = True

    name: str = attrs.field(kw_only=True, default="numeric")
    absolute_tolerance: float = attrs.field(kw_only=True, default=1e-6, validator=_non_negative)
    """The largest allowed difference (>= 0)."""
    relative_tolerance: float = attrs.field(kw_only=True, default=0.0, validator=_non_negative)
    """The largest allowed difference as a fraction of the expected value (>= 0)."""
    accept_percent: bool = attrs.field(kw_only=True, default=False)
    """Read 14.14% (or 14.14 %) as 0.1414."""
    accept_thousands_separators: bool = attrs.field(kw_only=True, default=False)
    """Read 25,587, 25_587 and no-break spaces as thousands separators."""
    extract: Literal["whole", "first", "last", "only", "any"] = attrs.field(
        kw_only=True, default="whole"
    )
    """Where the number is: whole, first, last, only, or any (the closest passes)."""
    _absolute: Decimal = attrs.field(init=False, repr=False, eq=False)
    _relative: Decimal = attrs.field(init=False, repr=False, eq=False)
    _shown_absolute: str = attrs.field(init=False, repr=False, eq=False)
    _whole_text: bool = attrs.field(init=False, repr=False, eq=False)
    _plain_path: bool = attrs.field(init=False, repr=False, eq=False)
    _allowed_end: str = attrs.field(init=False, repr=False, eq=False)
    _no_difference: str = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        # repr() is the shortest text of the float: the tolerance the user wrote, `0.1` not
        # 0.1000000000000000055511151231257827.
        object.__setattr__(self, "_absolute", Decimal(repr(self.absolute_tolerance)))
        object.__setattr__(self, "_relative", Decimal(repr(self.relative_tolerance)))
        object.__setattr__(self, "_shown_absolute", _show(self._absolute))
        object.__setattr__(self, "_whole_text", self.extract == "whole")
        object.__setattr__(self, "_plain_path", self._whole_text and not self._relative)
        # The ends of the plain path's messages, the same for every grade.
        object.__setattr__(self, "_allowed_end", f"; allowed {self._shown_absolute})")
        object.__setattr__(self, "_no_difference", f" (off by 0{self._allowed_end}")

    @bounded
    @well_formed
    def grade(self, sample: Sample) -> GradeResult:
        """Read one number from the output and one from the expected value, and compare them."""
        output = sample.output
        if type(output) is str and self._plain_path and len(output) <= QUOTE_LIMIT:
            # The usual case, two short plain numbers (`_signed_plain`), the expected one maybe
            # a YAML int (always plain; not a bool) or float (plain without an exponent): read
            # exactly (fewer digits than _CONTEXT's precision) without the number grammar and
            # quoted as quote() does. Its results are `_graded`'s, as a property test holds.
            expected = sample.expected
            kind = type(expected)
            if kind is str:
                expected_text = expected
            elif kind is int or kind is float:
                try:
                    expected_text = str(expected)  # as_text's
                except ValueError:  # an integer past str's digits: as_text writes it
                    return self._graded(sample)
            else:
                return self._graded(sample)
            if output == expected_text:  # the usual passing case: nothing to compute
                if (
                    kind is int
                    or (output.replace(".", "", 1).isdecimal() and output.isascii())
                    or _signed_plain(output)
                ):
                    details = _details(
                        output, output, output, output, difference="0", allowed=self._shown_absolute
                    )
                    message = f"got '{output}', expected '{output}'{self._no_difference}"
                    return GradeResult("numeric", self.name, True, 1.0, message, details)
            elif (
                len(expected_text) <= QUOTE_LIMIT
                and (
                    kind is int
                    or (expected_text.replace(".", "", 1).isdecimal() and expected_text.isascii())
                    or _signed_plain(expected_text)
                )
                and (
                    (output.replace(".", "", 1).isdecimal() and output.isascii())
                    or _signed_plain(output)
                )
            ):
                actual = _read_plain(output)
                number = _read_plain(expected_text)
                if actual > number:
                    difference = _subtract(actual, number)
                elif actual < number:
                    difference = _subtract(number, actual)
                else:
                    difference = _ZERO
                if difference is _ZERO:
                    shown_difference = "0"
                    passed = True
                else:
                    shown_difference = str(difference)  # not zero: _show only for an exponent
                    if "E" in shown_difference:
                        shown_difference = _show(difference)
                    passed = difference <= self._absolute
                details = _details(
                    output,
                    expected_text,
                    output,
                    expected_text,
                    difference=shown_difference,
                    allowed=self._shown_absolute,
                )
                if passed:
                    message = (
                        f"got '{output}', expected '{expected_text}' "
                        f"(off by {shown_difference}{self._allowed_end}"
                    )
                    return GradeResult("numeric", self.name, True, 1.0, message, details)
                message = (
                    f"expected '{expected_text}', got '{output}' "
                    f"(off by {shown_difference}{self._allowed_end}"
                )
                return GradeResult("numeric", self.name, False, 0.0, message, details)
        return self._graded(sample)

    def _graded(self, sample: Sample) -> GradeResult:
        """`grade` for any sample: any texts, YAML values and options."""
        output = sample.output
        expected_text = sample.expected
        expected = None
        if (
            self._whole_text
            and type(output) is str
            and type(expected_text) is str
            and not expected_text.strip(_PLAIN_CHARACTERS)
            and (output == expected_text or not output.strip(_PLAIN_CHARACTERS))
        ):
            # The usual case, two plain numbers such as `-12.5`: read without the number
            # grammar, and the same text (the usual passing case) checked and read once.
            try:
                expected = _CONTEXT.create_decimal(expected_text)
                actual = expected if output == expected_text else _CONTEXT.create_decimal(output)
            except decimal.InvalidOperation:
                expected = None  # `1-2`, `.`, empty: the general path says why
            else:
                got = actual_value = output
                expected_value = expected_text
        if expected is None:
            if type(output) is not str or type(expected_text) is not str:
                texts = compared_texts("numeric", self.name, sample)
                if isinstance(texts, GradeResult):
                    return texts
                output, expected_text = texts
            try:
                expected, expected_value, actual, got, actual_value = self._read(
                    output, expected_text
                )
            except _Unreadable as error:
                return data_error("numeric", self.name, str(error), {"output": output})
        if actual == expected:  # exact, and the usual passing case: no subtraction needed
            difference = _ZERO
            shown_difference = "0"
            passed = True
        else:
            difference = _CONTEXT.subtract(actual, expected).copy_abs()
            shown_difference = str(difference)  # not zero: _show only for an exponent
            if "E" in shown_difference:
                shown_difference = _show(difference)
            passed = difference <= self._absolute
        shown_allowed = self._shown_absolute
        if self._relative:
            relative = _CONTEXT.multiply(self._relative, expected.copy_abs())
            if relative > self._absolute:
                shown_allowed = _show(relative.normalize(_CONTEXT))
            passed = passed or difference <= relative
        details = _details(
            actual_value,
            expected_value,
            output,
            expected_text,
            difference=shown_difference,
            allowed=shown_allowed,
        )
        # quote() inlined for short texts: this runs once per grade.
        got = repr(got) if len(got) <= QUOTE_LIMIT else quote(got)
        wanted = repr(expected_text) if len(expected_text) <= QUOTE_LIMIT else quote(expected_text)
        if passed:
            message = (
                f"got {got}, expected {wanted} (off by {shown_difference}; allowed {shown_allowed})"
            )
            return GradeResult("numeric", self.name, True, 1.0, message, details)
        if self.extract == "any":
            got = f"no number within the tolerance, the closest {got}"
        message = (
            f"expected {wanted}, got {got} (off by {shown_difference}; allowed {shown_allowed})"
        )
        return GradeResult("numeric", self.name, False, 0.0, message, details)

    def _read(self, output: str, expected_text: str) -> tuple[Decimal, str, Decimal, str, str]:
        """(expected, its text, output number, its text as found, its value text).

        Raises _Unreadable when either text holds no number this grader reads.
        """
        # Most texts are plain numbers such as `-12.5`: try them without the full grammar
        # (a text of only these characters is either a plain number or refused here).
        expected = None
        if not expected_text.strip(_PLAIN_CHARACTERS):
            try:
                expected = _CONTEXT.create_decimal(expected_text)
                expected_value = expected_text
            except decimal.InvalidOperation:
                pass
        if expected is None:
            match = self._patterns()[0].fullmatch(expected_text.strip())
            if match is None:
                raise _Unreadable(
                    "expected value " + self._unreadable(expected_text, inside_hint=False)
                )
            expected = _value(match)
            expected_value = str(expected)
        actual = None
        if self._whole_text and not output.strip(_PLAIN_CHARACTERS):
            try:
                actual = _CONTEXT.create_decimal(output)
                got = actual_value = output
            except decimal.InvalidOperation:
                pass
        if actual is None:
            if self.extract == "any":
                actual, got = self._closest(output, expected)
            else:
                match = self._find(output)
                actual = _value(match)
                got = match[0]
            actual_value = str(actual)
        return expected, expected_value, actual, got, actual_value

    def _closest(self, text: str, expected: Decimal) -> tuple[Decimal, str]:
        """(value, text as found) of the number in `text` closest to `expected` (the first of
        equals), for `extract: any`; raise _Unreadable when the text holds none."""
        best: tuple[Decimal, Decimal, str] | None = None
        unreadable = None
        for match in self._patterns()[1].finditer(text):
            try:
                value = _value(match)
            except _Unreadable as error:  # too large: another number may still be the one
                unreadable = error
                continue
            difference = _CONTEXT.subtract(value, expected).copy_abs()
            if best is None or difference < best[0]:
                best = (difference, value, match[0])
        if best is None:
            raise unreadable or _Unreadable(self._no_number(text))
        return best[1], best[2]

    def _patterns(self) -> tuple[re.Pattern[str], re.Pattern[str]]:
        """(whole-text pattern, pattern finding numbers inside text) for this grader's
        options, compiled on first use (`number_patterns`)."""
        return number_patterns(bool(self.accept_thousands_separators), bool(self.accept_percent))

    def _find(self, text: str) -> re.Match[str]:
        """The match of the number `extract` selects in `text`, or raise _Unreadable."""
        extract = self.extract
        if extract == "whole":
            match = self._patterns()[0].fullmatch(text.strip())
            if match is None:
                raise _Unreadable(self._unreadable(text, inside_hint=True))
            return match
        if extract == "first":
            match = self._patterns()[1].search(text)
            if match is None:
                raise _Unreadable(self._no_number(text))
            return match
        matches = list(self._patterns()[1].finditer(text))
        if not matches:
            raise _Unreadable(self._no_number(text))
        if extract == "only" and len(matches) > 1:
            found = ", ".join(item[0] for item in matches[:5])
            more = ", ..." if len(matches) > 5 else ""
            raise _Unreadable(
                f"expected exactly one number in {quote(text)}, found {len(matches)} "
                f"({found}{more}); set extract: first or last to pick one"
            )
        return matches[-1]

    @staticmethod
    def _no_number(text: str) -> str:
        """Why `extract` found no number in `text`, saying so when digits are glued to letters
        or to a further point and digits (`42abc`, `1.2.3`), which are not numbers."""
        if re.search(_GLUED, text):
            return (
                f"no number in {quote(text)} (digits followed by letters or by another "
                "point and digits, as in 42abc or 1.2.3, are not numbers)"
            )
        return f"no number in {quote(text)}"

    def _unreadable(self, text: str, *, inside_hint: bool) -> str:
        """Why `text` is not one number, naming the option that would read it if one would."""
        stripped = text.strip()
        lenient_whole, lenient_inside = number_patterns(True, True)
        lenient = lenient_whole.fullmatch(stripped)
        if lenient is not None:
            options = []
            if lenient["percent"] and not self.accept_percent:
                options.append(("accept_percent", "percentages"))
            if lenient["sep"] and not self.accept_thousands_separators:
                options.append(("accept_thousands_separators", "thousands separators"))
            if options:
                names = " and ".join(f"{option}: true" for option, _ in options)
                reads = " and ".join(what for _, what in options)
                return f"{quote(text)} is not a number; set {names} to read {reads}"
        if re.fullmatch(_NOT_FINITE, stripped, re.IGNORECASE):
            return f"{quote(text)} is not a finite number"
        if inside_hint and re.search(_LETTER, text) and lenient_inside.search(text):
            return (
                f"{quote(text)} is not a number; set extract: first, last or only "
                "to read a number inside text"
            )
        return f"{quote(text)} is not a number"
