"""The rules for numbers that options share, each in one place: fractions in [0, 1], and a
computed mean against its threshold."""

from __future__ import annotations

import math
import re
from typing import Final

__all__ = ["ROUNDING", "fraction_problem", "number_of", "overflow_problem", "reaches"]

ROUNDING: Final = 1e-9
"""How far below its threshold a computed mean may fall and still reach it: sums of floats
lose their last bits (three scores of 0.7 add up to 2.0999999999999996)."""


def reaches(mean: float, threshold: float) -> bool:
    """`mean >= threshold` for a mean gradekit computed (of weighted scores, of a judge's
    samples or criteria): a mean that equals the threshold but for float rounding reaches it,
    so three scores of 0.7 pass a threshold of 0.7."""
    return mean >= threshold - ROUNDING


def fraction_problem(value: float) -> str | None:
    """None for a number from 0 to 1 (a threshold, a weight share); else what is wrong with
    it, worded for an error at its key. NaN is never between 0 and 1."""
    if 0.0 <= value <= 1.0:
        return None
    return f"must be between 0 and 1, got {value!r}"


_INFINITY_WORD: Final = re.compile(r"\s*[+-]?(inf|infinity)\s*", re.IGNORECASE)


def number_of(value: object) -> float | None:
    """An option's number as a float: an int or a float (not a bool), or numeric text, since
    YAML 1.1 reads `1e-6` and `1e3` (no dot) as text; None for anything else. An int too
    large for a float, or numeric text that overflows one (`1e999`, which Python reads as
    infinity without a word), raises OverflowError; `inf` written as a word is infinity."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        if math.isinf(number) and not _INFINITY_WORD.fullmatch(value):
            raise OverflowError(f"{value!r} is too large for a float")
        return number
    return None


def overflow_problem(written: str) -> str:
    """The message for a number written as `written` that is too large for a float: Python
    reads it as infinity, which no one wrote."""
    return f"the number {written} is too large for a float (it would be infinity)"
