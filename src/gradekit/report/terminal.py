"""What the console may draw on a stream: the one place that decides colour, the live bar and
how often plain progress lines come.

- Colour (ANSI escape codes) when the stream is a terminal (and `TERM` is not `dumb`); never
  when `NO_COLOR` is set to a non-empty value (https://no-color.org), which wins over
  everything; `FORCE_COLOR` set to a non-empty value other than `0` forces it, on a pipe too
  (CI logs that render ANSI).
- Tables drawn (by rich, when installed) on a terminal, or where colour is forced; a pipe or
  a file gets aligned plain text (`gradekit.report.console`).
- A live progress bar only on a terminal, and not when `CI` is set to a true value (`true`,
  `1`, `yes`, `on`): CI logs keep every redraw, so they get a plain line every few seconds.
- Plain lines every `GRADEKIT_PROGRESS_INTERVAL` seconds (default 5).
"""

from __future__ import annotations

import os
from typing import Any, Final, TextIO

__all__ = [
    "PROGRESS_INTERVAL",
    "STYLES",
    "colour",
    "draws_bar",
    "draws_tables",
    "in_ci",
    "paint",
    "progress_interval",
    "rich_console",
    "rich_installed",
]

PROGRESS_INTERVAL: Final = 5.0
"""Seconds between plain progress lines, unless GRADEKIT_PROGRESS_INTERVAL says otherwise."""

STYLES: Final = {"pass": "green", "fail": "red", "error": "yellow"}
"""Each outcome's colour, by its rich style name."""

_ANSI: Final = {"pass": "32", "fail": "31", "error": "33"}


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no such method, or a closed stream
        return False


def in_ci() -> bool:
    """Whether `CI` is set to a true value."""
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes", "on"}


def draws_bar(stream: TextIO) -> bool:
    """Whether progress on `stream` is a live bar (a terminal, outside CI) rather than lines."""
    return _isatty(stream) and not in_ci()


def draws_tables(stream: TextIO) -> bool:
    """Whether tables on `stream` are drawn (by rich) rather than written as aligned plain
    text: on a terminal, or on a pipe when colour is forced (`FORCE_COLOR`)."""
    return _isatty(stream) or colour(stream)


def colour(stream: TextIO) -> bool:
    """Whether text written to `stream` may carry colour (see the module's rules)."""
    if os.environ.get("NO_COLOR", ""):
        return False
    forced = os.environ.get("FORCE_COLOR", "")
    if forced and forced != "0":
        return True
    return _isatty(stream) and os.environ.get("TERM", "") != "dumb"


def paint(text: str, outcome: str, enabled: bool) -> str:
    """`text` in the colour of `outcome` (`pass`, `fail`, `error`) when `enabled`."""
    code = _ANSI.get(outcome)
    if not enabled or code is None:
        return text
    return f"\x1b[{code}m{text}\x1b[0m"


def progress_interval() -> float:
    """Seconds between plain progress lines: GRADEKIT_PROGRESS_INTERVAL when it is a positive
    number, else PROGRESS_INTERVAL."""
    try:
        seconds = float(os.environ.get("GRADEKIT_PROGRESS_INTERVAL", ""))
    except ValueError:
        return PROGRESS_INTERVAL
    return seconds if seconds > 0 else PROGRESS_INTERVAL


def rich_installed() -> bool:
    """Whether rich (the `cli` extra) can be imported: it draws the bar and the tables."""
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


def rich_console(stream: TextIO) -> Any:
    """A rich Console on `stream` that colours (and styles) exactly when `colour` says so."""
    from rich.console import Console

    coloured = colour(stream)
    return Console(
        file=stream,
        highlight=False,
        color_system="auto" if coloured else None,
        force_terminal=True if coloured and not _isatty(stream) else None,
    )
