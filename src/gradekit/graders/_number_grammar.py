"""The grammar of a number in text, as the `numeric` kind reads it: regular expressions built
for its options (thousands separators, percentages) and compiled on first use.

The usual grade, two plain numbers such as `-12.5`, needs none of them (`numeric` reads those
on a plain path), so a grader is created without compiling any: about 2 ms less for the first
`create` (bench/RESULTS.md).
"""

from __future__ import annotations

import functools
import re
from typing import Final

__all__ = ["SEPARATORS", "number_patterns"]

SEPARATORS: Final = ",_\u00a0\u2007\u202f"
"""Thousands separators read with accept_thousands_separators: `,` `_` and the no-break spaces."""

_NEVER: Final = "(?!)"  # a group that never matches, so every pattern has the same groups


def _number_pattern(separators: bool, percent: bool, fraction: str) -> str:
    """The regular expression of one number, with groups `number`, `sep` and `percent`."""
    plain = rf"[0-9]+(?:{fraction})?|\.[0-9]+"
    if separators:
        grouped = (
            rf"[0-9]{{1,3}}(?P<sep>[{SEPARATORS}])[0-9]{{3}}(?:(?P=sep)[0-9]{{3}})*(?:{fraction})?"
        )
        body = f"{grouped}|{plain}"
    else:
        body = f"(?P<sep>{_NEVER})?{plain}"
    percent_sign = r"[ \u00a0\u202f]?%" if percent else _NEVER
    return rf"(?P<number>[+\-\u2212]?(?:{body})(?:[eE][+\-]?[0-9]+)?)(?P<percent>{percent_sign})?"


@functools.cache
def number_patterns(separators: bool, percent: bool) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(whole-text pattern, pattern finding numbers inside text) for these options, compiled
    once, on first use. Both have the groups `number`, `sep` and `percent`."""
    # A whole text may end its number with a dot (`42.`); inside text that dot ends a sentence.
    whole = _number_pattern(separators, percent, r"\.[0-9]*")
    inside = _number_pattern(separators, percent, r"\.[0-9]+")
    # Inside text, a number does not start in the middle of a word or of another number.
    return re.compile(whole), re.compile(rf"(?<![\w.]){inside}(?![0-9])")
