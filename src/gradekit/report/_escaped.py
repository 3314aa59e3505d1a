"""Text made safe for a terminal or a CI log: the one rule, kept apart so the tables need
nothing else."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["escaped"]

# C0 controls (ESC, NUL, a newline), DEL and the C1 controls (U+0080-U+009F: U+009B is a
# one-character CSI on some terminals); the bidi controls a "Trojan Source" text hides behind
# (embeddings and overrides U+202A-U+202E, isolates U+2066-U+2069, the marks U+200E, U+200F
# and U+061C); and the line and paragraph separators U+2028, U+2029, which split a line.
_HIDDEN: Final = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    return repr(match[0])[1:-1]  # `\x1b`, `\n`, `\x00`, `\u202e`


def escaped(text: str) -> str:
    """`text` for a terminal or a CI log: as written, but each control character (ESC, NUL,
    a newline, DEL, a C1 control) and each bidi control (U+202E, U+2066...) as its escape
    (`\\x1b`, `\\u202e`), so a name or a message can neither drive the terminal (`\\x1b[2J`
    clears it), nor reorder what is shown (U+202E reverses the rest of the line), nor split a
    line of a table or a list. Every text gradekit did not write itself goes through it on
    its way to a terminal or a GitHub workflow command."""
    return _HIDDEN.sub(_escape, text) if _HIDDEN.search(text) else text
