"""Text shared by the writers (console, Markdown, JUnit, HTML) and by the comparisons of
`gradekit.history`: `escaped` (the one rule that makes a text safe for a terminal or a CI log),
rates, points and intervals for people, a case's failing lines. Imports the report model for
its annotations only, so `escaped` costs nothing else to import."""

from __future__ import annotations

import re
from typing import Final

__all__ = [
    "duration",
    "escape_character",
    "escaped",
    "interval_text",
    "level_text",
    "one_line",
    "percent",
    "points",
    "rate_with_interval",
    "score_with_interval",
]


# C0 controls (ESC, NUL, a newline), DEL and the C1 controls (U+0080-U+009F: U+009B is a
# one-character CSI on some terminals); the bidi controls a "Trojan Source" text hides behind
# (embeddings and overrides U+202A-U+202E, isolates U+2066-U+2069, the marks U+200E, U+200F
# and U+061C); and the line and paragraph separators U+2028, U+2029, which split a line.
_HIDDEN: Final = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def escape_character(match: re.Match[str]) -> str:
    """The escape of the one character `match` found, as Python writes it in a literal
    (`\\x1b`, `\\n`, `\\x00`, `\\u202e`, `\\ud800`): the one form every writer shows a
    character in that it cannot or must not write as it is."""
    return repr(match[0])[1:-1]


def escaped(text: str) -> str:
    """`text` for a terminal or a CI log: as written, but each control character (ESC, NUL,
    a newline, DEL, a C1 control) and each bidi control (U+202E, U+2066...) as its escape
    (`\\x1b`, `\\u202e`), so a name or a message can neither drive the terminal (`\\x1b[2J`
    clears it), nor reorder what is shown (U+202E reverses the rest of the line), nor split a
    line of a table or a list. Every text gradekit did not write itself goes through it on
    its way to a terminal or a GitHub workflow command."""
    return _HIDDEN.sub(escape_character, text) if _HIDDEN.search(text) else text


def one_line(text: str, limit: int = 300) -> str:
    """`text` on one line, cut to `limit` characters with an ellipsis: each run of white
    space (newlines included) one space, every other control character its escape (`\\x1b`,
    `escaped`)."""
    flat = escaped(" ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def duration(milliseconds: float) -> str:
    """A run's duration for people: `840 ms` under a second, else `12.3 s`."""
    if milliseconds < 1000.0:
        return f"{milliseconds:.0f} ms"
    return f"{milliseconds / 1000:.1f} s"


def _tenths(share: float) -> str:
    """`share` (0 to 1) in percent to one decimal, unsigned; a share short of 1 never as 100.0
    nor one above 0 as 0.0 (99.9 and 0.1 instead): 1 failing case of 2,000 is not a run that
    passed, nor 1 passing case of 2,000 a run none of whose cases passed."""
    text = f"{share * 100:.1f}"
    if text == "100.0" and share < 1.0:
        return "99.9"
    if text == "0.0" and share > 0.0:
        return "0.1"
    return text


def percent(value: float | None) -> str:
    """A rate for people: `0.875` as `87.5%`, `0.9995` as `99.9%` (only 1 is `100.0%`),
    `0.0004` as `0.1%` (only 0 is `0.0%`); None (nothing to count) as `-`. Every report prints
    its rates with it."""
    return "-" if value is None else f"{_tenths(value)}%"


def points(change: float) -> str:
    """A change of rate in percentage points, signed, by the rule of `percent`: `-0.0005` as
    `-0.1`, `-0.9995` as `-99.9` (only no change is `+0.0`)."""
    return ("-" if change < 0 else "+") + _tenths(abs(change))


def level_text(level: float) -> str:
    """A confidence level for people: `0.95` as `95%`, `0.999` as `99.9%`."""
    return f"{round(level * 100, 6):g}%"


def interval_text(interval: tuple[float, float] | None, level: float) -> str:
    """An interval of a rate in percent: `95% CI 76.1-86.7` (empty for None)."""
    if interval is None:
        return ""
    return f"{level_text(level)} CI {_tenths(interval[0])}-{_tenths(interval[1])}"


def rate_with_interval(
    rate: float | None, interval: tuple[float, float] | None, level: float
) -> str:
    """A rate and its interval, as every report shows the pass rate: `82.0% (95% CI
    76.1-86.7)`; the rate alone when it has no interval."""
    shown = interval_text(interval, level)
    return percent(rate) if not shown else f"{percent(rate)} ({shown})"


def score_with_interval(
    mean: float | None, interval: tuple[float, float] | None, level: float
) -> str:
    """A mean score and its interval: `0.500 (95% CI 0.095-0.905)`; `-` for no score."""
    if mean is None:
        return "-"
    if interval is None:
        return f"{mean:.3f}"
    return f"{mean:.3f} ({level_text(level)} CI {interval[0]:.3f}-{interval[1]:.3f})"
